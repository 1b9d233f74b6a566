import CFFmpeg
import ReelCore
import ReelKernels

/// Draws frames of an HDR `RenderPlan` (PQ or HLG output) at 16 bits a sample: the
/// background, then the video and still layers bottom-up, each converted from its decoded
/// samples into the output's colour space and scaled onto the pixels it covers in one zimg
/// graph (`DeepSourceConverter`), then mixed onto the frame with its opacity
/// (`DeepCompositor`). Nothing passes through 8 bits; the encoder takes the frame to 10.
///
/// Layers are placed by scale and translation (rotations, skews and flips are refused:
/// validation refuses them where the composition writes them, and a source whose own display
/// matrix rotates it is refused here). Filters, blend modes, overlays and captions are not
/// drawn in HDR renders; validation refuses them.
///
/// Like `FrameRenderer`, frame `k` depends only on the plan and `k`. Used from one thread at
/// a time; reuses one output buffer.
public final class DeepFrameRenderer {
    public let plan: RenderPlan
    private let media: MediaSources
    private let decoderThreads: Int
    private let canvas: DeepYUVImage
    private var cursor: FrameCursor
    private var readers: [ReaderKey: (source: VideoFrameSource, converter: DeepSourceConverter)] = [:]
    private var usedThisFrame: Set<ReaderKey> = []
    private var stills: [String: (frame: Frame, converter: DeepSourceConverter)] = [:]
    private var layerBuffer: DeepYUVImage?
    private var backgrounds: [RGBAColor: (y: UInt16, u: UInt16, v: UInt16)] = [:]

    private struct ReaderKey: Hashable { let track: Int; let asset: String }

    public init(plan: RenderPlan, media: MediaSources = .local, decoderThreads: Int = 1) {
        precondition(plan.colour.space.isHighDynamicRange, "DeepFrameRenderer draws HDR plans")
        self.plan = plan
        self.media = media
        self.decoderThreads = decoderThreads
        canvas = DeepYUVImage(width: plan.outputSize.width, height: plan.outputSize.height)
        cursor = FrameCursor(plan: plan)
    }

    /// Frame `k`, valid until the next call.
    public func render(frame k: Int) throws -> DeepYUVImage {
        let description = cursor.frame(k)
        let background = try backgroundCode(description.background)
        canvas.fill(y: background.y, u: background.u, v: background.v)
        for layer in description.layers where layer.opacity > 0 {
            guard !layer.hasEffects else {
                throw RenderError.unsupported("filters and blend modes are not drawn in HDR renders (track \(layer.trackID))")
            }
            try draw(layer)
        }
        guard description.overlays.isEmpty, plan.captions == nil, description.filters.isEmpty else {
            throw RenderError.unsupported("overlays, captions and composition filters are not drawn in HDR renders")
        }
        for key in readers.keys where !usedThisFrame.contains(key) { readers[key] = nil }
        usedThisFrame.removeAll(keepingCapacity: true)
        return canvas
    }

    private func draw(_ layer: LayerDraw) throws {
        guard let asset = plan.assets[layer.asset] else {
            throw RenderError.internalInconsistency("layer refers to unplanned asset \(layer.asset)")
        }
        let frame: UnsafeMutablePointer<AVFrame>
        let converter: DeepSourceConverter
        if asset.description.kind == .still {
            let still = try self.still(layer.asset, url: asset.url)
            frame = still.frame.pointer
            converter = still.converter
        } else {
            let key = ReaderKey(track: layer.trackID, asset: layer.asset)
            usedThisFrame.insert(key)
            let reader: (source: VideoFrameSource, converter: DeepSourceConverter)
            if let open = readers[key] {
                reader = open
            } else {
                let source = try VideoFrameSource(try media.location(of: asset.url), decoderThreads: decoderThreads, colour: plan.colour)
                reader = (source, DeepSourceConverter(output: plan.colour, streamTags: source.streamTags))
                readers[key] = reader
            }
            frame = try reader.source.decodedFrame(at: layer.sourceTime)
            converter = reader.converter
        }
        let width = Double(frame.pointee.width), height = Double(frame.pointee.height)
        guard let placement = DeepPlacement(transform: layer.transform, crop: layer.crop, sourceWidth: width, sourceHeight: height,
                                            frameWidth: canvas.width, frameHeight: canvas.height) else {
            if layer.transform.isAxisAlignedUpright { return }  // wholly outside the frame
            throw RenderError.unsupported("asset \(layer.asset) is rotated, skewed or flipped (its own display matrix or the layer's "
                                          + "transform: \(layer.transform)); HDR renders place layers by scale and translation only")
        }
        // On the frame's chroma grid (even position and size) the layer is made 4:2:0, and its
        // chroma is never resampled when its size is the source's; else 4:4:4, averaged onto
        // the grid as it is drawn.
        let onGrid = [placement.x, placement.y, placement.width, placement.height].allSatisfy { $0 % 2 == 0 }
        let buffer = layerBuffer.flatMap { $0.width == placement.width && $0.height == placement.height && $0.subsampled == onGrid ? $0 : nil }
            ?? DeepYUVImage(width: placement.width, height: placement.height, subsampled: onGrid)
        layerBuffer = buffer
        try converter.convert(frame, region: placement.region, into: buffer, context: "converting a frame of \(asset.url)")
        DeepCompositor.draw(buffer, x: placement.x, y: placement.y, opacity: layer.opacity, onto: canvas)
    }

    private func still(_ id: String, url: String) throws -> (frame: Frame, converter: DeepSourceConverter) {
        if let still = stills[id] { return still }
        let (frame, input) = try StillImage.decodeFirstFrame(try media.location(of: url))
        let tags = input.firstStream(of: AVMEDIA_TYPE_VIDEO).map { ColourTags(input.stream($0).pointee.codecpar) } ?? ColourTags()
        let still = (frame, DeepSourceConverter(output: plan.colour, streamTags: tags))
        stills[id] = still
        return still
    }

    /// A background colour (R'G'B' of SDR BT.709, as in SDR renders) in the frame's 16-bit
    /// Y'CbCr: zimg places it as it places SDR sources, white at 203 cd/m².
    private func backgroundCode(_ color: RGBAColor) throws -> (y: UInt16, u: UInt16, v: UInt16) {
        if let code = backgrounds[color] { return code }
        let rgb = ColourSpace(primaries: .bt709, transfer: .bt709, matrix: .identity, range: .full)
        let source = ZimgFormat(width: 2, height: 2, samples: .integer(depth: 8), rgb: true, colour: rgb)
        let target = ZimgFormat(width: 2, height: 2, samples: .integer(depth: 16), rgb: false, colour: plan.colour.space.asZimgTarget)
        let graph = try ZimgGraph(from: source, to: target, nominalPeak: DeepSourceConverter.sdrReferenceWhite)
        // zimg's RGB planes are G, B, R; 64-byte aligned rows of 64 bytes.
        let input = UnsafeMutableRawPointer.allocate(byteCount: 3 * 128, alignment: 64)
        let output = UnsafeMutableRawPointer.allocate(byteCount: 3 * 128, alignment: 64)
        defer { input.deallocate(); output.deallocate() }
        input.initializeMemory(as: UInt8.self, repeating: 0, count: 3 * 128)
        output.initializeMemory(as: UInt8.self, repeating: 0, count: 3 * 128)
        for (plane, value) in [color.g, color.b, color.r].enumerated() {
            for i in 0..<2 { input.storeBytes(of: value, toByteOffset: plane * 128 + i, as: UInt8.self)
                             input.storeBytes(of: value, toByteOffset: plane * 128 + 64 + i, as: UInt8.self) }
        }
        try graph.process((0..<3).map { (UnsafeRawPointer(input + $0 * 128), 64) }, into: (0..<3).map { (output + $0 * 128, 64) })
        let sample = { (plane: Int) in output.load(fromByteOffset: plane * 128, as: UInt16.self) }
        let code = (sample(0), sample(1), sample(2))
        backgrounds[color] = code
        return code
    }
}

/// Where a layer lands on the frame: the whole pixels it covers (`x`, `y`, `width`, `height`)
/// and the part of the source that maps onto them (`region`, source pixels; nil = the whole
/// source at its own size, which zimg copies without resampling). nil when the layer is
/// outside the frame or its transform is not a scale and translation.
struct DeepPlacement {
    let x: Int, y: Int, width: Int, height: Int
    let region: ZimgFormat.ActiveRegion?

    init?(transform t: AffineTransform, crop: Rect?, sourceWidth: Double, sourceHeight: Double, frameWidth: Int, frameHeight: Int) {
        guard t.isAxisAlignedUpright else { return nil }
        let cx = crop?.x ?? 0, cy = crop?.y ?? 0
        let cw = crop?.width ?? sourceWidth, ch = crop?.height ?? sourceHeight
        let dx = t.a * cx + t.tx, dy = t.d * cy + t.ty, dw = t.a * cw, dh = t.d * ch
        // Edges within a thousandth of a pixel of a whole one are on it (no sliver from rounding).
        let x0 = max(0, Int((dx + 1e-3).rounded(.down))), y0 = max(0, Int((dy + 1e-3).rounded(.down)))
        let x1 = min(frameWidth, Int((dx + dw - 1e-3).rounded(.up))), y1 = min(frameHeight, Int((dy + dh - 1e-3).rounded(.up)))
        guard x1 > x0, y1 > y0 else { return nil }
        x = x0; y = y0; width = x1 - x0; height = y1 - y0
        let r = ZimgFormat.ActiveRegion(left: cx + (Double(x0) - dx) / t.a, top: cy + (Double(y0) - dy) / t.d,
                                        width: Double(width) / t.a, height: Double(height) / t.d)
        let whole = ZimgFormat.ActiveRegion(left: 0, top: 0, width: sourceWidth, height: sourceHeight)
        region = abs(r.left - whole.left) < 1e-6 && abs(r.top - whole.top) < 1e-6 && abs(r.width - whole.width) < 1e-6
            && abs(r.height - whole.height) < 1e-6 ? nil : r
    }
}
