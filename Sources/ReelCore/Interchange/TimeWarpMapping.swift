/// Speed changes of an editor's cut as composition segments: the one place that knows how
/// Reel writes `scaleTimeRange`.
///
/// A clip that plays `scalar` seconds of source per second of timeline (OTIO's
/// `LinearTimeWarp.time_scalar`, an EDL's `M2` speed over its frame rate) becomes a segment
/// with both `sourceRange` (the source used: `duration·scalar` from `sourceStart`) and
/// `duration` (how long it plays): the composition format's time-scaled segment.
enum TimeWarpMapping {
    /// Whether this Reel renders time-scaled segments (`sourceRange` with a different
    /// `duration`). Until it does, a speed change is refused at import with a message naming
    /// the clip, rather than rendered at the wrong speed.
    static let speedChangesRender = false

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

    /// What a speed change is refused with while `speedChangesRender` is false.
    static func unsupportedMessage(_ description: String) -> String {
        "speed changes need time-scaled segments, which this Reel does not render yet: \(description); "
            + "render the clip at normal speed, or render the speed change in the editor first"
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
