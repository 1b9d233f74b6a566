import CFFmpeg
import ReelCore
import ReelKernels

/// Turns decoded frames of one source into the compositor's working format — 8-bit
/// limited-range Y'CbCr 4:2:0 in the output's colour space (`OutputColour`) — reading each
/// frame as it is tagged (its own tags, else its stream's, else guessed: `ColourTags.resolved`).
///
/// Three paths, by what the frame needs:
/// - the same gamut and SDR gamma as the output (the common case: an HD BT.709 clip in a
///   BT.709 edit): the layout changes (depth, range, chroma) through swscale, which for Y'CbCr
///   to Y'CbCr applies no matrix; another matrix (an SD BT.601 clip in a BT.709 edit) is then
///   changed block by block by `YCbCrRecode`: exact for chroma, which a matrix change maps
///   block by block, with no chroma resampled twice (zimg's 4:2:0 → 4:4:4 → 4:2:0 blurs
///   colour edges) and a few times cheaper;
/// - another wide gamut, or R'G'B' (stills): zimg converts matrix, range,
///   primaries and transfer in one graph (formats zimg cannot read are first unpacked to
///   planar by swscale, without a colour change);
/// - PQ or HLG into an SDR output: zimg to linear light in the output's primaries, the
///   `ToneMapKernel`, then zimg to the output's Y'CbCr — the computation of ffmpeg's
///   `zscale=t=linear:npl=100,zscale=p=…,tonemap=…,zscale=t=…:m=…:r=tv`.
///
/// SD primaries count as BT.709's and the SDR video transfers (BT.709, BT.601, BT.2020, sRGB)
/// as one another (`ColourPrimaries.gamut`, `TransferFunction.isVideoGamma`): their code values
/// are kept, as players show them alike. Used from one thread at a time; keeps its graphs
/// and buffers between frames.
final class SourceColourConverter {
    let output: OutputColour
    /// The stream's own tags, for what frames leave unsaid.
    private let streamTags: ColourTags
    private let swscale = PixelConverter()
    private let unpacker = PixelConverter()
    private var unpacked = Frame()
    private var graphs: [GraphKey: ZimgGraph] = [:]
    private var linear: LinearPlanes?
    private var linearInOutputGamut: LinearPlanes?
    private var toneMapper: (peak: Double, weights: YCbCrMatrix?, kernel: ToneMapKernel)?
    /// 4:4:4 planes for outputs of odd size (zimg's 4:2:0 needs even sizes): swscale then
    /// subsamples them.
    private var oddSized: YUVImage444?

    private struct GraphKey: Hashable { let source: ZimgFormat; let destination: ZimgFormat }

    init(output: OutputColour, streamTags: ColourTags = ColourTags()) {
        self.output = output
        self.streamTags = streamTags
    }

    /// The colour space a frame is read in.
    func colour(of frame: UnsafeMutablePointer<AVFrame>) -> ColourSpace {
        let format = AVPixelFormat(rawValue: frame.pointee.format)
        let traits = PixelFormatTraits(format)
        return ColourTags(frame: frame).filled(from: streamTags)
            .resolved(height: Int(frame.pointee.height), rgb: traits?.isRGB ?? false, fullRangeFormat: isFullRangeFormat(format))
    }

    /// Converts `frame` into a `YUVImage` (with alpha when the frame has alpha), written over
    /// `old` when it has the right size and kind (the caller makes sure nobody else holds it).
    func image(from frame: UnsafeMutablePointer<AVFrame>, reusing old: YUVImage? = nil, context what: @autoclosure () -> String) throws -> YUVImage {
        let f = frame.pointee
        let format = AVPixelFormat(rawValue: f.format)
        guard let traits = PixelFormatTraits(format) else {
            throw MediaError(code: .invalidArgument, message: "unknown pixel format \(f.format)", context: what())
        }
        let width = Int(f.width), height = Int(f.height)
        let image: YUVImage
        if let old, old.width == width, old.height == height, old.hasAlpha == traits.hasAlpha {
            image = old
        } else {
            image = YUVImage(width: width, height: height, hasAlpha: traits.hasAlpha)
        }
        let source = colour(of: frame)
        let target = output.space
        if !traits.isRGB, source.primaries.gamut == target.primaries.gamut,
           source.transfer == target.transfer || (source.transfer.isVideoGamma && target.transfer.isVideoGamma),
           source.matrix.lumaWeights != nil {
            try swscale.convert(from: PixelConverter.Planes(frame: frame), format: format, fullRange: source.range == .full,
                                to: PixelConverter.Planes(image: image), format: image.hasAlpha ? AV_PIX_FMT_YUVA420P : AV_PIX_FMT_YUV420P,
                                fullRange: false, matrix: target.matrix, width: width, height: height, context: what())
            if !source.matrix.sameCoefficients(as: target.matrix) {
                YCbCrRecode(from: source.matrix, to: target.matrix).apply(to: image)
            }
            return image
        }
        let planar = try zimgReadable(frame, traits: traits, context: what())
        let planarTraits = PixelFormatTraits(AVPixelFormat(rawValue: planar.pointee.format))!
        let input = ZimgFormat(width: width, height: height, samples: .integer(depth: planarTraits.depth), rgb: traits.isRGB,
                               subsampleW: planarTraits.log2ChromaW, subsampleH: planarTraits.log2ChromaH,
                               colour: source.asZimgSource(for: target))
        let sourcePlanes = (0..<3).map { i -> (UnsafeRawPointer, Int) in
            let plane = planarTraits.plane(ofComponent: i)
            return (UnsafeRawPointer(planar.pointee.dataPointer(plane)), Int(planar.pointee.lineSize(plane)))
        }
        if source.isHighDynamicRange && !target.isHighDynamicRange {
            try toneMap(sourcePlanes, input: input, peak: output.toneMapping.peak ?? Self.peak(of: frame),
                        weights: source.matrix, into: image, context: what())
        } else {
            try writeOutput(from: input, planes: sourcePlanes, into: image, context: what())
        }
        if let alpha = image.a { copyAlpha(of: planar, traits: planarTraits, into: alpha) }
        return image
    }

    /// The signal peak ffmpeg's `tonemap` reads from a frame's metadata, in units of
    /// 100 cd/m²; 10 (1000 cd/m²) when it has none.
    static func peak(of frame: UnsafeMutablePointer<AVFrame>) -> Double {
        let nits = reel_frame_metadata_peak(frame)
        return nits > 0 ? nits / 100 : 10
    }

    // MARK: - Paths

    private func graph(_ source: ZimgFormat, _ destination: ZimgFormat) throws -> ZimgGraph {
        let key = GraphKey(source: source, destination: destination)
        if let graph = graphs[key] { return graph }
        // Tone mapping keeps zscale's bilinear chroma (its chain is the reference); Y'CbCr to
        // Y'CbCr conversions take bicubic, which keeps colour edges sharper.
        let sdr = !source.colour.isHighDynamicRange && source.samples != .float && destination.samples != .float
        let graph = try ZimgGraph(from: source, to: destination, sharpChroma: sdr)
        graphs[key] = graph
        return graph
    }

    /// The output's 4:2:0 planes from `input`, directly when the size is even.
    private func writeOutput(from input: ZimgFormat, planes: [(UnsafeRawPointer, Int)], into image: YUVImage,
                             context what: @autoclosure () -> String) throws {
        let target = output.space.asZimgTarget
        if image.width % 2 == 0, image.height % 2 == 0 {
            let out = ZimgFormat(width: image.width, height: image.height, samples: .integer(depth: 8), rgb: false,
                                 subsampleW: 1, subsampleH: 1, colour: target)
            try graph(input, out).process(planes, into: [image.y, image.u, image.v].map { (UnsafeMutableRawPointer($0.base), $0.stride) })
            return
        }
        let full = oddSized.flatMap { $0.width == image.width && $0.height == image.height ? $0 : nil }
            ?? YUVImage444(width: image.width, height: image.height)
        oddSized = full
        let out = ZimgFormat(width: image.width, height: image.height, samples: .integer(depth: 8), rgb: false, colour: target)
        try graph(input, out).process(planes, into: full.planes.map { (UnsafeMutableRawPointer($0), full.stride) })
        try swscale.convert(from: PixelConverter.Planes(data: full.planes, strides: [Int32](repeating: Int32(full.stride), count: 3)),
                            format: AV_PIX_FMT_YUV444P, fullRange: false, to: PixelConverter.Planes(image: image, colourOnly: true),
                            format: AV_PIX_FMT_YUV420P, fullRange: false, matrix: output.space.matrix,
                            width: image.width, height: image.height, context: what())
    }

    private func toneMap(_ planes: [(UnsafeRawPointer, Int)], input: ZimgFormat, peak: Double, weights matrix: YCbCrMatrix,
                         into image: YUVImage, context what: @autoclosure () -> String) throws {
        let width = image.width, height = image.height
        // Linear light in the source's primaries first, then in the output's: two steps, as
        // ffmpeg's chain takes them. (HLG's OOTF weighs luminance by the source primaries; one
        // graph straight to the output's primaries gives other, less saturated, colours.)
        var buffers = linear.flatMap { $0.width == width && $0.height == height ? $0 : nil } ?? LinearPlanes(width: width, height: height)
        linear = buffers
        let sourceLight = ColourSpace(primaries: input.colour.primaries, transfer: .linear, matrix: .identity, range: .full)
        let outputLight = ColourSpace(primaries: output.space.primaries.gamut, transfer: .linear, matrix: .identity, range: .full)
        let fromSource = ZimgFormat(width: width, height: height, samples: .float, rgb: true, colour: sourceLight)
        let light = ZimgFormat(width: width, height: height, samples: .float, rgb: true, colour: outputLight)
        try graph(input, fromSource).process(planes, into: buffers.planes.map { (UnsafeMutableRawPointer($0), buffers.stride) })
        if sourceLight.primaries != outputLight.primaries {
            let converted = linearInOutputGamut.flatMap { $0.width == width && $0.height == height ? $0 : nil }
                ?? LinearPlanes(width: width, height: height)
            linearInOutputGamut = converted
            try graph(fromSource, light).process(buffers.planes.map { (UnsafeRawPointer($0), buffers.stride) },
                                                into: converted.planes.map { (UnsafeMutableRawPointer($0), converted.stride) })
            buffers = converted
        }
        let kernel: ToneMapKernel
        if let cached = toneMapper, cached.peak == peak, cached.weights == matrix {
            kernel = cached.kernel
        } else {
            kernel = ToneMapKernel(mapping: output.toneMapping, peak: peak, lumaWeights: matrix.lumaWeights)
            toneMapper = (peak, matrix, kernel)
        }
        // Rows are contiguous (stride = width floats rounded up): map them row by row.
        let rowFloats = buffers.stride / MemoryLayout<Float>.stride
        for row in 0..<height {
            let o = row * rowFloats
            kernel.apply(r: buffers.planes[0] + o, g: buffers.planes[1] + o, b: buffers.planes[2] + o, count: width)
        }
        try writeOutput(from: light, planes: buffers.planes.map { (UnsafeRawPointer($0), buffers.stride) }, into: image, context: what())
    }

    /// `frame` itself when zimg reads its format, else a planar copy made by swscale (no colour change).
    func zimgReadable(_ frame: UnsafeMutablePointer<AVFrame>, traits: PixelFormatTraits,
                              context what: @autoclosure () -> String) throws -> UnsafeMutablePointer<AVFrame> {
        let f = frame.pointee
        if traits.isZimgReadable, Int(f.width) % (1 << traits.log2ChromaW) == 0, Int(f.height) % (1 << traits.log2ChromaH) == 0 {
            return frame
        }
        let target = traits.zimgReadableEquivalent
        let u = unpacked.pointer
        if u.pointee.format != target.rawValue || u.pointee.width != f.width || u.pointee.height != f.height {
            unpacked.unref()
            u.pointee.format = target.rawValue
            u.pointee.width = f.width
            u.pointee.height = f.height
            try check(av_frame_get_buffer(u, 0), what())
        }
        let full = isFullRange(frame) || traits.isRGB
        try unpacker.convert(from: PixelConverter.Planes(frame: frame), format: AVPixelFormat(rawValue: f.format), fullRange: full,
                             to: PixelConverter.Planes(frame: u), format: target, fullRange: full, matrix: .bt709,
                             width: Int(f.width), height: Int(f.height), context: what())
        return u
    }

    /// The frame's alpha at 8 bits (rounded), full resolution.
    private func copyAlpha(of frame: UnsafeMutablePointer<AVFrame>, traits: PixelFormatTraits, into alpha: Plane) {
        let plane = traits.plane(ofComponent: 3)
        let base = frame.pointee.dataPointer(plane), stride = Int(frame.pointee.lineSize(plane))
        let depth = Int(withUnsafeBytes(of: traits.descriptor.pointee.comp) { $0.bindMemory(to: AVComponentDescriptor.self)[3].depth })
        for row in 0..<alpha.height {
            let src = base + row * stride, dst = alpha.row(row)
            if depth == 8 {
                dst.update(from: src, count: alpha.width)
            } else {
                let wide = UnsafeRawPointer(src).assumingMemoryBound(to: UInt16.self)
                let maximum = (1 << depth) - 1
                for x in 0..<alpha.width { dst[x] = UInt8((Int(wide[x]) * 255 + maximum / 2) / maximum) }
            }
        }
    }
}

extension YCbCrMatrix {
    /// BT.470BG and SMPTE 170M are the same numbers.
    func sameCoefficients(as other: YCbCrMatrix) -> Bool {
        func canonical(_ m: YCbCrMatrix) -> YCbCrMatrix { m == .bt470BG ? .smpte170M : m }
        return canonical(self) == canonical(other)
    }
}

extension ColourSpace {
    /// The output as zimg is told it: SD primaries as BT.709's.
    var asZimgTarget: ColourSpace {
        var s = self
        s.primaries = primaries.gamut
        return s
    }

    /// A source as zimg is told it for converting into `target`: SD primaries as BT.709's, and
    /// an SDR video gamma as the target's own, so code values are not taken through linear
    /// light for nothing.
    func asZimgSource(for target: ColourSpace) -> ColourSpace {
        var s = self
        s.primaries = primaries.gamut
        if transfer.isVideoGamma && target.transfer.isVideoGamma { s.transfer = target.transfer }
        if matrix == .identity { s.range = .full }
        return s
    }
}

/// Three float planes of linear light (R, G, B), 64-byte aligned rows.
private final class LinearPlanes {
    let width: Int, height: Int, stride: Int
    let planes: [UnsafeMutablePointer<Float>]

    init(width: Int, height: Int) {
        self.width = width; self.height = height
        let stride = ((width * 4 + 63) / 64) * 64
        self.stride = stride
        planes = (0..<3).map { _ in
            UnsafeMutableRawPointer.allocate(byteCount: stride * height, alignment: 64).bindMemory(to: Float.self, capacity: stride * height / 4)
        }
    }

    deinit { for p in planes { p.deallocate() } }
}

/// Three full-resolution 8-bit planes, 64-byte aligned rows.
private final class YUVImage444 {
    let width: Int, height: Int, stride: Int
    let planes: [UnsafeMutablePointer<UInt8>]

    init(width: Int, height: Int) {
        self.width = width; self.height = height
        let stride = ((width + 63) / 64) * 64
        self.stride = stride
        planes = (0..<3).map { _ in
            UnsafeMutableRawPointer.allocate(byteCount: stride * height, alignment: 64).bindMemory(to: UInt8.self, capacity: stride * height)
        }
    }

    deinit { for p in planes { p.deallocate() } }
}

extension AVFrame {
    func dataPointer(_ plane: Int) -> UnsafeMutablePointer<UInt8> {
        withUnsafeBytes(of: data) { $0.load(fromByteOffset: plane * 8, as: UnsafeMutablePointer<UInt8>.self) }
    }
    func lineSize(_ plane: Int) -> Int32 {
        withUnsafeBytes(of: linesize) { $0.load(fromByteOffset: plane * 4, as: Int32.self) }
    }
}

/// JPEG's `yuvj*` formats: full range whatever the tags say.
func isFullRangeFormat(_ format: AVPixelFormat) -> Bool {
    switch format {
    case AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_YUVJ440P, AV_PIX_FMT_YUVJ411P: true
    default: false
    }
}
