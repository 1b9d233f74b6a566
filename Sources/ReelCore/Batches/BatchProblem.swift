/// Something to fix before a batch renders, placed where the person fixes it: in the template,
/// in the rows file (a row and its line, a column), or in the output pattern (`-o`).
public struct BatchProblem: Error, Hashable, Sendable {
    public enum Source: Hashable, Sendable {
        /// The template file; `message` starts with the JSON path, as `reel validate` prints it.
        case template
        /// The rows file (CSV or JSON Lines).
        case rows
        /// The output pattern given with `-o`.
        case outputPattern
    }

    public var source: Source
    /// The data row (1-based), for a problem of one row.
    public var row: Int?
    /// The 1-based line of the rows file.
    public var line: Int?
    /// The column (a variable's name, or a name the output pattern uses).
    public var column: String?
    /// What is wrong and what to do: a sentence without the place.
    public var message: String

    public init(_ source: Source, row: Int? = nil, line: Int? = nil, column: String? = nil, message: String) {
        self.source = source; self.row = row; self.line = line; self.column = column; self.message = message
    }

    /// One line for a person: `row 3 (rows.csv line 4), column ink: must be …`, `rows.csv line 1,
    /// column nmae: …`, `card.json: videoComposition.overlays[0].text: …`, `-o out/{{nmae}}.mp4: …`.
    public func text(template: String, rows: String, outputPattern: String) -> String {
        var place: String
        switch source {
        case .template: place = template
        case .outputPattern: place = "-o \(outputPattern)"
        case .rows:
            if let row {
                place = "row \(row)" + (line.map { " (\(rows) line \($0))" } ?? "")
            } else {
                place = rows + (line.map { " line \($0)" } ?? "")
            }
        }
        if let column { place += ", column \(column)" }
        return "\(place): \(message)"
    }

    /// The problem without its file names, for a row's entry in a manifest: `column ink: must be …`.
    public var messageInRow: String {
        (column.map { "column \($0): " } ?? "") + message
    }
}
