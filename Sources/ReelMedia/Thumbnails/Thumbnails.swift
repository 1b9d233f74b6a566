import CFFmpeg
import Foundation
import ReelCore
import ReelKernels

/// An 8-bit RGB picture, rows packed (`width * 3` bytes apart): what thumbnails are made of.
public struct RGBPicture: Sendable, Hashable {
    public var width: Int
    public var height: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * 3, "RGB24 needs width × height × 3 bytes")
        self.width = width; self.height = height; self.pixels = pixels
    }

    public var size: PixelSize { PixelSize(width: width, height: height) }
}

/// The pictures `reel thumbnail` writes: exact frames of a media file (AVAssetImageGenerator
/// with zero tolerance, upright) or of a composition (the frame the full render shows, drawn by
/// the same `FrameRenderer`, without rendering any other frame), scaled, tiled into a contact
/// sheet, and written as PNG or JPEG.
public enum Thumbnails {
    /// The frames of `plan` shown at `times` (each `< plan.duration`): frame `floor(t / frameDuration)`,
    /// at the output size, as the full render draws it before encoding.
    public static func frames(of plan: RenderPlan, at times: [Rational], media: MediaSources = .local) throws -> [RGBPicture] {
        let renderer = FrameRenderer(plan: plan, media: media)
        return try times.map { time in
            precondition(time >= .zero && time < plan.duration, "time \(time) outside the composition")
            return try picture(try renderer.render(frame: Int((time / plan.frameDuration).floor)), matrix: plan.colour.space.matrix)
        }
    }

    /// The frames of the media file at `path` shown at `times`: for each, the last frame whose
    /// presentation time is at or before it, turned upright by the file's display matrix.
    public static func frames(ofFile path: String, video: VideoTrackDescription, at times: [Rational]) throws -> [RGBPicture] {
        let source = try VideoFrameSource(path: path)
        let size = video.displaySize
        let upright = YUVImage(width: size.width, height: size.height)
        return try times.map { time in
            let frame = try source.frame(at: time)
            Compositor.fill(upright, color: .black, conversion: .bt709)
            Compositor.draw(frame, transform: video.preferredTransform, opacity: 1, crop: nil, onto: upright)
            return try picture(upright, matrix: OutputColour.standard.space.matrix)
        }
    }

    /// `image` (limited-range Y'CbCr of `matrix`) as full-range R'G'B', as ffmpeg converts it.
    public static func picture(_ image: YUVImage, matrix: YCbCrMatrix) throws -> RGBPicture {
        var pixels = [UInt8](repeating: 0, count: image.width * image.height * 3)
        try pixels.withUnsafeMutableBufferPointer { buffer in
            try PixelConverter().convert(from: .init(image: image), format: AV_PIX_FMT_YUV420P, fullRange: false,
                                         to: .init(data: [buffer.baseAddress], strides: [Int32(image.width * 3)]), format: AV_PIX_FMT_RGB24,
                                         fullRange: true, matrix: matrix, width: image.width, height: image.height, context: "converting a thumbnail")
        }
        return RGBPicture(width: image.width, height: image.height, pixels: pixels)
    }

    /// `picture` resized to `size` with swscale's area averaging (the resampling for shrinking).
    public static func scaled(_ picture: RGBPicture, to size: PixelSize) throws -> RGBPicture {
        guard size != picture.size else { return picture }
        let what = "scaling a thumbnail from \(picture.size) to \(size)"
        guard let scaler = sws_getContext(Int32(picture.width), Int32(picture.height), AV_PIX_FMT_RGB24,
                                          Int32(size.width), Int32(size.height), AV_PIX_FMT_RGB24,
                                          SWS_AREA | SWS_ACCURATE_RND | SWS_BITEXACT, nil, nil, nil) else {
            throw MediaError(code: .invalidArgument, message: "swscale cannot scale to \(size)", context: what)
        }
        defer { sws_freeContext(scaler) }
        var out = [UInt8](repeating: 0, count: size.width * size.height * 3)
        let rows = picture.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                sws_scale(scaler, [src.baseAddress, nil, nil, nil], [Int32(picture.width * 3), 0, 0, 0], 0, Int32(picture.height),
                          [dst.baseAddress, nil, nil, nil], [Int32(size.width * 3), 0, 0, 0])
            }
        }
        if rows < 0 { throw MediaError.libav(rows, what) }
        return RGBPicture(width: size.width, height: size.height, pixels: out)
    }

    /// `pictures` (each of `sheet.tile`'s size) tiled into one picture as `sheet` lays them out;
    /// unused tiles of the last row are black.
    public static func contactSheet(_ pictures: [RGBPicture], sheet: ContactSheet) -> RGBPicture {
        precondition(pictures.count == sheet.count && pictures.allSatisfy { $0.size == sheet.tile }, "tiles of the sheet's size")
        let size = sheet.size, rowBytes = size.width * 3, tileRow = sheet.tile.width * 3
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * 3)
        for (index, picture) in pictures.enumerated() {
            let f = sheet.frame(of: index)
            for y in 0..<f.height {
                let dst = (f.y + y) * rowBytes + f.x * 3, src = y * tileRow
                pixels.replaceSubrange(dst..<(dst + tileRow), with: picture.pixels[src..<(src + tileRow)])
            }
        }
        return RGBPicture(width: size.width, height: size.height, pixels: pixels)
    }

    /// The image formats a thumbnail can be written in, by the output name's extension.
    public enum ImageFormat: String, Sendable, CaseIterable {
        case png, jpeg

        /// `.png`, or `.jpg`/`.jpeg` (any case); nil for anything else.
        public init?(path: String) {
            switch URL(fileURLWithPath: path).pathExtension.lowercased() {
            case "png": self = .png
            case "jpg", "jpeg": self = .jpeg
            default: return nil
            }
        }
    }

    /// Writes `picture` as a PNG (lossless) or a JPEG (full-range 4:4:4, quantiser 2 of 2…31:
    /// near the best JPEG quality, for previews that are looked at closely; 4:4:4 because a
    /// small picture's colour edges are few pixels wide, and halving its chroma would smear
    /// them), as `format` says.
    public static func write(_ picture: RGBPicture, as format: ImageFormat, to path: String) throws {
        switch format {
        case .png:
            try PNGWriter.write(rgb: picture.pixels, width: picture.width, height: picture.height, to: path)
        case .jpeg:
            let what = "writing JPEG \(path)"
            let (width, height) = (picture.width, picture.height)
            var luma = [UInt8](repeating: 0, count: width * height), cb = luma, cr = luma
            let bytes = try picture.pixels.withUnsafeBufferPointer { src in
                try luma.withUnsafeMutableBufferPointer { y in
                    try cb.withUnsafeMutableBufferPointer { u in
                        try cr.withUnsafeMutableBufferPointer { v in
                            let yuv = PixelConverter.Planes(data: [y.baseAddress, u.baseAddress, v.baseAddress], strides: [Int32(width), Int32(width), Int32(width)])
                            try PixelConverter().convert(from: .init(data: [UnsafeMutablePointer(mutating: src.baseAddress)], strides: [Int32(width * 3)]),
                                                         format: AV_PIX_FMT_RGB24, fullRange: true, to: yuv, format: AV_PIX_FMT_YUVJ444P,
                                                         // JPEG (JFIF) is BT.601 Y'CbCr, whatever the video was.
                                                         fullRange: true, matrix: .smpte170M, width: width, height: height, context: what)
                            return try StillEncoder.encode(AV_CODEC_ID_MJPEG, width: width, height: height, format: AV_PIX_FMT_YUVJ444P,
                                                           planes: yuv, configure: { ctx in
                                                               ctx.pointee.flags |= Int32(AV_CODEC_FLAG_QSCALE)
                                                               ctx.pointee.global_quality = 2 * FF_QP2LAMBDA
                                                           }, context: what)
                        }
                    }
                }
            }
            guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
                throw MediaError(code: .invalidArgument, message: "cannot write the file", context: what)
            }
        }
    }

    /// The name of picture `number` (from 1) for an output pattern such as `thumb-%03d.png`, as
    /// ffmpeg's image muxer numbers files (`av_get_frame_filename2`: one `%d` or `%0Nd`, `%%`
    /// for a percent sign). Nil when `pattern` holds no number.
    public static func numberedPath(_ pattern: String, number: Int) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard av_get_frame_filename2(&buffer, Int32(buffer.count), pattern, Int32(number), 0) >= 0 else { return nil }
        return String(cString: buffer)
    }
}
