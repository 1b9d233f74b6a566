import CFFmpeg
import Foundation
import ReelKernels

/// A small JPEG of a rendered frame, so an operator sees what a job looks like: agents send
/// one with each video chunk (its last frame), and the console shows the newest.
public enum PosterFrame {
    /// Posters are at most this wide (and as tall as the frame's aspect ratio says).
    public static let maxWidth = 320
    /// What a poster may weigh; a 320-pixel-wide JPEG at this quality is far smaller.
    public static let maxBytes = 256 << 10

    /// `image` scaled to at most `maxWidth` wide (even sizes), as a baseline JPEG.
    public static func jpeg(_ image: YUVImage) throws -> [UInt8] {
        let what = "making a poster frame"
        let width = max(2, min(maxWidth, image.width) & ~1)
        let height = max(2, Int((Double(image.height) * Double(width) / Double(image.width)).rounded()) & ~1)
        let poster = YUVImage(width: width, height: height)
        guard let scaler = sws_getContext(Int32(image.width), Int32(image.height), AV_PIX_FMT_YUV420P,
                                          Int32(width), Int32(height), AV_PIX_FMT_YUVJ420P, SWS_AREA, nil, nil, nil) else {
            throw MediaError(code: .invalidArgument, message: "swscale cannot scale \(image.width)x\(image.height) to \(width)x\(height)", context: what)
        }
        defer { sws_freeContext(scaler) }
        // Limited-range source, full-range (JPEG) destination.
        let coefficients = sws_getCoefficients(SWS_CS_DEFAULT)
        sws_setColorspaceDetails(scaler, coefficients, 0, coefficients, 1, 0, 1 << 16, 1 << 16)
        let source = PixelConverter.Planes(image: image), destination = PixelConverter.Planes(image: poster)
        let src = source.data.prefix(3).map { UnsafePointer<UInt8>($0) } + [nil]
        let dst = destination.data.prefix(3) + [nil]
        let rows = sws_scale(scaler, src, Array(source.strides.prefix(3)) + [0], 0, Int32(image.height),
                             Array(dst), Array(destination.strides.prefix(3)) + [0])
        if rows < 0 { throw MediaError.libav(rows, what) }
        return try StillEncoder.encode(AV_CODEC_ID_MJPEG, width: width, height: height, format: AV_PIX_FMT_YUVJ420P,
                                       planes: .init(data: Array(destination.data.prefix(3)), strides: Array(destination.strides.prefix(3))),
                                       configure: { ctx in
                                           // Fixed quantiser 4 (of 2…31): sharp enough to read a caption.
                                           ctx.pointee.flags |= Int32(AV_CODEC_FLAG_QSCALE)
                                           ctx.pointee.global_quality = 4 * FF_QP2LAMBDA
                                       }, context: what)
    }

    /// Writes `image`'s poster to `path`. A poster is for people: one that cannot be made or
    /// written is skipped, and never fails the chunk it shows.
    public static func writeBestEffort(_ image: YUVImage, to path: String) {
        if let jpeg = try? jpeg(image) { _ = FileManager.default.createFile(atPath: path, contents: Data(jpeg)) }
    }
}
