import CFFmpeg
import Foundation
import ReelCore
import ReelKernels

/// A small JPEG of a rendered frame, so an operator sees what a job looks like: agents send
/// one with each video chunk (its last frame), and the console shows the newest.
public enum PosterFrame {
    /// Posters are at most this wide (and as tall as the frame's aspect ratio says).
    public static let maxWidth = 320
    /// What a poster may weigh; a 320-pixel-wide JPEG at this quality is far smaller.
    public static let maxBytes = 256 << 10

    /// `image` (limited-range Y'CbCr of `matrix`) scaled to at most `maxWidth` wide (even
    /// sizes), as a baseline JPEG. JPEG's Y'CbCr is BT.601 full range (JFIF) whatever the video's
    /// is, so the poster goes through R'G'B' with the frame's own matrix.
    public static func jpeg(_ image: YUVImage, matrix: YCbCrMatrix) throws -> [UInt8] {
        let what = "making a poster frame"
        let width = max(2, min(maxWidth, image.width) & ~1)
        let height = max(2, Int((Double(image.height) * Double(width) / Double(image.width)).rounded()) & ~1)
        let small = YUVImage(width: width, height: height)
        guard let scaler = sws_getContext(Int32(image.width), Int32(image.height), AV_PIX_FMT_YUV420P,
                                          Int32(width), Int32(height), AV_PIX_FMT_YUV420P, SWS_AREA, nil, nil, nil) else {
            throw MediaError(code: .invalidArgument, message: "swscale cannot scale \(image.width)x\(image.height) to \(width)x\(height)", context: what)
        }
        defer { sws_freeContext(scaler) }
        let source = PixelConverter.Planes(image: image, colourOnly: true), scaled = PixelConverter.Planes(image: small)
        let src = source.data.map { UnsafePointer<UInt8>($0) } + [nil]
        let rows = sws_scale(scaler, src, source.strides + [0], 0, Int32(image.height), scaled.data + [nil], scaled.strides + [0])
        if rows < 0 { throw MediaError.libav(rows, what) }
        let rgb = try Thumbnails.picture(small, matrix: matrix)
        let poster = YUVImage(width: width, height: height)
        let jfif = PixelConverter.Planes(image: poster)
        try rgb.pixels.withUnsafeBufferPointer { pixels in
            try PixelConverter().convert(from: .init(data: [UnsafeMutablePointer(mutating: pixels.baseAddress)], strides: [Int32(width * 3)]),
                                         format: AV_PIX_FMT_RGB24, fullRange: true, to: jfif, format: AV_PIX_FMT_YUVJ420P, fullRange: true,
                                         matrix: .smpte170M, width: width, height: height, context: what)
        }
        return try StillEncoder.encode(AV_CODEC_ID_MJPEG, width: width, height: height, format: AV_PIX_FMT_YUVJ420P,
                                       planes: jfif,
                                       configure: { ctx in
                                           // Fixed quantiser 4 (of 2…31): sharp enough to read a caption.
                                           ctx.pointee.flags |= Int32(AV_CODEC_FLAG_QSCALE)
                                           ctx.pointee.global_quality = 4 * FF_QP2LAMBDA
                                       }, context: what)
    }

    /// Writes `image`'s poster to `path`. A poster is for people: one that cannot be made or
    /// written is skipped, and never fails the chunk it shows.
    public static func writeBestEffort(_ image: YUVImage, matrix: YCbCrMatrix, to path: String) {
        if let jpeg = try? jpeg(image, matrix: matrix) { _ = FileManager.default.createFile(atPath: path, contents: Data(jpeg)) }
    }
}
