/// A JSON syntax error with the 1-based line and column (in Unicode scalars) where it was found.
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var message: String
    public init(line: Int, column: Int, message: String) {
        self.line = line; self.column = column; self.message = message
    }
    /// `line:column: message`, the form editors jump to.
    public var description: String { "\(line):\(column): \(message)" }
}

/// A strict RFC 8259 JSON parser producing `JSONValue`.
///
/// Strict on purpose: compositions are written by hand, and every leniency (comments,
/// trailing commas, duplicate keys, lone surrogates, invalid UTF-8) would hide a typo. The
/// only tolerance is a leading UTF-8 byte-order mark. Nesting is limited to `maximumDepth`
/// so hostile input cannot exhaust the stack.
public struct JSONParser {
    public static let maximumDepth = 256

    private let bytes: [UInt8]
    private var offset = 0
    private var depth = 0

    /// Parses one JSON document (surrounding whitespace allowed, nothing else after it).
    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        return try parser.parseDocument()
    }

    /// Parses the UTF-8 encoding of `text`.
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { offset = 3 }
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if offset < bytes.count { throw error("unexpected \(describeCurrent()) after the document") }
        return value
    }

    // MARK: - Values

    private mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        guard offset < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return .object(try parseObject())
        case UInt8(ascii: "["): return .array(try parseArray())
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected \(describeCurrent()), expected a value")
        }
    }

    private mutating func enterContainer() throws(JSONSyntaxError) {
        depth += 1
        if depth > JSONParser.maximumDepth { throw error("nesting deeper than \(JSONParser.maximumDepth) levels") }
    }

    private mutating func parseObject() throws(JSONSyntaxError) -> JSONObject {
        try enterContainer()
        defer { depth -= 1 }
        offset += 1 // {
        var members: [JSONObject.Member] = []
        var seen: Set<String> = []
        skipWhitespace()
        if peek(UInt8(ascii: "}")) { offset += 1; return JSONObject(members) }
        while true {
            skipWhitespace()
            guard peek(UInt8(ascii: "\"")) else { throw error("unexpected \(describeCurrent()), expected a string key") }
            let keyOffset = offset
            let key = try parseString()
            guard seen.insert(key).inserted else {
                throw error("duplicate key \"\(key)\"", at: keyOffset)
            }
            skipWhitespace()
            guard peek(UInt8(ascii: ":")) else { throw error("unexpected \(describeCurrent()), expected ':'") }
            offset += 1
            skipWhitespace()
            let value = try parseValue()
            members.append(.init(key: key, value: value))
            skipWhitespace()
            if peek(UInt8(ascii: ",")) { offset += 1; continue }
            if peek(UInt8(ascii: "}")) { offset += 1; return JSONObject(members) }
            throw error("unexpected \(describeCurrent()), expected ',' or '}'")
        }
    }

    private mutating func parseArray() throws(JSONSyntaxError) -> [JSONValue] {
        try enterContainer()
        defer { depth -= 1 }
        offset += 1 // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek(UInt8(ascii: "]")) { offset += 1; return elements }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            if peek(UInt8(ascii: ",")) { offset += 1; continue }
            if peek(UInt8(ascii: "]")) { offset += 1; return elements }
            throw error("unexpected \(describeCurrent()), expected ',' or ']'")
        }
    }

    private mutating func expectLiteral(_ word: String) throws(JSONSyntaxError) {
        let literal = Array(word.utf8)
        guard bytes.count - offset >= literal.count, bytes[offset..<offset + literal.count].elementsEqual(literal) else {
            throw error("unexpected \(describeCurrent()), expected a value")
        }
        offset += literal.count
    }

    // MARK: - Numbers

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, returned as source text.
    private mutating func parseNumber() throws(JSONSyntaxError) -> String {
        let start = offset
        if peek(UInt8(ascii: "-")) { offset += 1 }
        guard let first = current, isDigit(first) else { throw error("expected a digit") }
        offset += 1
        if first == UInt8(ascii: "0") {
            if let c = current, isDigit(c) { throw error("leading zeros are not allowed in numbers") }
        } else {
            skipDigits()
        }
        if peek(UInt8(ascii: ".")) {
            offset += 1
            guard let c = current, isDigit(c) else { throw error("expected a digit after '.'") }
            skipDigits()
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            offset += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { offset += 1 }
            guard let c = current, isDigit(c) else { throw error("expected a digit in the exponent") }
            skipDigits()
        }
        return String(decoding: bytes[start..<offset], as: UTF8.self)
    }

    private mutating func skipDigits() {
        while let c = current, isDigit(c) { offset += 1 }
    }

    // MARK: - Strings

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        offset += 1 // opening quote
        var scalars = String.UnicodeScalarView()
        var runStart = offset
        // Copies the unescaped bytes since `runStart`, checking they are valid UTF-8.
        func flush(_ end: Int, into scalars: inout String.UnicodeScalarView) throws(JSONSyntaxError) {
            guard end > runStart else { return }
            var iterator = bytes[runStart..<end].makeIterator()
            var decoder = UTF8()
            var position = runStart
            while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let s):
                    scalars.append(s)
                    position += UTF8.width(s)
                case .emptyInput:
                    return
                case .error:
                    throw error("invalid UTF-8 in string", at: position)
                }
            }
        }
        while true {
            guard let c = current else { throw error("unterminated string") }
            switch c {
            case UInt8(ascii: "\""):
                try flush(offset, into: &scalars)
                offset += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                try flush(offset, into: &scalars)
                scalars.append(try parseEscape())
                runStart = offset
            case 0..<0x20:
                throw error("control character U+\(hex4(UInt32(c))) must be escaped in a string")
            default:
                offset += 1
            }
        }
    }

    /// Parses one escape sequence starting at the backslash, joining UTF-16 surrogate pairs.
    private mutating func parseEscape() throws(JSONSyntaxError) -> Unicode.Scalar {
        let escapeStart = offset
        offset += 1 // backslash
        guard let c = current else { throw error("unterminated string") }
        offset += 1
        switch c {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try parseHex4()
            switch unit {
            case 0xD800...0xDBFF:
                guard bytes.count - offset >= 2, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") else {
                    throw error("unpaired high surrogate \\u\(hex4(unit))", at: escapeStart)
                }
                offset += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw error("high surrogate \\u\(hex4(unit)) not followed by a low surrogate", at: escapeStart)
                }
                let value = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                return Unicode.Scalar(value)!
            case 0xDC00...0xDFFF:
                throw error("unpaired low surrogate \\u\(hex4(unit))", at: escapeStart)
            default:
                return Unicode.Scalar(unit)!
            }
        default:
            throw error("invalid escape sequence '\\\(describe(c))'", at: escapeStart)
        }
    }

    private mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let c = current else { throw error("unterminated \\u escape") }
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw error("expected 4 hex digits after \\u")
            }
            value = value << 4 | digit
            offset += 1
        }
        return value
    }

    // MARK: - Helpers

    private var current: UInt8? { offset < bytes.count ? bytes[offset] : nil }
    private func peek(_ byte: UInt8) -> Bool { current == byte }
    private func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

    private mutating func skipWhitespace() {
        while let c = current, c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { offset += 1 }
    }

    private func describeCurrent() -> String {
        guard let c = current else { return "end of input" }
        return "'\(describe(c))'"
    }

    private func describe(_ c: UInt8) -> String {
        if c >= 0x20 && c < 0x7F { return String(UnicodeScalar(c)) }
        if c >= 0x80 {
            // Show the whole character when the bytes form one, not a lone lead byte.
            var iterator = bytes[offset...].prefix(4).makeIterator()
            var decoder = UTF8()
            if case .scalarValue(let s) = decoder.decode(&iterator) { return String(s) }
        }
        return "\\u{\(String(c, radix: 16))}"
    }

    private func hex4(_ v: UInt32) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }

    /// The error at `position` (default: the current offset), with its line and column.
    private func error(_ message: String, at position: Int? = nil) -> JSONSyntaxError {
        let end = min(position ?? offset, bytes.count)
        var line = 1, column = 1
        for byte in bytes[..<end] {
            if byte == 0x0A { line += 1; column = 1 }
            else if byte & 0xC0 != 0x80 { column += 1 } // count scalars, not continuation bytes
        }
        return JSONSyntaxError(line: line, column: column, message: message)
    }
}
