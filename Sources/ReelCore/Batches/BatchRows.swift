/// The rows of a batch render, read from CSV with a header row (each column heading a
/// variable's name) or from JSON Lines (one JSON object per line, its keys the names).
///
/// A row's cells keep what was written: CSV cells are text, read by each variable's type
/// later exactly as `--set` reads it; a JSON Lines string is text in the same way, while a
/// JSON number, boolean or other value is taken as that value. What is wrong with one row (its
/// quoting, its number of fields, its JSON) stays with that row, so the others can still be
/// checked and rendered; what is wrong with the file as a whole (no header, headings that
/// repeat, a quote that never closes) is in `fileProblems`. Pure: bytes in, values out.
public struct BatchRows: Sendable {
    public enum Format: String, Sendable {
        case csv
        case jsonLines

        /// By the file's extension: `.csv`; `.jsonl` or `.ndjson`. Nil for any other.
        public init?(path: String) {
            let name = path.split(separator: "/").last.map(String.init) ?? path
            guard let dot = name.lastIndex(of: ".") else { return nil }
            switch name[name.index(after: dot)...].lowercased() {
            case "csv": self = .csv
            case "jsonl", "ndjson": self = .jsonLines
            default: return nil
            }
        }
    }

    /// What a cell holds as written.
    public enum Cell: Hashable, Sendable {
        /// Text, read by the variable's type as `--set` reads it.
        case text(String)
        /// A JSON Lines value other than a string, taken as it is.
        case json(JSONValue)

        /// The cell as text in a file name (`-o 'out/{{id}}.mp4'`): text as written, a JSON
        /// value as it reads inside a longer string of a template.
        public var text: String {
            switch self {
            case .text(let text): text
            case .json(let value): PlaceholderText.text(of: value)
            }
        }
    }

    public struct Row: Sendable {
        /// 1-based, counting data rows only (not the header, not blank lines).
        public var number: Int
        /// The 1-based line of the file the row starts on.
        public var line: Int
        /// Column name and cell, in the order written.
        public var cells: [(column: String, cell: Cell)]
        /// What is wrong with the row as written (quoting, field count, JSON), if anything.
        public var problem: String?

        public init(number: Int, line: Int, cells: [(column: String, cell: Cell)], problem: String? = nil) {
            self.number = number; self.line = line; self.cells = cells; self.problem = problem
        }

        public func cell(_ column: String) -> Cell? { cells.first { $0.column == column }?.cell }
    }

    public var format: Format
    /// CSV: the header's columns. JSON Lines: every key some row has, in the order first seen.
    public var columns: [String]
    /// CSV: the header's line.
    public var headerLine: Int?
    public var rows: [Row]
    /// What is wrong with the file as a whole: nothing in it can be rendered until it is fixed.
    public var fileProblems: [BatchProblem]

    /// Reads `bytes` in `format`.
    public static func parse(_ bytes: [UInt8], format: Format) -> BatchRows {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return BatchRows(format: format, columns: [], rows: [],
                             fileProblems: [BatchProblem(.rows, message: "is not UTF-8 text: save it as UTF-8 (in a spreadsheet: CSV UTF-8)")])
        }
        switch format {
        case .csv: return csv(text)
        case .jsonLines: return jsonLines(text)
        }
    }

    private static func csv(_ text: String) -> BatchRows {
        var table = BatchRows(format: .csv, columns: [], rows: [], fileProblems: [])
        let records: [CSV.Record]
        switch CSV.records(text) {
        case .failure(let unclosed):
            table.fileProblems.append(BatchProblem(.rows, line: unclosed.line, message: unclosed.message))
            return table
        case .success(let r):
            records = r
        }
        guard let header = records.first else {
            table.fileProblems.append(BatchProblem(.rows, message: "is empty: write a header row of variable names, then one row per render"))
            return table
        }
        table.headerLine = header.line
        table.columns = header.fields.map { $0.trimmingSpaces }
        if let problem = header.problem { table.fileProblems.append(BatchProblem(.rows, line: header.line, message: "the header: \(problem)")) }
        var seen = Set<String>()
        for (index, column) in table.columns.enumerated() {
            if column.isEmpty {
                table.fileProblems.append(BatchProblem(.rows, line: header.line, message: "the header's column \(index + 1) has no name: "
                                                       + "head each column with a variable's name"))
            } else if !seen.insert(column).inserted {
                table.fileProblems.append(BatchProblem(.rows, line: header.line, column: column,
                                                       message: "is the heading of two columns: give each column its own"))
            }
        }
        if records.count == 1 {
            table.fileProblems.append(BatchProblem(.rows, message: "has a header but no rows: add one row per render below it"))
        }
        for (index, record) in records.dropFirst().enumerated() {
            var row = Row(number: index + 1, line: record.line, cells: [], problem: record.problem)
            if record.fields.count != table.columns.count {
                let fields = record.fields.count == 1 ? "1 field" : "\(record.fields.count) fields"
                row.problem = row.problem ?? "has \(fields) but the header has \(table.columns.count) columns: give every row one field per column "
                    + "(quote a field that holds a comma)"
            }
            row.cells = zip(table.columns, record.fields).map { ($0, .text($1)) }
            table.rows.append(row)
        }
        return table
    }

    private static func jsonLines(_ text: String) -> BatchRows {
        var table = BatchRows(format: .jsonLines, columns: [], rows: [], fileProblems: [])
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = Substring(rawLine)
            if line.last == "\r" { line.removeLast() }
            if lineNumber == 1, line.unicodeScalars.first == "\u{FEFF}" { line = Substring(line.unicodeScalars.dropFirst()) }
            guard line.contains(where: { !$0.isWhitespace }) else { continue }
            var row = Row(number: table.rows.count + 1, line: lineNumber, cells: [])
            do {
                let value = try JSONParser.parse(String(line))
                guard case .object(let object) = value else {
                    row.problem = "is \(value.typeName), not a JSON object: write each row as {\"name\": value, …} on one line"
                    table.rows.append(row)
                    continue
                }
                for member in object {
                    if case .string(let text) = member.value { row.cells.append((member.key, .text(text))) } else {
                        row.cells.append((member.key, .json(member.value)))
                    }
                    if !table.columns.contains(member.key) { table.columns.append(member.key) }
                }
            } catch {
                row.problem = "is not a JSON object on one line (character \(error.column): \(error.message)): write each row as "
                    + "{\"name\": value, …} on a line of its own"
            }
            table.rows.append(row)
        }
        if table.rows.isEmpty {
            table.fileProblems.append(BatchProblem(.rows, message: "has no rows: write one JSON object per line, one line per render"))
        }
        return table
    }
}

extension String {
    /// Without spaces and tabs at either end.
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return String(s)
    }
}
