/// The bounds inside which a composition's times are exact, and the check that keeps every
/// accepted composition inside them.
///
/// `Rational` keeps numerator and denominator in `Int64`. Two times with large coprime
/// denominators (`"1/9223372036854775783"`) cannot even be added exactly, so the validator
/// refuses a composition unless
/// - every time lies within ±`maximumSeconds`, and
/// - all of its times — the ones written in the file, the default frame duration and the
///   durations of whole assets placed on the timeline — share one **timescale** (the least
///   common multiple of their denominators) of at most `maximumTimescale`.
///
/// Then every time is `n / timescale` with `|n| ≤ 10⁷ · 2³² < 2⁵⁶`: the sums, differences,
/// products with frame numbers (≤ `RenderLimits.maximumFrames`) and quotients that planning
/// and rendering take stay far inside `Int64`, so they are exact. 2³² holds every common media
/// timescale at once (10⁶ for 6-decimal times, 90 000, 48 000, 44 100, 30 000/1001-style
/// NTSC rates: their lcm is 3 528 000 000).
public enum TimeDomain {
    /// Largest magnitude of a time, in seconds (about 115 days).
    public static let maximumSeconds: Int64 = 10_000_000
    /// Largest common denominator of all of a composition's times.
    public static let maximumTimescale: Int64 = 1 << 32

    /// Whether one time lies within ±`maximumSeconds` with a denominator ≤ `maximumTimescale`.
    public static func contains(_ t: Rational) -> Bool {
        t.den <= maximumTimescale && t.num.magnitude <= UInt64(maximumSeconds) * UInt64(t.den)
    }

    /// What is wrong with one time, or nil when it is inside the domain.
    public static func problem(with t: Rational) -> String? {
        if t.den > maximumTimescale {
            return "the fraction \(t) has a denominator above \(maximumTimescale); write the time with at most 6 decimals or a simpler fraction"
        }
        if !contains(t) {
            return "\(TimeFormatting.seconds(t)) is out of range: times must lie within ±\(maximumSeconds) s"
        }
        return nil
    }

    /// The running least common multiple of the denominators seen, refusing any time that
    /// would take it above `maximumTimescale`.
    public struct Timescale: Sendable, Hashable {
        public private(set) var value: Int64 = 1

        public init() {}

        /// Adds `t`'s denominator; false (and no change) if the common timescale would exceed the bound.
        public mutating func include(_ t: Rational) -> Bool {
            let g = Int64(Rational.gcd(UInt128(value), UInt128(t.den)))
            let (lcm, overflow) = (value / g).multipliedReportingOverflow(by: t.den)
            guard !overflow, lcm <= TimeDomain.maximumTimescale else { return false }
            value = lcm
            return true
        }
    }
}

/// Times as users read them in messages: seconds as a decimal, with the exact fraction only
/// when the decimal would hide it (`664/125` reads `5.312 s`; `1001/30000` reads
/// `0.033367 s (1001/30000)`).
public enum TimeFormatting {
    public static func seconds(_ t: Rational) -> String {
        if t.den == 1 { return "\(t.num) s" }
        // Exact in at most 6 decimals (the denominator divides 10⁶): print the decimal alone.
        if 1_000_000 % t.den == 0 {
            return "\(decimal(t, places: 6)) s"
        }
        return "\(decimal(t, places: 6)) s (\(t))"
    }

    /// `t` as a decimal rounded to `places`, trailing zeros removed.
    static func decimal(_ t: Rational, places: Int) -> String {
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let units = t.scaled(to: scale)
        let sign = units < 0 ? "-" : ""
        let magnitude = units.magnitude
        let whole = magnitude / UInt64(scale), fraction = magnitude % UInt64(scale)
        guard fraction != 0 else { return "\(sign)\(whole)" }
        var digits = String(fraction)
        digits = String(repeating: "0", count: places - digits.count) + digits
        while digits.last == "0" { digits.removeLast() }
        return "\(sign)\(whole).\(digits)"
    }
}
