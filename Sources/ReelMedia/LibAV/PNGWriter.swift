import CFFmpeg
import Foundation
import ReelCore
import ReelKernels

/// Writes PNG files with libavcodec's PNG encoder (RGB24, or RGBA when there is alpha).
public enum PNGWriter {
    /// Converts `image` (limited-range Y'CbCr of `matrix`) to RGB (RGBA if it has alpha) with
    /// swscale and writes it as PNG.
    public static func write(_ image: YUVImage, matrix: YCbCrMatrix, to path: String) throws {
        let format = image.hasAlpha ? AV_PIX_FMT_RGBA : AV_PIX_FMT_RGB24
        let bytesPerPixel = image.hasAlpha ? 4 : 3
        var pixels = [UInt8](repeating: 0, count: image.width * image.height * bytesPerPixel)
        try pixels.withUnsafeMutableBufferPointer { buffer in
            try PixelConverter().convert(
                from: .init(image: image), format: image.hasAlpha ? AV_PIX_FMT_YUVA420P : AV_PIX_FMT_YUV420P, fullRange: false,
                to: .init(data: [buffer.baseAddress], strides: [Int32(image.width * bytesPerPixel)]), format: format, fullRange: true,
                matrix: matrix, width: image.width, height: image.height, context: "converting a frame for \(path)")
        }
        try encode(pixels: pixels, width: image.width, height: image.height, format: format, to: path)
    }

    /// Writes packed 8-bit RGB (`width * 3` bytes a row) as a PNG.
    public static func write(rgb pixels: [UInt8], width: Int, height: Int, to path: String) throws {
        try encode(pixels: pixels, width: width, height: height, format: AV_PIX_FMT_RGB24, to: path)
    }

    /// Writes straight-alpha RGBA as a PNG with alpha.
    public static func write(rgba image: RGBAImage, to path: String) throws {
        try encode(pixels: image.pixels, width: image.width, height: image.height, format: AV_PIX_FMT_RGBA, to: path)
    }

    private static func encode(pixels: [UInt8], width: Int, height: Int, format: AVPixelFormat, to path: String) throws {
        let what = "writing PNG \(path)"
        let bytes = try pixels.withUnsafeBufferPointer { buffer in
            try StillEncoder.encode(AV_CODEC_ID_PNG, width: width, height: height, format: format,
                                    planes: .init(data: [UnsafeMutablePointer(mutating: buffer.baseAddress)],
                                                  strides: [Int32(pixels.count / height)]),
                                    context: what)
        }
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw MediaError(code: .invalidArgument, message: "cannot write the file", context: what)
        }
    }
}
