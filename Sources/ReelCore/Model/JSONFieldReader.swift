/// Reads typed values out of a `JSONValue` tree while collecting every problem with its path.
///
/// A reader never throws: a value that is missing or malformed is reported and read as nil,
/// so decoding continues and the user sees all problems at once. Objects are read through
/// `object(_:at:keys:)`, which reports every key not in the allowed list (typos must not be
/// silently ignored). Used from one thread during one decode, hence a plain class.
final class JSONFieldReader {
    private(set) var problems: [Problem] = []

    func report(_ path: String, _ message: String) {
        problems.append(Problem(path: path, message: message))
    }

    static func child(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
    static func element(_ path: String, _ index: Int) -> String { "\(path)[\(index)]" }

    // MARK: - Containers

    /// The object at `path`, after reporting any key not in `keys`.
    func object(_ value: JSONValue, at path: String, keys: [String]) -> JSONObject? {
        guard case .object(let object) = value else {
            report(path, "must be an object, not \(value.typeName)")
            return nil
        }
        for key in object.keys where !keys.contains(key) {
            report(Self.child(path, key), "unknown key; expected one of: \(keys.joined(separator: ", "))")
        }
        return object
    }

    /// Each element of the array at `path` read by `read` (nil elements dropped after being reported).
    func array<T>(_ value: JSONValue, at path: String, _ read: (JSONValue, String) -> T?) -> [T]? {
        guard case .array(let elements) = value else {
            report(path, "must be an array, not \(value.typeName)")
            return nil
        }
        return elements.enumerated().compactMap { read($0.element, Self.element(path, $0.offset)) }
    }

    /// A required member: reports `is required` when absent.
    func required<T>(_ object: JSONObject, _ key: String, at path: String, _ read: (JSONValue, String) -> T?) -> T? {
        let childPath = Self.child(path, key)
        guard let value = object[key] else {
            report(childPath, "is required")
            return nil
        }
        return read(value, childPath)
    }

    /// An optional member: nil when absent (a present but malformed value is reported).
    func optional<T>(_ object: JSONObject, _ key: String, at path: String, _ read: (JSONValue, String) -> T?) -> T? {
        guard let value = object[key] else { return nil }
        return read(value, Self.child(path, key))
    }

    // MARK: - Scalars

    func string(_ value: JSONValue, at path: String) -> String? {
        guard case .string(let s) = value else {
            report(path, "must be a string, not \(value.typeName)")
            return nil
        }
        return s
    }

    func bool(_ value: JSONValue, at path: String) -> Bool? {
        guard case .bool(let b) = value else {
            report(path, "must be true or false, not \(value.typeName)")
            return nil
        }
        return b
    }

    /// Largest magnitude of any JSON number read as a `Double` (coordinates, scales, volumes):
    /// far beyond any meaningful value, and small enough that no product the renderer forms
    /// from them can overflow an integer conversion.
    static let maximumMagnitude: Double = 1_000_000_000

    func double(_ value: JSONValue, at path: String) -> Double? {
        guard case .number(let text) = value else {
            report(path, "must be a number, not \(value.typeName)")
            return nil
        }
        guard let d = Double(text), d.isFinite, d.magnitude <= Self.maximumMagnitude else {
            report(path, "number \(text) is out of range (at most ±\(Int(Self.maximumMagnitude)))")
            return nil
        }
        return d
    }

    func int(_ value: JSONValue, at path: String) -> Int? {
        guard case .number(let text) = value else {
            report(path, "must be an integer, not \(value.typeName)")
            return nil
        }
        guard text.allSatisfy({ $0 == "-" || $0.isPlainDigit }) else {
            report(path, "must be an integer, not \(text)")
            return nil
        }
        guard let i = Int(text) else {
            report(path, "integer \(text) is out of range")
            return nil
        }
        return i
    }

    /// A string that must be one of an enum's raw values.
    func choice<E: RawRepresentable & CaseIterable>(_ value: JSONValue, at path: String, _: E.Type) -> E? where E.RawValue == String {
        guard let s = string(value, at: path) else { return nil }
        guard let e = E(rawValue: s) else {
            report(path, "must be one of \(E.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), not \"\(s)\"")
            return nil
        }
        return e
    }

    /// Maximum decimals of a time written as a JSON number: finer values are almost always
    /// a rounded rational (0.0333333…), which must be written exactly as `"N/D"`.
    static let maximumTimeDecimals = 6

    /// A time: a JSON number of seconds with at most 6 decimals, or a string `"N/D"` / `"N"`.
    func time(_ value: JSONValue, at path: String) -> Rational? {
        switch value {
        case .number(let text):
            if text.contains(where: { $0 == "e" || $0 == "E" }) {
                report(path, "write times without an exponent: a decimal number of seconds or \"N/D\"")
                return nil
            }
            if let dot = text.firstIndex(of: "."), text[text.index(after: dot)...].count > Self.maximumTimeDecimals {
                report(path, "time \(text) has more than \(Self.maximumTimeDecimals) decimals; write it exactly as \"N/D\"")
                return nil
            }
            guard let r = Rational(parsing: text) else {
                report(path, "time \(text) is out of range")
                return nil
            }
            return r
        case .string(let text):
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count),
                  let n = Int64(parts[0]), parts[0].allSatisfy({ $0 == "-" || $0.isPlainDigit }),
                  parts.count == 1 || (parts[1].allSatisfy(\.isPlainDigit) && Int64(parts[1]) != nil) else {
                report(path, "must be a time: seconds as a number or a string \"N/D\", not \"\(text)\"")
                return nil
            }
            let d = parts.count == 2 ? Int64(parts[1])! : 1
            guard d != 0 else {
                report(path, "time \"\(text)\" has a zero denominator")
                return nil
            }
            return Rational(n, d)
        default:
            report(path, "must be a time: seconds as a number or a string \"N/D\", not \(value.typeName)")
            return nil
        }
    }

    /// `#RRGGBB` or `#RRGGBBAA`.
    func color(_ value: JSONValue, at path: String) -> RGBAColor? {
        guard let s = string(value, at: path) else { return nil }
        guard s.dropFirst().allSatisfy(\.isHexDigit), let c = RGBAColor(hex: s) else {
            report(path, "must be a colour \"#RRGGBB\" or \"#RRGGBBAA\", not \"\(s)\"")
            return nil
        }
        return c
    }

    // MARK: - Compound values

    /// `{"start": time, "duration": time}`.
    func timeRange(_ value: JSONValue, at path: String) -> TimeRange? {
        guard let o = object(value, at: path, keys: ["start", "duration"]) else { return nil }
        let start = required(o, "start", at: path, time)
        let duration = required(o, "duration", at: path, time)
        guard let start, let duration else { return nil }
        return TimeRange(start: start, duration: duration)
    }

    /// `{"x", "y", "width", "height"}`.
    func rect(_ value: JSONValue, at path: String) -> Rect? {
        guard let o = object(value, at: path, keys: ["x", "y", "width", "height"]) else { return nil }
        let x = required(o, "x", at: path, double), y = required(o, "y", at: path, double)
        let w = required(o, "width", at: path, double), h = required(o, "height", at: path, double)
        guard let x, let y, let w, let h else { return nil }
        return Rect(x: x, y: y, width: w, height: h)
    }

    /// `{"x", "y"}`.
    func point(_ value: JSONValue, at path: String) -> Point? {
        guard let o = object(value, at: path, keys: ["x", "y"]) else { return nil }
        let x = required(o, "x", at: path, double), y = required(o, "y", at: path, double)
        guard let x, let y else { return nil }
        return Point(x: x, y: y)
    }

    /// `{"width", "height"}` in whole pixels.
    func pixelSize(_ value: JSONValue, at path: String) -> PixelSize? {
        guard let o = object(value, at: path, keys: ["width", "height"]) else { return nil }
        let w = required(o, "width", at: path, int), h = required(o, "height", at: path, int)
        guard let w, let h else { return nil }
        return PixelSize(width: w, height: h)
    }

    /// `{"a","b","c","d","tx","ty"}`, all required.
    func affineTransform(_ value: JSONValue, at path: String) -> AffineTransform? {
        let keys = ["a", "b", "c", "d", "tx", "ty"]
        guard let o = object(value, at: path, keys: keys) else { return nil }
        let v = keys.map { required(o, $0, at: path, double) }
        guard v.allSatisfy({ $0 != nil }) else { return nil }
        return AffineTransform(a: v[0]!, b: v[1]!, c: v[2]!, d: v[3]!, tx: v[4]!, ty: v[5]!)
    }

    /// `{"from", "to", "timeRange"}` with `read` for the end values.
    func ramp<V>(_ value: JSONValue, at path: String, _ read: (JSONValue, String) -> V?) -> RampSpec<V>? {
        guard let o = object(value, at: path, keys: ["from", "to", "timeRange"]) else { return nil }
        let from = required(o, "from", at: path, read)
        let to = required(o, "to", at: path, read)
        let range = required(o, "timeRange", at: path, timeRange)
        guard let from, let to, let range else { return nil }
        return RampSpec(from: from, to: to, timeRange: range)
    }
}

extension Character {
    var isPlainDigit: Bool { ("0"..."9").contains(self) }
}
