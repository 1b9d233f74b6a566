/// One 8-bit image plane: `height` rows of `width` bytes, rows `stride` bytes apart.
public struct Plane: @unchecked Sendable {
    public let base: UnsafeMutablePointer<UInt8>
    public let width: Int
    public let height: Int
    public let stride: Int

    @inline(__always) public func row(_ y: Int) -> UnsafeMutablePointer<UInt8> { base + y * stride }
}

/// The compositor's working frame: planar 8-bit Y'CbCr 4:2:0, limited range, in the render's
/// colour space (its matrix is the output's: `OutputColour`, BT.709 by default; the image does
/// not record it), with an optional full-resolution alpha plane (straight, not premultiplied).
///
/// Owns its memory. Rows are 64-byte aligned and strides are multiples of 64 so that vector
/// loops and libav (which wants 32/64-byte alignment) can work on the planes in place.
/// Chroma planes are `(width+1)/2 × (height+1)/2`.
public final class YUVImage: @unchecked Sendable {
    public let width: Int
    public let height: Int
    public let y: Plane
    public let u: Plane
    public let v: Plane
    /// Alpha, 0 = transparent, 255 = opaque; `nil` means fully opaque.
    public let a: Plane?
    private let storage: UnsafeMutableRawPointer
    private let byteCount: Int

    public init(width: Int, height: Int, hasAlpha: Bool = false) {
        precondition(width > 0 && height > 0, "YUVImage needs a positive size, got \(width)x\(height)")
        self.width = width
        self.height = height
        let cw = (width + 1) / 2, ch = (height + 1) / 2
        func align(_ n: Int) -> Int { (n + 63) & ~63 }
        let ys = align(width), cs = align(cw)
        let ySize = ys * height, cSize = cs * ch
        let total = ySize + 2 * cSize + (hasAlpha ? ySize : 0) + 64
        storage = UnsafeMutableRawPointer.allocate(byteCount: total, alignment: 64)
        byteCount = total
        let p = storage.assumingMemoryBound(to: UInt8.self)
        y = Plane(base: p, width: width, height: height, stride: ys)
        u = Plane(base: p + ySize, width: cw, height: ch, stride: cs)
        v = Plane(base: p + ySize + cSize, width: cw, height: ch, stride: cs)
        a = hasAlpha ? Plane(base: p + ySize + 2 * cSize, width: width, height: height, stride: ys) : nil
    }

    deinit { storage.deallocate() }

    public var hasAlpha: Bool { a != nil }

    /// Makes this image a copy of `other`, which has the same size and alpha (so the same layout).
    public func copy(from other: YUVImage) {
        precondition(other.width == width && other.height == height && other.hasAlpha == hasAlpha,
                     "copying a \(other.width)x\(other.height) image into a \(width)x\(height) one")
        storage.copyMemory(from: other.storage, byteCount: byteCount)
    }

    /// Fills every pixel with one colour (alpha plane, if any, with `alpha`).
    public func fill(y yv: UInt8, u uv: UInt8, v vv: UInt8, alpha: UInt8 = 255) {
        for (plane, value) in [(y, yv), (u, uv), (v, vv)] {
            for r in 0..<plane.height { plane.row(r).update(repeating: value, count: plane.width) }
        }
        if let a { for r in 0..<a.height { a.row(r).update(repeating: alpha, count: a.width) } }
    }
}
