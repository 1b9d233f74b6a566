/// A value an animation can move between keyframes: straight-line interpolation, as Core
/// Animation interpolates numbers and points in its linear calculation mode.
public protocol Interpolatable: Hashable, Sendable, Codable {
    /// `a + (b − a)·f`; `f` may lie outside 0…1 when a timing function overshoots.
    static func interpolate(_ a: Self, _ b: Self, _ f: Double) -> Self
}

extension Double: Interpolatable {
    public static func interpolate(_ a: Double, _ b: Double, _ f: Double) -> Double { a + (b - a) * f }
}

extension Rect: Interpolatable {
    /// Each of x, y, width and height on its own, as AVFoundation's crop rectangle ramps do.
    public static func interpolate(_ a: Rect, _ b: Rect, _ f: Double) -> Rect {
        Rect(x: Double.interpolate(a.x, b.x, f), y: Double.interpolate(a.y, b.y, f),
             width: Double.interpolate(a.width, b.width, f), height: Double.interpolate(a.height, b.height, f))
    }
}

extension Point: Interpolatable {
    public static func interpolate(_ a: Point, _ b: Point, _ f: Double) -> Point {
        Point(x: Double.interpolate(a.x, b.x, f), y: Double.interpolate(a.y, b.y, f))
    }
}
