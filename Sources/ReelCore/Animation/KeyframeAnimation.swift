/// How many passes an animation makes (`CAMediaTiming.repeatCount`).
public enum AnimationRepeat: Hashable, Sendable, Codable {
    /// A number of passes > 0, exact; a fraction stops part of the way through the last one.
    case count(Rational)
    /// For as long as the animated thing is shown (`repeatCount = .infinity`).
    case forever

    public static let once = AnimationRepeat.count(.one)
    /// The largest count accepted: far more than any composition needs, and small enough that
    /// every product the evaluation forms stays exact.
    public static let maximumCount = Rational(1_000_000)
}

/// One value animated the way Core Animation animates a layer property: a
/// `CAKeyframeAnimation` (`values`, `keyTimes`, `timingFunction`, `autoreverses`,
/// `repeatCount`) in its linear calculation mode; a `CABasicAnimation` from/to is the
/// two-value case.
///
/// Timing, decided in exact rational time from composition time `t`:
/// - before `begin` the animation has no value (`value(at:)` is nil: the caller's base holds);
/// - one **pass** goes through `values` in `duration`; with `autoreverses` it then goes back in
///   another `duration`, so one repetition lasts `2·duration`;
/// - `repeat` gives the number of repetitions (fractional counts stop part-way) or `.forever`;
///   once they are over, the value where the last one stopped holds (Core Animation with
///   `fillMode = forwards`, `removedOnCompletion = false`).
///
/// Within a pass, the elapsed fraction `x` goes through `timingFunction` (for a reverse pass
/// the fraction runs from 1 back to 0 first, so the pass is the forward one played backwards),
/// and the eased fraction picks the segment between the key times around it; the value is
/// interpolated linearly within that segment. With the linear timing function every step is
/// exact, so at a key time the value is exactly that key's value.
///
/// Invariants once validated (`problems(at:)`): at least two values; `keyTimes`, when given,
/// one per value, from 0 to 1, each ≥ the one before; `duration > 0`; `begin ≥ 0`; a count
/// in (0, `AnimationRepeat.maximumCount`]; Bézier `x1`, `x2` in 0…1.
public struct KeyframeAnimation<Value: Interpolatable>: Hashable, Sendable, Codable {
    public var values: [Value]
    /// Fractions 0…1 of a pass at which each value is reached; nil = evenly spaced.
    public var keyTimes: [Rational]?
    public var timingFunction: TimingFunction
    /// One pass through the values, > 0.
    public var duration: Rational
    /// Composition time at which the first pass starts.
    public var begin: Rational
    public var autoreverses: Bool
    public var repeatCount: AnimationRepeat
    /// Whether the file wrote `from`/`to` rather than `values` (only for naming JSON paths).
    public var writtenAsFromTo: Bool

    public init(values: [Value], keyTimes: [Rational]? = nil, timingFunction: TimingFunction = .linear,
                duration: Rational, begin: Rational = .zero, autoreverses: Bool = false,
                repeatCount: AnimationRepeat = .once, writtenAsFromTo: Bool = false) {
        self.values = values; self.keyTimes = keyTimes; self.timingFunction = timingFunction
        self.duration = duration; self.begin = begin; self.autoreverses = autoreverses
        self.repeatCount = repeatCount; self.writtenAsFromTo = writtenAsFromTo
    }

    /// A `CABasicAnimation`: `from` to `to` in `duration`, linear.
    public static func fromTo(_ from: Value, _ to: Value, duration: Rational, begin: Rational = .zero,
                              repeatCount: AnimationRepeat = .once) -> KeyframeAnimation {
        KeyframeAnimation(values: [from, to], duration: duration, begin: begin, repeatCount: repeatCount, writtenAsFromTo: true)
    }

    /// The value at composition time `time`, or nil before `begin`.
    public func value(at time: Rational) -> Value? {
        guard time >= begin else { return nil }
        return value(atPassFraction: passFraction(at: time))
    }

    /// The value the animation ends on (its first value again after whole autoreversed
    /// repetitions); nil when it repeats for ever.
    public var finalValue: Value? {
        guard case .count(let n) = repeatCount else { return nil }
        return value(atPassFraction: passFraction(afterRepetitions: n))
    }

    /// The elapsed fraction (0…1) of the current pass at `time` ≥ `begin`, before the timing
    /// function, exact.
    func passFraction(at time: Rational) -> Rational {
        let cycle = autoreverses ? duration * 2 : duration
        let repetitions = (time - begin) / cycle
        if case .count(let n) = repeatCount, repetitions >= n { return passFraction(afterRepetitions: n) }
        return passFraction(inRepetition: repetitions - Rational(repetitions.floor))
    }

    /// Where the animation stops after `n` repetitions: the end of the last whole one, or part
    /// of the way through the next.
    private func passFraction(afterRepetitions n: Rational) -> Rational {
        let part = n - Rational(n.floor)
        return passFraction(inRepetition: part.isZero ? .one : part)
    }

    /// `phase` is the fraction of one repetition (0…1); with `autoreverses` its second half
    /// runs the pass backwards.
    private func passFraction(inRepetition phase: Rational) -> Rational {
        guard autoreverses else { return phase }
        let doubled = phase * 2
        return doubled <= .one ? doubled : Rational(2) - doubled
    }

    /// The value at elapsed pass fraction `x`: eased, then interpolated between the keys
    /// around it.
    func value(atPassFraction x: Rational) -> Value {
        let last = values.count - 1
        switch timingFunction {
        case .linear:
            // Exact: the segment is chosen, and its local fraction computed, in rationals.
            let keys = resolvedKeyTimes
            let i = min(max(keys.lastIndex { $0 <= x } ?? 0, 0), last - 1)
            let span = keys[i + 1] - keys[i]
            let f = span.isZero ? 1 : ((x - keys[i]) / span).seconds
            return Value.interpolate(values[i], values[i + 1], f)
        case .cubicBezier:
            let y = timingFunction.ease(x.seconds)
            let keys = resolvedKeyTimes.map(\.seconds)
            // An overshooting curve (y outside 0…1) extrapolates the first or last segment.
            let i = min(max(keys.lastIndex { $0 <= y } ?? 0, 0), last - 1)
            let span = keys[i + 1] - keys[i]
            let f = span == 0 ? 1 : (y - keys[i]) / span
            return Value.interpolate(values[i], values[i + 1], f)
        }
    }

    /// `keyTimes`, or `i / (count − 1)` for value `i`.
    public var resolvedKeyTimes: [Rational] {
        if let keyTimes { return keyTimes }
        let steps = Int64(values.count - 1)
        return (0...steps).map { Rational($0, steps) }
    }
}
