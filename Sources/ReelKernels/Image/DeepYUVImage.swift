/// One 16-bit image plane: `height` rows of `width` samples, rows `stride` samples apart.
public struct DeepPlane: @unchecked Sendable {
    public let base: UnsafeMutablePointer<UInt16>
    public let width: Int
    public let height: Int
    public let stride: Int

    @inline(__always) public func row(_ y: Int) -> UnsafeMutablePointer<UInt16> { base + y * stride }
}

/// The working frame of an HDR render: planar Y'CbCr at 16 bits a sample, limited range
/// (Y' 4096…60160, Cb/Cr 4096…61440: the 8-bit codes times 256), in the render's colour space
/// (BT.2020 with PQ or HLG), either 4:2:0 (the frame) or 4:4:4 (a layer as placed, before its
/// chroma is averaged onto the frame's grid). Owns its memory; rows 64-byte aligned.
public final class DeepYUVImage: @unchecked Sendable {
    public let width: Int
    public let height: Int
    /// Whether chroma is half the size each way (4:2:0) or full (4:4:4).
    public let subsampled: Bool
    public let y: DeepPlane
    public let u: DeepPlane
    public let v: DeepPlane
    private let storage: UnsafeMutableRawPointer

    public init(width: Int, height: Int, subsampled: Bool = true) {
        precondition(width > 0 && height > 0, "DeepYUVImage needs a positive size, got \(width)x\(height)")
        self.width = width
        self.height = height
        self.subsampled = subsampled
        let cw = subsampled ? (width + 1) / 2 : width, ch = subsampled ? (height + 1) / 2 : height
        func align(_ n: Int) -> Int { (n + 31) & ~31 }
        let ys = align(width), cs = align(cw)
        let ySize = ys * height, cSize = cs * ch
        storage = UnsafeMutableRawPointer.allocate(byteCount: 2 * (ySize + 2 * cSize) + 64, alignment: 64)
        let p = storage.bindMemory(to: UInt16.self, capacity: ySize + 2 * cSize)
        y = DeepPlane(base: p, width: width, height: height, stride: ys)
        u = DeepPlane(base: p + ySize, width: cw, height: ch, stride: cs)
        v = DeepPlane(base: p + ySize + cSize, width: cw, height: ch, stride: cs)
    }

    deinit { storage.deallocate() }

    public var planes: [DeepPlane] { [y, u, v] }

    /// Fills every pixel with one colour.
    public func fill(y yv: UInt16, u uv: UInt16, v vv: UInt16) {
        for (plane, value) in [(y, yv), (u, uv), (v, vv)] {
            for r in 0..<plane.height { plane.row(r).update(repeating: value, count: plane.width) }
        }
    }
}
