import CFFmpeg
import ReelCore
import ReelKernels

/// Pixel-format conversion at a fixed size through swscale (no scaling: Reel scales in its
/// own compositor). Owns one cached `SwsContext`; used from one thread at a time.
///
/// Y'CbCr ↔ R'G'B' uses `matrix` (the Y'CbCr side's: BT.601, BT.709, BT.2020, …); Y'CbCr to
/// Y'CbCr applies no matrix, only the range and the layout change. Colour-space conversions
/// of sources (another matrix, primaries or transfer) are `SourceColourConverter`'s, through zimg.
final class PixelConverter {
    private var context: OpaquePointer?

    deinit { sws_freeContext(context) }

    /// A set of up to four planes described for swscale.
    struct Planes {
        var data: [UnsafeMutablePointer<UInt8>?]
        var strides: [Int32]
    }

    func convert(from source: Planes, format sourceFormat: AVPixelFormat, fullRange sourceFull: Bool,
                 to destination: Planes, format destinationFormat: AVPixelFormat, fullRange destinationFull: Bool,
                 matrix: YCbCrMatrix, width: Int, height: Int, context what: @autoclosure () -> String) throws {
        context = sws_getCachedContext(context, Int32(width), Int32(height), sourceFormat,
                                       Int32(width), Int32(height), destinationFormat,
                                       reel_sws_flags_exact(), nil, nil, nil)
        guard let context else {
            throw MediaError(code: .invalidArgument,
                             message: "swscale cannot convert \(pixelFormatName(sourceFormat)) to \(pixelFormatName(destinationFormat))",
                             context: what())
        }
        // swscale's tables are indexed by the H.273 matrix code (SWS_CS_ITU709 = 1, SWS_CS_SMPTE170M = 6, SWS_CS_BT2020 = 9).
        let coefficients = sws_getCoefficients(Int32(matrix.rawValue))
        sws_setColorspaceDetails(context, coefficients, sourceFull ? 1 : 0, coefficients, destinationFull ? 1 : 0, 0, 1 << 16, 1 << 16)
        let src = source.data.map { UnsafePointer<UInt8>($0) } + [UnsafePointer<UInt8>?](repeating: nil, count: 4 - source.data.count)
        let srcStrides = source.strides + [Int32](repeating: 0, count: 4 - source.strides.count)
        let dst = destination.data + [UnsafeMutablePointer<UInt8>?](repeating: nil, count: 4 - destination.data.count)
        let dstStrides = destination.strides + [Int32](repeating: 0, count: 4 - destination.strides.count)
        let rows = sws_scale(context, src, srcStrides, 0, Int32(height), dst, dstStrides)
        if rows < 0 { throw MediaError.libav(rows, what()) }
    }
}

extension PixelConverter.Planes {
    init(frame: UnsafeMutablePointer<AVFrame>) {
        var d = frame.pointee.data, l = frame.pointee.linesize
        let data = withUnsafeBytes(of: &d) { Array($0.bindMemory(to: UnsafeMutablePointer<UInt8>?.self).prefix(4)) }
        let strides = withUnsafeBytes(of: &l) { Array($0.bindMemory(to: Int32.self).prefix(4)) }
        self.init(data: data, strides: strides)
    }
    /// `colourOnly`: Y, U and V without the alpha plane.
    init(image: YUVImage, colourOnly: Bool = false) {
        var planes = [image.y, image.u, image.v]
        if let a = image.a, !colourOnly { planes.append(a) }
        self.init(data: planes.map { Optional($0.base) }, strides: planes.map { Int32($0.stride) })
    }
}

func pixelFormatName(_ format: AVPixelFormat) -> String {
    guard let name = av_get_pix_fmt_name(format) else { return "none" }
    return String(cString: name)
}

func pixelFormatHasAlpha(_ format: AVPixelFormat) -> Bool {
    guard let desc = av_pix_fmt_desc_get(format) else { return false }
    return desc.pointee.flags & UInt64(reel_pix_fmt_flag_alpha()) != 0
}

/// Whether a frame's samples use the full 0–255 range (JPEG-style `yuvj*` or tagged full range).
func isFullRange(_ frame: UnsafeMutablePointer<AVFrame>) -> Bool {
    let format = AVPixelFormat(rawValue: frame.pointee.format)
    switch format {
    case AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_YUVJ440P, AV_PIX_FMT_YUVJ411P:
        return true
    default:
        return frame.pointee.color_range == AVCOL_RANGE_JPEG
    }
}
