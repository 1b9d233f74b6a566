/// One line split by the grammar of proto/PROTOCOL.md §2: a verb, positional arguments, then
/// `key=value` arguments (values already percent-decoded).
///
/// The reading side is a consuming cursor: each accessor removes the key it reads, and
/// `finish()` fails on anything left over, so unknown keys are errors as the spec requires.
struct ProtocolLine {
    let verb: String
    private(set) var positionals: [String]
    private var fields: [String: String]
    private var consumedPositionals = 0

    /// Splits `text` (one line without its `\n`). `ERR` lines are handled by the caller.
    init(parsing text: String) throws(ReelProtocolError) {
        let tokens = text.utf8.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard let first = tokens.first, !first.isEmpty,
              first.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
            throw ReelProtocolError(.malformed, "a line must start with an upper-case verb")
        }
        verb = String(decoding: first, as: UTF8.self)
        positionals = []
        fields = [:]
        for token in tokens.dropFirst() {
            let token = Substring(token)
            if let equals = token.firstIndex(of: "=") {
                let key = token[..<equals]
                guard ProtocolLine.isValidKey(key) else {
                    throw ReelProtocolError(.malformed, "bad argument name '\(key)'")
                }
                guard let value = PercentEncoding.decode(token[token.index(after: equals)...]) else {
                    throw ReelProtocolError(.malformed, "bad value for '\(key)'")
                }
                guard fields.updateValue(value, forKey: String(key)) == nil else {
                    throw ReelProtocolError(.malformed, "duplicate argument '\(key)'")
                }
            } else {
                guard fields.isEmpty else {
                    throw ReelProtocolError(.malformed, "positional argument after key=value arguments")
                }
                guard !token.isEmpty, let value = PercentEncoding.decode(token) else {
                    throw ReelProtocolError(.malformed, "bad positional argument (double space?)")
                }
                positionals.append(value)
            }
        }
    }

    static func isValidKey(_ key: Substring) -> Bool {
        guard let first = key.utf8.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else { return false }
        return key.utf8.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "_")
        }
    }

    mutating func positional(_ what: String) throws(ReelProtocolError) -> String {
        guard consumedPositionals < positionals.count else {
            throw ReelProtocolError(.malformed, "\(verb): missing \(what)")
        }
        consumedPositionals += 1
        return positionals[consumedPositionals - 1]
    }

    mutating func optionalString(_ key: String) -> String? {
        fields.removeValue(forKey: key)
    }

    mutating func string(_ key: String) throws(ReelProtocolError) -> String {
        guard let value = fields.removeValue(forKey: key) else {
            throw ReelProtocolError(.malformed, "\(verb): missing \(key)=")
        }
        return value
    }

    /// A non-empty string value.
    mutating func name(_ key: String) throws(ReelProtocolError) -> String {
        let value = try string(key)
        guard !value.isEmpty else { throw ReelProtocolError(.malformed, "\(verb): \(key)= must not be empty") }
        return value
    }

    /// A canonical non-negative decimal integer within `range`.
    mutating func integer(_ key: String, in range: ClosedRange<Int64> = 0...Int64.max) throws(ReelProtocolError) -> Int64 {
        let text = try string(key)
        guard let value = ProtocolLine.canonicalInteger(text), range.contains(value) else {
            throw ReelProtocolError(.malformed, "\(verb): \(key)=\(text) is not an integer in \(range)")
        }
        return value
    }

    /// A canonical decimal integer within `range` that may be negative (`-5`; never `-0`).
    mutating func signedInteger(_ key: String, in range: ClosedRange<Int64>) throws(ReelProtocolError) -> Int64 {
        let text = try string(key)
        let value: Int64?
        if text.hasPrefix("-") {
            value = ProtocolLine.canonicalInteger(String(text.dropFirst())).flatMap { $0 == 0 ? nil : -$0 }
        } else {
            value = ProtocolLine.canonicalInteger(text)
        }
        guard let value, range.contains(value) else {
            throw ReelProtocolError(.malformed, "\(verb): \(key)=\(text) is not an integer in \(range)")
        }
        return value
    }

    mutating func optionalInteger(_ key: String, in range: ClosedRange<Int64> = 0...Int64.max) throws(ReelProtocolError) -> Int64? {
        guard fields[key] != nil else { return nil }
        return try integer(key, in: range)
    }

    /// A non-negative decimal number of at most 9 digits before the point and 6 after it
    /// (`0.85`, `12`; no sign, exponent or leading `.`), if present.
    mutating func optionalDecimal(_ key: String) throws(ReelProtocolError) -> Double? {
        guard let text = fields.removeValue(forKey: key) else { return nil }
        guard let value = ProtocolLine.canonicalDecimal(text) else {
            throw ReelProtocolError(.malformed, "\(verb): \(key)=\(text) is not a decimal number such as 0.85 "
                                    + "(at most \(Self.maxDecimalDigits) digits, \(Self.maxDecimalPlaces) after the point)")
        }
        return value
    }

    static let maxDecimalDigits = 9
    static let maxDecimalPlaces = 6

    /// `digits[.digits]` within the limits of `optionalDecimal`, or nil.
    static func canonicalDecimal(_ text: String) -> Double? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let whole = parts.first, (1...maxDecimalDigits).contains(whole.count),
              whole.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        if parts.count == 2 {
            let fraction = parts[1]
            guard (1...maxDecimalPlaces).contains(fraction.count), fraction.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        }
        return Double(text)
    }

    /// `value` as `optionalDecimal` reads it: rounded to 6 places, without trailing zeros.
    static func decimal(_ value: Double) -> String {
        let millionths = Int64((max(0, value) * 1_000_000).rounded())
        var fraction = String(millionths % 1_000_000)
        fraction = String(repeating: "0", count: maxDecimalPlaces - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        let whole = String(millionths / 1_000_000)
        return fraction.isEmpty ? whole : whole + "." + fraction
    }

    /// 64 lower-case hex digits: a SHA-256 digest, a nonce or a MAC.
    mutating func hex256(_ key: String) throws(ReelProtocolError) -> String {
        let value = try string(key)
        guard ProtocolLine.isHex256(value) else {
            throw ReelProtocolError(.malformed, "\(verb): \(key)= must be 64 lower-case hex digits")
        }
        return value
    }

    /// `upload=`: a multipart upload's id as the store made it (1 to 1024 printable characters).
    mutating func upload() throws(ReelProtocolError) -> String {
        let value = try name("upload")
        guard value.utf8.count <= 1024, value.utf8.allSatisfy({ (33...126).contains($0) }) else {
            throw ReelProtocolError(.malformed, "\(verb): upload= must be 1 to 1024 printable characters")
        }
        return value
    }

    mutating func optionalUpload() throws(ReelProtocolError) -> String? {
        fields["upload"] == nil ? nil : try upload()
    }

    mutating func list(_ key: String) throws(ReelProtocolError) -> [String] {
        let value = try string(key)
        return value.isEmpty ? [] : value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    }

    /// Fails if any argument was not consumed: unknown keys are errors (§2).
    func finish() throws(ReelProtocolError) {
        if consumedPositionals < positionals.count {
            throw ReelProtocolError(.malformed, "\(verb): unexpected argument '\(positionals[consumedPositionals])'")
        }
        if let key = fields.keys.sorted().first {
            throw ReelProtocolError(.malformed, "\(verb): unknown argument '\(key)'")
        }
    }

    static func canonicalInteger(_ text: String) -> Int64? {
        let utf8 = text.utf8
        guard let first = utf8.first, utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        if first == UInt8(ascii: "0") && utf8.count > 1 { return nil }
        return Int64(text)
    }

    static func isHex256(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
        }
    }
}

/// Builds one line in the spec's key order, percent-encoding every value.
struct LineWriter {
    private(set) var text: String

    init(_ verb: String) { text = verb }

    mutating func positional(_ value: String) { text += " " + PercentEncoding.encode(value) }
    mutating func add(_ key: String, _ value: String) { text += " \(key)=" + PercentEncoding.encode(value) }
    mutating func add(_ key: String, _ value: some BinaryInteger) { text += " \(key)=\(value)" }
    mutating func add(_ key: String, list: [String]) { text += " \(key)=" + list.map(PercentEncoding.encode).joined(separator: ",") }
    /// `offset= total= size=` of a ranged message (`DATA`, `PUT`, `RESULTPART`).
    mutating func addRange(offset: Int64, total: Int64, size: Int) {
        add("offset", offset)
        add("total", total)
        add("size", size)
    }
}
