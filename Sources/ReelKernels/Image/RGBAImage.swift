/// An 8-bit RGBA image with straight (not premultiplied) alpha, rows packed with no padding
/// (`stride == width * 4`). Used for rasterised text, decoded stills and thumbnails before they
/// become `YUVImage`s for the compositor.
///
/// Invariant: `pixels.count == width * height * 4`.
public struct RGBAImage: Sendable, Hashable {
    public var width: Int
    public var height: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * 4, "RGBAImage \(width)x\(height) needs \(width * height * 4) bytes, got \(pixels.count)")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// A fully transparent image of the given size.
    public init(width: Int, height: Int) {
        self.init(width: width, height: height, pixels: [UInt8](repeating: 0, count: width * height * 4))
    }

    /// Bytes from one row to the next.
    public var stride: Int { width * 4 }

    /// Converts to the compositor's working format (limited range Y'CbCr by `conversion`, with
    /// an alpha plane).
    public func yuvImage(_ conversion: ColorConversion) -> YUVImage {
        pixels.withUnsafeBufferPointer {
            conversion.yuvImage(rgba: $0.baseAddress!, width: width, height: height, stride: stride)
        }
    }
}
