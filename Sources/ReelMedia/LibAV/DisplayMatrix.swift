import CFFmpeg
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import ReelCore

/// The preferred transform of a video stream, read from its display matrix
/// (`AV_PKT_DATA_DISPLAYMATRIX`, i.e. the MP4/MOV `tkhd` matrix).
enum DisplayMatrix {
    /// The stream's display matrix as a transform from coded pixels to upright display
    /// pixels, translated so the transformed frame's bounding box starts at (0, 0): files
    /// store the translation either as the frame size or as 0, and only the normalised
    /// form composes predictably. Identity when the stream has no matrix.
    static func preferredTransform(of stream: UnsafeMutablePointer<AVStream>) -> AffineTransform {
        var size: Int = 0
        guard let raw = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 9 * 4 else {
            return .identity
        }
        var m = [Int32](repeating: 0, count: 9)
        m.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(start: raw, count: 36)) }
        let width = Double(stream.pointee.codecpar.pointee.width), height = Double(stream.pointee.codecpar.pointee.height)
        return transform(matrix: m, width: width, height: height)
    }

    /// `[a b u; c d v; x y w]` (a–d, x, y in 16.16 fixed point) → normalised transform.
    static func transform(matrix m: [Int32], width: Double, height: Double) -> AffineTransform {
        func fixed(_ v: Int32) -> Double { Double(v) / 65536 }
        var t = AffineTransform(a: fixed(m[0]), b: fixed(m[1]), c: fixed(m[3]), d: fixed(m[4]), tx: fixed(m[6]), ty: fixed(m[7]))
        // Matrices are rotations/flips by multiples of 90°: snap the float noise away.
        for keyPath in [\AffineTransform.a, \.b, \.c, \.d] { t[keyPath: keyPath] = (t[keyPath: keyPath] * 65536).rounded() / 65536 }
        let box = t.boundingBox(of: Rect(x: 0, y: 0, width: width, height: height))
        t.tx -= box.x
        t.ty -= box.y
        return t
    }

    /// Clockwise rotation in degrees that the transform applies on screen (y down), in [0, 360).
    static func rotationDegrees(_ t: AffineTransform) -> Double {
        var degrees = (atan2(t.b, t.a) * 180 / .pi).rounded()
        if degrees < 0 { degrees += 360 }
        return degrees == 360 ? 0 : degrees
    }
}
