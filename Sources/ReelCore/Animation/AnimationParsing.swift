/// Reading the animation object of docs/composition.md ("Animations"): Core Animation's
/// keyframe form (`values`, `keyTimes`, `timingFunction`, `autoreverses`, `repeat`) or its
/// basic form (`from`, `to`), with `duration` and `begin`.
extension JSONFieldReader {
    /// The keys of an animation object (an overlay animation adds `property`).
    static let animationKeys = ["from", "to", "values", "keyTimes", "timingFunction", "duration", "begin", "autoreverses", "repeat"]

    /// The animation object at `path`, its values read by `read`. `extraKeys` are further keys
    /// the caller allows and reads itself (an overlay animation's `property`).
    func keyframeAnimation<V>(_ value: JSONValue, at path: String, extraKeys: [String] = [],
                              _ read: (JSONValue, String) -> V?) -> KeyframeAnimation<V>? {
        guard let o = object(value, at: path, keys: extraKeys + Self.animationKeys) else { return nil }
        return keyframeAnimation(o, at: path, read)
    }

    /// The animation members of the object `o` at `path` (unknown keys already checked).
    func keyframeAnimation<V>(_ o: JSONObject, at path: String, _ read: (JSONValue, String) -> V?) -> KeyframeAnimation<V>? {
        let fromTo = o.contains(key: "from") || o.contains(key: "to")
        var values: [V]?
        switch (fromTo, o.contains(key: "values")) {
        case (true, true):
            report(path, "give either from and to, or values, not both")
        case (false, false):
            report(path, "needs the values to animate through: from and to, or values")
        case (true, false):
            let from = required(o, "from", at: path, read), to = required(o, "to", at: path, read)
            if let from, let to { values = [from, to] }
        case (false, true):
            values = required(o, "values", at: path) { array($0, at: $1, read) }
        }
        let keyTimes = optional(o, "keyTimes", at: path) { array($0, at: $1, fraction) }
        let timing = optional(o, "timingFunction", at: path, timingFunction)
        let duration = required(o, "duration", at: path, time)
        let begin = optional(o, "begin", at: path, time)
        let autoreverses = optional(o, "autoreverses", at: path, bool)
        let repeatCount = optional(o, "repeat", at: path, animationRepeat)
        guard let values, let duration else { return nil }
        return KeyframeAnimation(values: values, keyTimes: keyTimes, timingFunction: timing ?? .linear, duration: duration,
                                 begin: begin ?? .zero, autoreverses: autoreverses ?? false,
                                 repeatCount: repeatCount ?? .once, writtenAsFromTo: fromTo)
    }

    /// A number, or an animation object of numbers (the same object as an overlay animation,
    /// without `property`): how an animatable parameter, such as a filter's, is written.
    func animatedNumber(_ value: JSONValue, at path: String) -> AnimatedNumber? {
        switch value {
        case .number: return double(value, at: path).map(AnimatedNumber.constant)
        case .object: return keyframeAnimation(value, at: path, double).map(AnimatedNumber.animated)
        default:
            report(path, "must be a number or an animation object ({\"values\": […], \"duration\": …} or {\"from\", \"to\", \"duration\"}), not \(value.typeName)")
            return nil
        }
    }

    /// `"linear"`, `"easeIn"`, `"easeOut"`, `"easeInEaseOut"` or `{"controlPoints": [x1, y1, x2, y2]}`.
    func timingFunction(_ value: JSONValue, at path: String) -> TimingFunction? {
        let names = TimingFunction.named.map { "\"\($0.name)\"" }.joined(separator: ", ")
        switch value {
        case .string(let s):
            guard let named = TimingFunction.named.first(where: { $0.name == s }) else {
                report(path, "must be one of \(names) or {\"controlPoints\": [x1, y1, x2, y2]}, not \"\(s)\"")
                return nil
            }
            return named.function
        case .object:
            guard let o = object(value, at: path, keys: ["controlPoints"]),
                  let points = required(o, "controlPoints", at: path, { array($0, at: $1, double) }) else { return nil }
            guard case .array(let written) = o["controlPoints"], written.count == 4 else {
                report(JSONFieldReader.child(path, "controlPoints"), "must be 4 numbers [x1, y1, x2, y2]: the Bézier's two control points")
                return nil
            }
            guard points.count == 4 else { return nil } // a bad number was reported at its index
            return .cubicBezier(x1: points[0], y1: points[1], x2: points[2], y2: points[3])
        default:
            report(path, "must be one of \(names) or {\"controlPoints\": [x1, y1, x2, y2]}, not \(value.typeName)")
            return nil
        }
    }

    /// `true` (for ever), `false` (once) or a number of repetitions (at most 6 decimals).
    func animationRepeat(_ value: JSONValue, at path: String) -> AnimationRepeat? {
        switch value {
        case .bool(let forever): return forever ? .forever : .once
        case .number(let text):
            return exactDecimal(text, at: path, what: "a repeat count").map(AnimationRepeat.count)
        default:
            report(path, "must be true (for ever), false (once) or a number of repetitions, not \(value.typeName)")
            return nil
        }
    }

    /// A fraction such as a key time: a number with at most 6 decimals, or a string `"N/D"`.
    func fraction(_ value: JSONValue, at path: String) -> Rational? {
        switch value {
        case .number(let text): return exactDecimal(text, at: path, what: "a fraction")
        case .string: return time(value, at: path)
        default:
            report(path, "must be a fraction: a number (at most 6 decimals) or a string \"N/D\", not \(value.typeName)")
            return nil
        }
    }

    /// The exact value of a JSON number with at most `maximumTimeDecimals` decimals and no exponent.
    func exactDecimal(_ text: String, at path: String, what: String) -> Rational? {
        if text.contains(where: { $0 == "e" || $0 == "E" }) {
            report(path, "write \(what) without an exponent")
            return nil
        }
        if let dot = text.firstIndex(of: "."), text[text.index(after: dot)...].count > Self.maximumTimeDecimals {
            report(path, "\(text) has more than \(Self.maximumTimeDecimals) decimals; write it exactly as \"N/D\"")
            return nil
        }
        guard let r = Rational(parsing: text) else {
            report(path, "\(text) is out of range")
            return nil
        }
        return r
    }
}
