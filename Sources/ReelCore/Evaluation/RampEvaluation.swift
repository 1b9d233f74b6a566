/// AVFoundation ramp semantics over a sorted, non-overlapping list of ramps: before the first
/// ramp the base value holds; inside a ramp the value is interpolated linearly; after a ramp
/// its `to` holds until the next ramp starts. The interpolation fraction is computed exactly
/// (rational) and only then turned into a `Double`.
enum RampedValue {
    static func value<V>(at time: Rational, base: V, ramps: [Ramp<V>], interpolate: (V, V, Double) -> V) -> V {
        guard let ramp = ramps.last(where: { $0.start <= time }) else { return base }
        if time >= ramp.end { return ramp.to }
        return interpolate(ramp.from, ramp.to, ((time - ramp.start) / ramp.duration).seconds)
    }

    static func value(at time: Rational, base: Double, ramps: [Ramp<Double>]) -> Double {
        value(at: time, base: base, ramps: ramps) { $0 + ($1 - $0) * $2 }
    }

    static func value(at time: Rational, base: AffineTransform, ramps: [Ramp<AffineTransform>]) -> AffineTransform {
        value(at: time, base: base, ramps: ramps) { $0.interpolated(to: $1, $2) }
    }

    /// A crop rectangle: nil (the whole picture) holds before the first ramp.
    static func value(at time: Rational, base: Rect?, ramps: [Ramp<Rect>]) -> Rect? {
        guard let ramp = ramps.last(where: { $0.start <= time }) else { return base }
        return value(at: time, base: ramp.from, ramps: [ramp], interpolate: Rect.interpolate)
    }
}

extension Ramp where V == Double {
    /// This ramp list's value at `time` over `base` (see `RampedValue`).
    public static func evaluate(_ ramps: [Ramp<Double>], base: Double, at time: Rational) -> Double {
        RampedValue.value(at: time, base: base, ramps: ramps)
    }
}

extension Ramp where V == AffineTransform {
    /// This ramp list's value at `time` over `base` (see `RampedValue`).
    public static func evaluate(_ ramps: [Ramp<AffineTransform>], base: AffineTransform, at time: Rational) -> AffineTransform {
        RampedValue.value(at: time, base: base, ramps: ramps)
    }
}
