/// The speeds a time-scaled segment may play at (`scaleTimeRange`: a `sourceRange` played in
/// another `duration`).
///
/// 1/16× to 16×: the range AVFoundation's own time-pitch algorithms are usually used in, and
/// within which both audio paths stay clean — Rubber Band keeps the pitch of speech and music
/// there, and the resampler of `"varispeed"` never needs more than 16 input samples per output
/// sample.
public enum SegmentSpeed {
    public static let slowest = Rational(1, 16)
    public static let fastest = Rational(16)

    /// What is wrong with playing `sourceDuration` of source in `duration`, or nil.
    public static func problem(sourceDuration: Rational, duration: Rational) -> String? {
        let speed = sourceDuration / duration
        guard speed < slowest || speed > fastest else { return nil }
        return "plays sourceRange (\(TimeFormatting.seconds(sourceDuration))) in \(TimeFormatting.seconds(duration)), a speed of "
            + "\(describe(speed)); speeds from 1/16× to 16× are accepted, so duration must lie between "
            + "\(TimeFormatting.seconds(sourceDuration / fastest)) and \(TimeFormatting.seconds(sourceDuration / slowest))"
    }

    /// `2×`, `0.5×`, `1/3×`: the decimal when it is exact in 6 places, else the fraction.
    public static func describe(_ speed: Rational) -> String {
        1_000_000 % speed.den == 0 ? "\(TimeFormatting.decimal(speed, places: 6))×" : "\(speed)×"
    }
}
