/// Comma-separated values as RFC 4180 writes them: records end at a line break (CRLF, LF or
/// CR), fields are separated by commas, and a field that holds a comma, a quote or a line
/// break is written in double quotes, a quote inside it doubled (`"say ""hi"""`). A quoted
/// field may span lines. Spreadsheets export this form.
///
/// Reading keeps what a person must see to fix a file: each record's line, and what is wrong
/// with its quoting (a quote in the middle of an unquoted field, text after a closing quote),
/// without giving up on the records after it. Only a quoted field that never closes ends the
/// reading, since everything after its opening quote belongs to it. A UTF-8 byte-order mark
/// (what spreadsheets put first) is skipped; blank lines are not records. Pure: text in, values out.
public enum CSV {
    /// One record: its fields in order.
    public struct Record: Hashable, Sendable {
        /// The 1-based line the record starts on.
        public var line: Int
        public var fields: [String]
        /// What is wrong with its quoting, if anything; its fields are then as far as they could be read.
        public var problem: String?

        public init(line: Int, fields: [String], problem: String? = nil) {
            self.line = line; self.fields = fields; self.problem = problem
        }
    }

    /// A quoted field that is never closed: nothing after its opening quote can be read.
    public struct UnclosedQuote: Error, Hashable, Sendable, CustomStringConvertible {
        /// The line of the opening quote.
        public var line: Int
        public var message: String {
            "a quoted field opens here and is never closed: end it with a \" (a quote inside a quoted field is written \"\")"
        }
        public var description: String { "line \(line): \(message)" }
    }

    /// The records of `text`, in order.
    public static func records(_ text: String) -> Result<[Record], UnclosedQuote> {
        var reader = Reader(bytes: Array(text.utf8))
        return reader.read()
    }

    /// One record as a line (no line break): each field as is, or quoted when it holds a comma,
    /// a quote, a line break or spaces at either end.
    public static func line(_ fields: [String]) -> String {
        fields.map(field).joined(separator: ",")
    }

    /// A field as it is written in a record.
    public static func field(_ value: String) -> String {
        let needsQuotes = value.utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
            || value.first == " " || value.last == " "
        guard needsQuotes else { return value }
        return "\"" + value.replacing("\"", with: "\"\"") + "\""
    }

    private struct Reader {
        let bytes: [UInt8]
        var i = 0
        var line = 1

        static let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), lf: UInt8 = 0x0A, cr: UInt8 = 0x0D

        init(bytes: [UInt8]) {
            self.bytes = bytes
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        }

        mutating func read() -> Result<[Record], UnclosedQuote> {
            var records: [Record] = []
            while i < bytes.count {
                let start = line
                // A blank line is no record (a record of one empty field is written "").
                if skipLineBreak() { continue }
                switch record() {
                case .success(let (fields, problem)): records.append(Record(line: start, fields: fields, problem: problem))
                case .failure(let error): return .failure(error)
                }
            }
            return .success(records)
        }

        /// Consumes one line break at `i` (CRLF counts once), counting the line.
        private mutating func skipLineBreak() -> Bool {
            guard i < bytes.count, bytes[i] == Self.lf || bytes[i] == Self.cr else { return false }
            if bytes[i] == Self.cr, i + 1 < bytes.count, bytes[i + 1] == Self.lf { i += 1 }
            i += 1
            line += 1
            return true
        }

        /// Reads fields up to and including the record's line break (or the end).
        private mutating func record() -> Result<([String], String?), UnclosedQuote> {
            var fields: [String] = []
            var problem: String?
            while true {
                var field: [UInt8] = []
                if i < bytes.count, bytes[i] == Self.quote {
                    let opened = line
                    i += 1
                    var closed = false
                    while i < bytes.count {
                        let b = bytes[i]
                        if b == Self.quote {
                            if i + 1 < bytes.count, bytes[i + 1] == Self.quote { field.append(b); i += 2; continue }
                            i += 1
                            closed = true
                            break
                        }
                        if b == Self.lf || (b == Self.cr && !(i + 1 < bytes.count && bytes[i + 1] == Self.lf)) { line += 1 }
                        field.append(b)
                        i += 1
                    }
                    guard closed else { return .failure(UnclosedQuote(line: opened)) }
                    // After the closing quote: a comma, the line's end or the file's end.
                    if i < bytes.count, bytes[i] != Self.comma, bytes[i] != Self.lf, bytes[i] != Self.cr {
                        problem = problem ?? "field \(fields.count + 1) has text after its closing quote: quote the whole field, "
                            + "and write a quote inside it as \"\""
                        while i < bytes.count, bytes[i] != Self.comma, bytes[i] != Self.lf, bytes[i] != Self.cr { field.append(bytes[i]); i += 1 }
                    }
                } else {
                    while i < bytes.count, bytes[i] != Self.comma, bytes[i] != Self.lf, bytes[i] != Self.cr {
                        if bytes[i] == Self.quote {
                            problem = problem ?? "field \(fields.count + 1) has a \" inside it but does not start with one: "
                                + "quote the whole field and double the quote (\"say \"\"hi\"\"\")"
                        }
                        field.append(bytes[i])
                        i += 1
                    }
                }
                fields.append(String(decoding: field, as: UTF8.self))
                if i < bytes.count, bytes[i] == Self.comma {
                    i += 1
                    continue
                }
                _ = skipLineBreak()
                return .success((fields, problem))
            }
        }
    }
}
