import CFFmpeg
import ReelCore
import ReelKernels

/// Still images (PNG, JPEG, WebP, BMP, …) decoded with libavformat + libavcodec.
public enum StillImage {
    /// Decodes the first picture of `path` into a `YUVImage` in `colour` (the output's), with an
    /// alpha plane when the image has alpha.
    public static func load(path: String, colour: OutputColour = .standard) throws -> YUVImage {
        try load(try MediaSources.local.location(of: path), colour: colour)
    }

    /// Decodes the first picture at `location` (see `load(path:)`).
    public static func load(_ location: MediaLocation, colour: OutputColour = .standard) throws -> YUVImage {
        let (frame, input) = try decodeFirstFrame(location)
        let tags = input.firstStream(of: AVMEDIA_TYPE_VIDEO).map { ColourTags(input.stream($0).pointee.codecpar) } ?? ColourTags()
        return try SourceColourConverter(output: colour, streamTags: tags).image(from: frame.pointer, context: "converting \(location)")
    }

    /// Decodes the first picture of `path` into straight-alpha RGBA8 (a Y'CbCr picture with its
    /// own matrix: its tags', else the guess by size).
    public static func loadRGBA(path: String) throws -> RGBAImage {
        let (frame, input) = try decodeFirstFrame(try MediaSources.local.location(of: path))
        let tags = input.firstStream(of: AVMEDIA_TYPE_VIDEO).map { ColourTags(input.stream($0).pointee.codecpar) } ?? ColourTags()
        let matrix = SourceColourConverter(output: .standard, streamTags: tags).colour(of: frame.pointer).matrix
        let width = Int(frame.pointer.pointee.width), height = Int(frame.pointer.pointee.height)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        try pixels.withUnsafeMutableBufferPointer { buffer in
            try PixelConverter().convert(
                from: .init(frame: frame.pointer), format: AVPixelFormat(rawValue: frame.pointer.pointee.format),
                fullRange: isFullRange(frame.pointer),
                to: .init(data: [buffer.baseAddress], strides: [Int32(width * 4)]), format: AV_PIX_FMT_RGBA, fullRange: true,
                matrix: matrix, width: width, height: height, context: "converting \(path) to RGBA")
        }
        return RGBAImage(width: width, height: height, pixels: pixels)
    }

    static func decodeFirstFrame(_ location: MediaLocation) throws -> (Frame, InputFile) {
        let input = try InputFile(location)
        let path = input.path
        guard let index = input.firstStream(of: AVMEDIA_TYPE_VIDEO) else {
            throw MediaError(code: .noStream, message: "no image stream", context: "opening \(path)")
        }
        let decoder = try StreamDecoder(input: input, streamIndex: index)
        let frame = Frame()
        guard try decoder.next(into: frame) else {
            throw MediaError(code: .noData, message: "no picture decoded", context: "decoding \(path)")
        }
        return (frame, input)
    }
}
