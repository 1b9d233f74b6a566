/// An integer pixel size.
public struct PixelSize: Hashable, Sendable, Codable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) { self.width = width; self.height = height }
    public var description: String { "\(width)x\(height)" }
}

/// A point in pixel coordinates (origin top-left, y down).
public struct Point: Hashable, Sendable, Codable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) { self.x = x; self.y = y }
}

/// A rectangle in pixel coordinates (origin top-left, y down).
public struct Rect: Hashable, Sendable, Codable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
    public var maxX: Double { x + width }
    public var maxY: Double { y + height }
    public var center: Point { Point(x: x + width / 2, y: y + height / 2) }
}

/// A CGAffineTransform: `x' = a·x + c·y + tx`, `y' = b·x + d·y + ty`.
///
/// Geometry is floating point on purpose (it positions pixels, it never decides which frame
/// is shown). Composition order follows CoreGraphics: `t.concatenating(u)` applies `t` first,
/// then `u`.
public struct AffineTransform: Hashable, Sendable, Codable, CustomStringConvertible {
    public var a: Double, b: Double, c: Double, d: Double, tx: Double, ty: Double

    public init(a: Double, b: Double, c: Double, d: Double, tx: Double, ty: Double) {
        self.a = a; self.b = b; self.c = c; self.d = d; self.tx = tx; self.ty = ty
    }

    public static let identity = AffineTransform(a: 1, b: 0, c: 0, d: 1, tx: 0, ty: 0)

    public static func translation(_ x: Double, _ y: Double) -> AffineTransform {
        AffineTransform(a: 1, b: 0, c: 0, d: 1, tx: x, ty: y)
    }
    public static func scale(_ sx: Double, _ sy: Double) -> AffineTransform {
        AffineTransform(a: sx, b: 0, c: 0, d: sy, tx: 0, ty: 0)
    }
    /// Rotation by `radians`; positive turns +x towards +y (clockwise on screen, y down),
    /// as `CGAffineTransform(rotationAngle:)` does in a y-down space.
    public static func rotation(_ radians: Double) -> AffineTransform {
        let cs = _cos(radians), sn = _sin(radians)
        return AffineTransform(a: cs, b: sn, c: -sn, d: cs, tx: 0, ty: 0)
    }

    /// `self` first, then `next`.
    public func concatenating(_ next: AffineTransform) -> AffineTransform {
        AffineTransform(
            a: a * next.a + b * next.c, b: a * next.b + b * next.d,
            c: c * next.a + d * next.c, d: c * next.b + d * next.d,
            tx: tx * next.a + ty * next.c + next.tx, ty: tx * next.b + ty * next.d + next.ty)
    }

    public var determinant: Double { a * d - b * c }

    /// The inverse, or nil when the transform is singular.
    public var inverted: AffineTransform? {
        let det = determinant
        guard det != 0, det.isFinite else { return nil }
        return AffineTransform(a: d / det, b: -b / det, c: -c / det, d: a / det,
                               tx: (c * ty - d * tx) / det, ty: (b * tx - a * ty) / det)
    }

    public func apply(_ p: Point) -> Point {
        Point(x: a * p.x + c * p.y + tx, y: b * p.x + d * p.y + ty)
    }

    /// The axis-aligned bounding box of `rect` after this transform.
    public func boundingBox(of rect: Rect) -> Rect {
        let pts = [Point(x: rect.x, y: rect.y), Point(x: rect.maxX, y: rect.y),
                   Point(x: rect.x, y: rect.maxY), Point(x: rect.maxX, y: rect.maxY)].map(apply)
        let xs = pts.map(\.x), ys = pts.map(\.y)
        let minX = xs.min()!, minY = ys.min()!
        return Rect(x: minX, y: minY, width: xs.max()! - minX, height: ys.max()! - minY)
    }

    /// Linear interpolation of each coefficient (what AVFoundation's transform ramps do).
    public func interpolated(to other: AffineTransform, _ f: Double) -> AffineTransform {
        func l(_ x: Double, _ y: Double) -> Double { x + (y - x) * f }
        return AffineTransform(a: l(a, other.a), b: l(b, other.b), c: l(c, other.c), d: l(d, other.d),
                               tx: l(tx, other.tx), ty: l(ty, other.ty))
    }

    public var description: String { "[\(a) \(b) \(c) \(d) \(tx) \(ty)]" }
}

/// An 8-bit straight-alpha RGBA colour.
public struct RGBAColor: Hashable, Sendable, Codable {
    public var r: UInt8, g: UInt8, b: UInt8, a: UInt8
    public init(r: UInt8, g: UInt8, b: UInt8, a: UInt8 = 255) { self.r = r; self.g = g; self.b = b; self.a = a }
    public static let black = RGBAColor(r: 0, g: 0, b: 0)
    public static let white = RGBAColor(r: 255, g: 255, b: 255)

    /// Parses `#RRGGBB` or `#RRGGBBAA`.
    public init?(hex: String) {
        guard hex.hasPrefix("#") else { return nil }
        let digits = hex.dropFirst()
        guard digits.count == 6 || digits.count == 8, let v = UInt32(digits, radix: 16) else { return nil }
        if digits.count == 6 {
            self.init(r: UInt8(v >> 16 & 0xFF), g: UInt8(v >> 8 & 0xFF), b: UInt8(v & 0xFF))
        } else {
            self.init(r: UInt8(v >> 24), g: UInt8(v >> 16 & 0xFF), b: UInt8(v >> 8 & 0xFF), a: UInt8(v & 0xFF))
        }
    }
}
