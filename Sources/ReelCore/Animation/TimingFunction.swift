/// The pacing of an animation (`CAMediaTimingFunction`): maps the fraction of one pass that
/// has elapsed to the fraction of the way through the keyframes.
///
/// A Bézier timing function is the cubic curve from (0, 0) to (1, 1) with control points
/// (x1, y1) and (x2, y2): for elapsed fraction `x`, the curve parameter `s` with
/// `Bx(s) = x` is found, and `By(s)` is the result. `x1` and `x2` must lie in 0…1 (then `Bx`
/// is monotonic and `s` unique); `y1` and `y2` may overshoot.
public enum TimingFunction: Hashable, Sendable, Codable {
    /// The identity, computed exactly (no curve): Core Animation's default.
    case linear
    case cubicBezier(x1: Double, y1: Double, x2: Double, y2: Double)

    /// `kCAMediaTimingFunctionEaseIn`: (0.42, 0, 1, 1).
    public static let easeIn = TimingFunction.cubicBezier(x1: 0.42, y1: 0, x2: 1, y2: 1)
    /// `kCAMediaTimingFunctionEaseOut`: (0, 0, 0.58, 1).
    public static let easeOut = TimingFunction.cubicBezier(x1: 0, y1: 0, x2: 0.58, y2: 1)
    /// `kCAMediaTimingFunctionEaseInEaseOut`: (0.42, 0, 0.58, 1).
    public static let easeInEaseOut = TimingFunction.cubicBezier(x1: 0.42, y1: 0, x2: 0.58, y2: 1)

    /// The names the composition format accepts, with what each stands for.
    public static let named: [(name: String, function: TimingFunction)] = [
        ("linear", .linear), ("easeIn", .easeIn), ("easeOut", .easeOut), ("easeInEaseOut", .easeInEaseOut),
    ]

    /// The eased fraction for elapsed fraction `x` (0…1).
    public func ease(_ x: Double) -> Double {
        switch self {
        case .linear:
            return x
        case .cubicBezier(let x1, let y1, let x2, let y2):
            if x <= 0 { return 0 }
            if x >= 1 { return 1 }
            let s = Self.parameter(forX: x, x1: x1, x2: x2)
            return Self.bezier(s, y1, y2)
        }
    }

    /// One coordinate of the curve at parameter `s`: 3(1−s)²s·p1 + 3(1−s)s²·p2 + s³.
    static func bezier(_ s: Double, _ p1: Double, _ p2: Double) -> Double {
        // Horner form of the same polynomial: ((c·s + b)·s + a)·s.
        let a = 3 * p1, b = 3 * (p2 - p1) - a, c = 1 - a - b
        return ((c * s + b) * s + a) * s
    }

    static func bezierSlope(_ s: Double, _ p1: Double, _ p2: Double) -> Double {
        let a = 3 * p1, b = 3 * (p2 - p1) - a, c = 1 - a - b
        return (3 * c * s + 2 * b) * s + a
    }

    /// The `s` in 0…1 with `Bx(s) = x`: Newton's method kept inside a bisection bracket, so it
    /// always converges (Bx is monotonic for x1, x2 in 0…1), to well below 1e-12.
    static func parameter(forX x: Double, x1: Double, x2: Double) -> Double {
        var lo = 0.0, hi = 1.0, s = x
        for _ in 0..<64 {
            let error = bezier(s, x1, x2) - x
            if abs(error) < 1e-14 { return s }
            if error > 0 { hi = s } else { lo = s }
            let slope = bezierSlope(s, x1, x2)
            var next = slope > 1e-12 ? s - error / slope : (lo + hi) / 2
            if !(next > lo && next < hi) { next = (lo + hi) / 2 }
            if next == s { return s }
            s = next
        }
        return s
    }
}
