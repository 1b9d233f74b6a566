import CFFmpeg
import Foundation

/// Writes PNG files with libavcodec's PNG encoder (RGB24, or RGBA when there is alpha).
public enum PNGWriter {
    /// Converts `image` to RGB (RGBA if it has alpha) with swscale and writes it as PNG.
    public static func write(_ image: YUVImage, to path: String) throws {
        let format = image.hasAlpha ? AV_PIX_FMT_RGBA : AV_PIX_FMT_RGB24
        let bytesPerPixel = image.hasAlpha ? 4 : 3
        var pixels = [UInt8](repeating: 0, count: image.width * image.height * bytesPerPixel)
        try pixels.withUnsafeMutableBufferPointer { buffer in
            try PixelConverter().convert(
                from: .init(image: image), format: image.hasAlpha ? AV_PIX_FMT_YUVA420P : AV_PIX_FMT_YUV420P, fullRange: false,
                to: .init(data: [buffer.baseAddress], strides: [Int32(image.width * bytesPerPixel)]), format: format, fullRange: true,
                width: image.width, height: image.height, context: "converting a frame for \(path)")
        }
        try encode(pixels: pixels, width: image.width, height: image.height, format: format, to: path)
    }

    /// Writes straight-alpha RGBA as a PNG with alpha.
    public static func write(rgba image: RGBAImage, to path: String) throws {
        try encode(pixels: image.pixels, width: image.width, height: image.height, format: AV_PIX_FMT_RGBA, to: path)
    }

    private static func encode(pixels: [UInt8], width: Int, height: Int, format: AVPixelFormat, to path: String) throws {
        let what = "writing PNG \(path)"
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_PNG) else {
            throw MediaError(code: .noCodec, message: "no PNG encoder", context: what)
        }
        guard let ctx = avcodec_alloc_context3(codec) else { fatalError("avcodec_alloc_context3: out of memory") }
        var owned: UnsafeMutablePointer<AVCodecContext>? = ctx
        defer { avcodec_free_context(&owned) }
        ctx.pointee.width = Int32(width)
        ctx.pointee.height = Int32(height)
        ctx.pointee.pix_fmt = format
        ctx.pointee.time_base = AVRational(num: 1, den: 1)
        try check(avcodec_open2(ctx, codec, nil), what)

        let frame = Frame(), packet = Packet()
        let f = frame.pointer
        f.pointee.format = format.rawValue
        f.pointee.width = Int32(width)
        f.pointee.height = Int32(height)
        f.pointee.pts = 0
        let bytesPerPixel = pixels.count / (width * height)
        let status = pixels.withUnsafeBufferPointer { buffer -> Int32 in
            // Borrowed, unreferenced data: libavcodec copies it in send_frame.
            f.pointee.data.0 = UnsafeMutablePointer(mutating: buffer.baseAddress)
            f.pointee.linesize.0 = Int32(width * bytesPerPixel)
            defer { f.pointee.data.0 = nil }
            return avcodec_send_frame(ctx, f)
        }
        try check(status, what)
        try check(avcodec_send_frame(ctx, nil), what)
        var bytes: [UInt8] = []
        while true {
            let r = avcodec_receive_packet(ctx, packet.pointer)
            if r == averrorEOF || r == averrorEAGAIN { break }
            try check(r, what)
            bytes += UnsafeBufferPointer(start: packet.pointer.pointee.data, count: Int(packet.pointer.pointee.size))
            packet.unref()
        }
        guard !bytes.isEmpty else { throw MediaError(code: .noData, message: "the encoder produced nothing", context: what) }
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw MediaError(code: .invalidArgument, message: "cannot write the file", context: what)
        }
    }
}
