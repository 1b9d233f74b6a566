/// Speed changes of an editor's cut as composition segments: the one place that knows how
/// Reel writes `scaleTimeRange`.
///
/// A clip that plays `scalar` seconds of source per second of timeline (OTIO's
/// `LinearTimeWarp.time_scalar`, an EDL's `M2` speed over its frame rate) becomes a segment
/// with both `sourceRange` (the source used: `duration·scalar` from `sourceStart`) and
/// `duration` (how long it plays): the composition format's time-scaled segment.
///
/// The composition's speed range (1/16× to 16×) is checked when the composition is validated,
/// with the clip's segment path in the message.
enum TimeWarpMapping {
    /// The segment for a clip at `at` playing `duration` of timeline from `sourceStart` at
    /// `scalar` (> 0) times normal speed.
    static func segment(asset: String, at: Rational, duration: Rational, sourceStart: Rational, scalar: Rational) -> JSONValue {
        .object(JSONObject([
            .init(key: "asset", value: .string(asset)),
            .init(key: "at", value: JSONTime.value(at)),
            .init(key: "sourceRange", value: JSONTime.range(start: sourceStart, duration: duration * scalar)),
            .init(key: "duration", value: JSONTime.value(duration)),
        ]))
    }
}

/// Times as the composition format writes them: a whole number of seconds as a JSON number,
/// anything else as an exact `"N/D"` string.
enum JSONTime {
    static func value(_ t: Rational) -> JSONValue {
        t.den == 1 ? .number("\(t.num)") : .string("\(t.num)/\(t.den)")
    }
    static func range(start: Rational, duration: Rational) -> JSONValue {
        .object(JSONObject([.init(key: "start", value: value(start)), .init(key: "duration", value: value(duration))]))
    }
}
