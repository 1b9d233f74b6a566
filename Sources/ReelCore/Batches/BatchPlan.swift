/// A batch render checked before anything renders: every row of the rows file against the
/// template (each value by its variable's type and constraints, then the composition it makes)
/// and the output pattern (a path per row, a container Reel writes, no two rows on one file).
///
/// Problems of the batch as a whole — the template, the output pattern, the columns — mean no
/// row can be rendered (`batchProblems`); a row's own problems make that row invalid, and the
/// others can still be rendered (`reel batch --skip-invalid`). Each problem is placed by row,
/// line and column (`BatchProblem`). Pure: asset files are neither opened nor probed here (a
/// missing file makes its row fail when it is rendered, alone).
public struct BatchPlan: Sendable {
    public struct Row: Sendable {
        public var number: Int
        public var line: Int
        /// Its output path (the pattern with its values), when that could be made.
        public var output: String?
        public var outcome: Outcome
    }

    public enum Outcome: Sendable {
        case valid(ValidRow)
        case invalid([BatchProblem])
    }

    /// What a valid row renders.
    public struct ValidRow: Sendable {
        /// The composition its values make.
        public var resolved: ResolvedTemplate
        /// The output's container (from the output's name and the composition's export).
        public var fileType: FileType
        /// `RowValues.sha256` of its values.
        public var valuesSHA256: String
    }

    public var batchProblems: [BatchProblem]
    public var rows: [Row]

    /// Every invalid row's problems, in row order.
    public var rowProblems: [BatchProblem] {
        rows.flatMap { row -> [BatchProblem] in
            if case .invalid(let problems) = row.outcome { return problems }
            return []
        }
    }

    public var invalidRowCount: Int { rows.filter { if case .invalid = $0.outcome { true } else { false } }.count }

    /// Checks `rows` against `template` and `output`. `rowsDirectory`: where the rows' relative
    /// asset paths start (the rows file's folder); `currentDirectory`: where relative outputs do.
    public static func make(template: Template, rows: BatchRows, output: OutputPattern,
                            rowsDirectory: String, currentDirectory: String) -> BatchPlan {
        let checker = Checker(template: template, table: rows, pattern: output, rowsDirectory: rowsDirectory)
        var plan = BatchPlan(batchProblems: checker.batchProblems(), rows: [])
        guard plan.batchProblems.isEmpty else { return plan }
        plan.rows = rows.rows.map { checker.check($0) }
        plan.refuseSharedOutputs(currentDirectory: currentDirectory)
        return plan
    }

    /// Rows whose outputs are the same file are each invalid, naming the others.
    private mutating func refuseSharedOutputs(currentDirectory: String) {
        var byPath: [String: [Int]] = [:]
        for (index, row) in rows.enumerated() {
            guard let output = row.output else { continue }
            byPath[OutputPattern.plainPath(output, currentDirectory: currentDirectory), default: []].append(index)
        }
        for indices in byPath.values where indices.count > 1 {
            for index in indices {
                let others = indices.filter { $0 != index }.map { rows[$0].number }
                let problem = BatchProblem(.rows, row: rows[index].number, line: rows[index].line,
                                           message: "its output \(rows[index].output ?? "") is also "
                                           + "\(others.count == 1 ? "row" : "rows") \(Self.list(others))'s: every row needs an output of its own; "
                                           + "put a column that tells them apart into -o, or {{row}}")
                switch rows[index].outcome {
                case .valid: rows[index].outcome = .invalid([problem])
                case .invalid(let problems): rows[index].outcome = .invalid(problems + [problem])
                }
            }
        }
    }

    /// `2`, `2 and 5`, `2, 5 and 7`.
    static func list(_ numbers: [Int]) -> String {
        let text = numbers.map(String.init)
        guard text.count > 1 else { return text.first ?? "" }
        return text.dropLast().joined(separator: ", ") + " and " + text.last!
    }

    /// The checks, with what is worked out once for the whole batch.
    private struct Checker {
        let template: Template
        let table: BatchRows
        let pattern: OutputPattern
        let rowsDirectory: String
        let declarations: [String: VariableDeclaration]
        let origins: [String: [String]]

        init(template: Template, table: BatchRows, pattern: OutputPattern, rowsDirectory: String) {
            self.template = template; self.table = table; self.pattern = pattern; self.rowsDirectory = rowsDirectory
            declarations = Dictionary(template.declarations.map { ($0.name, $0) }) { first, _ in first }
            origins = template.placeholderOrigins
        }

        var declaredNames: String {
            template.declarations.isEmpty ? "it declares none" : "it declares " + template.declarations.map(\.name).joined(separator: ", ")
        }

        /// A column that is no variable must at least be used by the output pattern: otherwise
        /// it is most likely a variable's name mistyped.
        func isKnownColumn(_ column: String) -> Bool { declarations[column] != nil || pattern.names.contains(column) }

        func unknownColumnMessage() -> String {
            "is not a variable of the template (\(declaredNames)) and -o does not use it: check the name, or remove the column"
        }

        func batchProblems() -> [BatchProblem] {
            var problems = template.structureProblems.map { BatchProblem(.template, message: $0.description) }
            problems += table.fileProblems
            for name in pattern.names where declarations[name] == nil && name != OutputPattern.rowNumberName
                && (table.format == .csv ? !table.columns.contains(name) : !table.rows.contains { $0.cell(name) != nil }) {
                problems.append(BatchProblem(.outputPattern, message: "{{\(name)}} is neither a column of the rows nor a variable of the template "
                                             + "(\(declaredNames)), nor {{row}}: use one of those"))
            }
            if let problem = Self.containerProblem(ofPattern: pattern) { problems.append(problem) }
            guard table.format == .csv, let header = table.headerLine, table.fileProblems.isEmpty else { return problems }
            for column in table.columns where !isKnownColumn(column) {
                problems.append(BatchProblem(.rows, line: header, column: column, message: unknownColumnMessage()))
            }
            for declaration in template.declarations where declaration.isRequired && !table.columns.contains(declaration.name) {
                problems.append(BatchProblem(.rows, line: header, column: declaration.name,
                                             message: "is missing: the variable \(declaration.name) has no default, so every row needs a value: "
                                             + "add the column, or declare a default"))
            }
            return problems
        }

        /// A pattern whose extension is written out (`.mp4`, not `.{{ext}}`) is checked once.
        static func containerProblem(ofPattern pattern: OutputPattern) -> BatchProblem? {
            guard case .text(let last)? = pattern.pieces.last, let dot = last.lastIndex(of: "."), !last[dot...].contains("/") else { return nil }
            let example = "out" + last[dot...]
            if let problem = folderOutputProblem(example) { return BatchProblem(.outputPattern, message: problem) }
            guard case .failure(let error) = OutputContainer.fileType(forOutput: example, written: nil) else { return nil }
            return BatchProblem(.outputPattern, message: error.message.replacing("the output name \(example)", with: "the output name"))
        }

        /// HLS folders and PNG sequences are several files: a batch writes one file per row.
        static func folderOutputProblem(_ path: String) -> String? {
            let lower = path.lowercased()
            guard lower.hasSuffix(".m3u8") || lower.hasSuffix(".png") else { return nil }
            return "names \(lower.hasSuffix(".png") ? "a PNG sequence" : "an HLS folder"), but a batch writes one file per row "
                + "(.mp4, .mov, .webm, .m4a, .wav): render those one by one with reel render"
        }

        func check(_ row: BatchRows.Row) -> Row {
            var problems: [BatchProblem] = []
            func problem(_ column: String?, _ message: String) {
                problems.append(BatchProblem(.rows, row: row.number, line: row.line, column: column, message: message))
            }
            if let p = row.problem { problem(nil, p) }

            var values: [String: JSONValue] = [:]
            if row.problem == nil {
                for (column, cell) in row.cells {
                    guard let declaration = declarations[column] else {
                        // A CSV header's unknown columns are a problem of the batch already.
                        if table.format == .jsonLines, !isKnownColumn(column) { problem(column, unknownColumnMessage()) }
                        continue
                    }
                    let read = RowValues.value(of: cell, for: declaration, rowsDirectory: rowsDirectory)
                    if let value = read.value { values[column] = value }
                    read.problems.forEach { problem(column, $0) }
                }
                if table.format == .jsonLines {
                    for declaration in template.declarations where declaration.isRequired && row.cell(declaration.name) == nil {
                        problem(declaration.name, "is missing: the variable has no default, so every row needs a value")
                    }
                }
            }

            // The output's path, even for a row with problems (two rows may still collide).
            var output: String?
            if row.problem == nil {
                switch pattern.path({ name in
                    if let cell = row.cell(name) { return cell.text }
                    if let value = declarations[name]?.defaultValue { return PlaceholderText.text(of: value) }
                    return name == OutputPattern.rowNumberName ? String(row.number) : nil
                }) {
                case .path(let path): output = path
                case .problems(let pathProblems):
                    problems += pathProblems.map { BatchProblem(.rows, row: row.number, line: row.line, column: $0.column, message: $0.message) }
                }
            }

            guard problems.isEmpty else { return Row(number: row.number, line: row.line, output: output, outcome: .invalid(problems)) }
            let resolved: ResolvedTemplate
            switch template.resolve(values: values) {
            case .failure(let error):
                for p in error.problems {
                    let column = origins[p.path]?.first { row.cell($0) != nil }
                    problem(column, p.description)
                }
                return Row(number: row.number, line: row.line, output: output, outcome: .invalid(problems))
            case .success(let r):
                resolved = r
            }
            guard let output else { return Row(number: row.number, line: row.line, output: nil, outcome: .invalid(problems)) }
            if let folder = Self.folderOutputProblem(output) {
                problem(nil, "its output \(output) \(folder)")
            }
            var fileType: FileType?
            switch OutputContainer.fileType(forOutput: output, export: resolved.composition.export) {
            case .success(let type): fileType = type
            case .failure(let error): if problems.isEmpty { problem(nil, "its output \(output): \(error.message)") }
            }
            guard problems.isEmpty, let fileType else { return Row(number: row.number, line: row.line, output: output, outcome: .invalid(problems)) }
            let hash = RowValues.sha256(resolved.values, declarations: template.declarations)
            return Row(number: row.number, line: row.line, output: output,
                       outcome: .valid(ValidRow(resolved: resolved, fileType: fileType, valuesSHA256: hash)))
        }
    }
}
