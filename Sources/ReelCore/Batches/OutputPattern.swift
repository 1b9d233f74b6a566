/// Where each row of a batch is written: `-o 'out/{{id}}.mp4'`, a path whose `{{name}}`
/// placeholders take a row's values — a column's text as written, else the variable's
/// default — and `{{row}}` the row's number (unless a column or variable is named `row`).
///
/// A value goes into the path as one name: it may not be empty, `.` or `..`, nor hold a `/`
/// or a control character, so no row can write outside the folder the pattern says or
/// somewhere the person did not mean. Pure: the file system is not asked.
public struct OutputPattern: Hashable, Sendable {
    /// As given.
    public let text: String
    let pieces: [PlaceholderText.Piece]

    /// The name `{{row}}` stands for: the row's number.
    public static let rowNumberName = "row"

    /// Parses `text`; a problem when a `{{` is malformed or the pattern is empty.
    public static func parse(_ text: String) -> Result<OutputPattern, BatchProblem> {
        guard !text.isEmpty else {
            return .failure(BatchProblem(.outputPattern, message: "is empty: give the outputs' path with placeholders, like 'out/{{id}}.mp4'"))
        }
        switch PlaceholderText.pieces(of: text) {
        case .failure(let error):
            let message = error.message.replacing("with the name of a declared variable", with: "with the name of a column or variable, or {{row}}")
            return .failure(BatchProblem(.outputPattern, message: message))
        case .success(let pieces):
            return .success(OutputPattern(text: text, pieces: pieces))
        }
    }

    /// The names of its placeholders, in order, each once.
    public var names: [String] {
        var names: [String] = []
        for case .placeholder(let name) in pieces where !names.contains(name) { names.append(name) }
        return names
    }

    /// The folder every output is in: the pattern's path up to the last `/` before its first
    /// placeholder (`out` of `out/{{lang}}/{{id}}.mp4`), `.` when that is none.
    public var fixedDirectory: String {
        var prefix = ""
        for piece in pieces {
            guard case .text(let literal) = piece else { break }
            prefix += literal
        }
        guard let slash = prefix.lastIndex(of: "/") else { return "." }
        let directory = String(prefix[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    /// A row's output path, or why it cannot be made.
    public enum Filled: Hashable, Sendable {
        case path(String)
        /// Each names the column (the placeholder) whose value cannot be part of a path, or that the row lacks.
        case problems([BatchProblem])
    }

    /// The path for one row: each placeholder replaced by `value(name)`.
    public func path(_ value: (String) -> String?) -> Filled {
        var path = ""
        var problems: [BatchProblem] = []
        for piece in pieces {
            switch piece {
            case .text(let literal):
                path += literal
            case .placeholder(let name):
                guard let text = value(name) else {
                    problems.append(BatchProblem(.rows, column: name, message: "is missing, and -o \(self.text) uses {{\(name)}}: give it a value"))
                    continue
                }
                if let problem = Self.problem(ofName: text) {
                    problems.append(BatchProblem(.rows, column: name, message: "\(JSONWriter.quoted(text)) \(problem), so it cannot go into the "
                                                 + "output's path (-o \(self.text) uses {{\(name)}}): change the value, or -o"))
                    continue
                }
                path += text
            }
        }
        return problems.isEmpty ? .path(path) : .problems(problems)
    }

    /// Why `text` cannot stand in a path as (part of) one name, or nil.
    static func problem(ofName text: String) -> String? {
        if text.isEmpty { return "is empty" }
        if text == "." || text == ".." { return "names a folder" }
        if text.contains("/") { return "holds a /" }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) { return "holds a control character" }
        return nil
    }

    /// `path` made absolute against `directory` and written plainly (no `.`, `..` or doubled
    /// `/`), without asking the file system: two outputs whose plain paths are equal are the
    /// same file.
    public static func plainPath(_ path: String, currentDirectory directory: String) -> String {
        let absolute = path.hasPrefix("/") ? path : directory + "/" + path
        var parts: [Substring] = []
        for part in absolute.split(separator: "/") {
            switch part {
            case ".": continue
            case "..": if !parts.isEmpty { parts.removeLast() }
            default: parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }
}
