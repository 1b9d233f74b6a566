/// Exact rates and times from editors' files.
///
/// OpenTimelineIO stores a `RationalTime` as two doubles, `value` and `rate`, and an editor writes
/// NTSC rates as decimals (`23.976`, `29.97`, or the double nearest 24000/1001). Reel keeps time
/// as exact fractions, so each double is turned into the fraction it stands for — never used as
/// a float. The rules (docs/interchange.md, "Times and rates"):
///
/// - **Rates.** A rate within 10⁻⁶ of a whole number is that number. Otherwise, a rate within
///   0.005 of `n·1000/1001` for a whole `n ≥ 10` is that NTSC rate (23.976, 23.98 and
///   23.976023976… are all `24000/1001`; 29.97 is `30000/1001`; 59.94 is `60000/1001`). Any
///   other rate is the exact decimal it is written as (12.5 → 25/2), to at most 6 decimals.
/// - **Values** (frame counts) within 10⁻⁶ of a whole number are that number (floating-point
///   noise such as 12.000000000000002 is not a fraction of a frame); others are their decimal,
///   rounded to 6 decimals.
/// - A time is `value / rate` seconds, exactly.
public enum EditRate {
    /// The NTSC tolerance: decimals written for NTSC rates are at most this far off.
    static let ntscTolerance = 0.005
    /// Below this distance a double is taken as the whole number it is near.
    static let wholeTolerance = 1e-6

    /// The exact rate a double stands for, or nil when it is not a usable rate (≤ 0, not
    /// finite, above 10⁷ per second).
    public static func exact(_ rate: Double) -> Rational? {
        guard rate.isFinite, rate > 0, rate <= 10_000_000 else { return nil }
        let whole = rate.rounded()
        if abs(rate - whole) < wholeTolerance, whole >= 1 { return Rational(Int64(whole)) }
        let n = (rate * 1.001).rounded()
        if n >= 10, abs(rate - n * 1000 / 1001) <= ntscTolerance { return Rational(Int64(n) * 1000, 1001) }
        return decimal(rate)
    }

    /// A frame count (or any OTIO `value`) as an exact fraction: whole when within 10⁻⁶ of a
    /// whole number, else the decimal rounded to 6 places. nil when not finite or beyond ±10¹².
    public static func value(_ value: Double) -> Rational? {
        guard value.isFinite, value.magnitude <= 1e12 else { return nil }
        let whole = value.rounded()
        if abs(value - whole) < wholeTolerance { return Rational(Int64(whole)) }
        return decimal(value)
    }

    /// `value / rate` seconds, or nil when either is unusable.
    public static func seconds(value: Double, rate: Double) -> Rational? {
        guard let v = Self.value(value), let r = exact(rate) else { return nil }
        return v / r
    }

    /// The double rounded to 6 decimals, exactly.
    private static func decimal(_ x: Double) -> Rational? {
        let scaled = (x * 1_000_000).rounded()
        guard scaled.magnitude < 9e15 else { return nil }
        return Rational(Int64(scaled), 1_000_000)
    }

    /// Parses a JSON number's text (exponents allowed) as a double.
    static func double(_ text: String) -> Double? { Double(text) }
}
