/// AVFoundation ramp semantics over a sorted, non-overlapping list of ramps: before the first
/// ramp the base value holds; inside a ramp the value is interpolated linearly; after a ramp
/// its `to` holds until the next ramp starts. The interpolation fraction is computed exactly
/// (rational) and only then turned into a `Double`.
///
/// The ramp in force is found by `lastIndex(startingAtOrBefore:hint:)` (binary search, O(1)
/// with a hint when walking forward).
enum RampedValue {
    static func value<V>(at time: Rational, base: V, ramps: [Ramp<V>], hint: inout Int?,
                         interpolate: (V, V, Double) -> V) -> V {
        guard let index = ramps.lastIndex(startingAtOrBefore: time, hint: hint) else { return base }
        hint = index
        let ramp = ramps[index]
        if time >= ramp.end { return ramp.to }
        return interpolate(ramp.from, ramp.to, ((time - ramp.start) / ramp.duration).seconds)
    }

    static func value(at time: Rational, base: Double, ramps: [Ramp<Double>], hint: inout Int?) -> Double {
        value(at: time, base: base, ramps: ramps, hint: &hint) { $0 + ($1 - $0) * $2 }
    }

    static func value(at time: Rational, base: AffineTransform, ramps: [Ramp<AffineTransform>], hint: inout Int?) -> AffineTransform {
        value(at: time, base: base, ramps: ramps, hint: &hint) { $0.interpolated(to: $1, $2) }
    }

    /// A crop rectangle: nil (the whole picture) holds before the first ramp.
    static func value(at time: Rational, base: Rect?, ramps: [Ramp<Rect>]) -> Rect? {
        var hint: Int?
        guard let index = ramps.lastIndex(startingAtOrBefore: time, hint: hint) else { return base }
        return value(at: time, base: ramps[index].from, ramps: [ramps[index]], hint: &hint, interpolate: Rect.interpolate)
    }
}

extension Ramp where V == Double {
    /// This ramp list's value at `time` over `base` (see `RampedValue`).
    public static func evaluate(_ ramps: [Ramp<Double>], base: Double, at time: Rational) -> Double {
        var hint: Int?
        return RampedValue.value(at: time, base: base, ramps: ramps, hint: &hint)
    }
}

extension Ramp where V == AffineTransform {
    /// This ramp list's value at `time` over `base` (see `RampedValue`).
    public static func evaluate(_ ramps: [Ramp<AffineTransform>], base: AffineTransform, at time: Rational) -> AffineTransform {
        var hint: Int?
        return RampedValue.value(at: time, base: base, ramps: ramps, hint: &hint)
    }
}
