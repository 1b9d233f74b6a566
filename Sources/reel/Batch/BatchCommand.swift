import ArgumentParser
import Foundation
import ReelCore
import ReelMedia

struct BatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Render a template once per row of a CSV or JSON Lines file, all in one on this machine.",
        discussion: """
            Checks every row first (each value by its variable's type, the composition it makes, its output's \
            name) and renders nothing while any row is invalid, unless --skip-invalid. Then runs the farm on \
            this machine once, as reel render does, and submits one job per row, a few at a time: the first \
            alone, so that chunks every row shares (an intro, an outro) are rendered once and reused. A row \
            that fails fails alone (--fail-fast stops the batch instead). manifest.json and manifest.csv, \
            written as rows finish, record each row; the same command again renders only the rows not done. \
            Exits 1 when any row failed, was invalid or was not rendered. See docs/templates.md, "Batches".
            """)

    @Argument(help: "The template: a composition with variables (docs/templates.md).")
    var template: String
    @Argument(help: "The rows: CSV with a header row of variable names (.csv), or one JSON object per line (.jsonl). Relative asset paths in them are relative to this file's folder.")
    var rows: String
    @Option(name: .shortAndLong, help: "Each row's output: a path with {{name}} placeholders for columns or variables and {{row}} for the row's number, like 'out/{{id}}.mp4' (quote it for the shell).")
    var output: String
    @Option(help: "The folder of manifest.json and manifest.csv (default: the outputs' folder, -o up to its first placeholder).")
    var manifest: String?
    @Flag(help: "Render the valid rows and record the invalid ones in the manifest, instead of rendering nothing.")
    var skipInvalid = false
    @Flag(help: "Stop at the first row that fails, cancelling the rows rendering, instead of rendering every other row.")
    var failFast = false
    @Flag(help: "Check every row, probing its media files as reel validate does, and render nothing.")
    var check = false
    @Option(help: "Rows rendering at once (default: twice --agents). Must be ≥ 1.") var jobs: Int?
    @Option(help: "Local agents. Must be ≥ 1.") var agents: Int = 2
    @Option(help: "Target chunk length in seconds, a decimal or N/D (chunks are whole GOPs). Must be > 0.")
    var chunkSeconds: String = "10"
    @Option(help: "Encoder threads (x264, x265 or ProRes), fixed per job so every render of a composition gives the same bytes.") var encoderThreads: Int = 4
    @Option(help: "PostgreSQL connection string or URL (default: $DATABASE_URL, else a private cluster).") var database: String?
    @Flag(help: "Render every chunk anew, even those an earlier render already made identically.") var noCache = false
    @Flag(help: "No progress bar (a failed row is still reported).") var quiet = false

    func validate() throws {
        guard agents >= 1 else { throw ValidationError("--agents must be at least 1") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        guard let s = Rational(parsing: chunkSeconds), RenderLimits.problem(withChunkSeconds: s) == nil else {
            throw ValidationError("--chunk-seconds must be a number of seconds > 0 and ≤ 3600, like 10 or 2.5")
        }
        guard (1...64).contains(encoderThreads) else { throw ValidationError("--encoder-threads must be 1…64") }
    }

    func run() async throws {
        try await reportingErrorsAsync {
            Interruption.shared.install()
            LibAVLogging.quiet()
            let input = try BatchInput.load(template: template, rows: rows, output: output)
            let plan = BatchPlan.make(template: input.template, rows: input.rows, output: input.pattern,
                                      rowsDirectory: input.rowsDirectory, currentDirectory: FileManager.default.currentDirectoryPath)
            try BatchSetup.report(plan, template: template, rows: rows, output: output, skipInvalid: skipInvalid, check: check)
            if check {
                try checkMedia(plan, input: input)
                return
            }
            let (files, queue) = try await BatchSetup.manifest(plan, input: input, template: template, rows: rows, output: output,
                                                               directory: manifest ?? input.pattern.fixedDirectory)

            var stopped = false
            if !queue.isEmpty {
                let environmentDatabase = ProcessInfo.processInfo.environment["DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
                let run = BatchRun(templateName: input.templateName, templateDirectory: input.templateDirectory, items: queue,
                                   agents: agents, jobs: jobs ?? 2 * agents, chunkSeconds: Rational(parsing: chunkSeconds)!,
                                   encoderThreads: encoderThreads, noCache: noCache, database: database ?? environmentDatabase,
                                   failFast: failFast, quiet: quiet)
                stopped = try await run.run(files)
            }
            try await BatchSetup.finish(files, stopped: stopped)
        }
    }

    /// `--check`: every valid row's media probed (as `reel validate` does); nothing rendered.
    private func checkMedia(_ plan: BatchPlan, input: BatchInput) throws {
        var failed = plan.invalidRowCount
        let origins = input.template.placeholderOrigins
        for row in plan.rows {
            guard case .valid(let valid) = row.outcome else { continue }
            do {
                _ = try CompositionLoader.plan(valid.resolved.composition, directory: input.templateDirectory, outputFileType: valid.fileType)
            } catch let error as CompositionError {
                failed += 1
                for problem in error.problems {
                    Terminal.error(BatchProblem(.rows, row: row.number, line: row.line, column: origins[problem.path]?.first,
                                                message: valid.resolved.relabel(problem).description)
                        .text(template: template, rows: rows, outputPattern: output))
                }
            }
        }
        guard failed == 0 else { throw UserError("\(failed) of \(plan.rows.count) rows have problems") }
        print("ok: \(plan.rows.count) rows")
    }
}

/// Makes `folder` (and its parents) when missing.
func makeFolder(_ folder: String, what: String) throws {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) {
        guard isDirectory.boolValue else { throw UserError("\(what) \(folder) is a file, not a folder") }
        return
    }
    do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
        throw UserError("cannot make \(what) \(folder): \(error.localizedDescription)")
    }
}

/// The files `reel batch` reads: the template, the rows and the output pattern.
struct BatchInput {
    var template: Template
    var templateName: String
    var templateSHA256: String
    /// Where the template's relative asset URLs start.
    var templateDirectory: String
    var rows: BatchRows
    /// Where the rows' relative asset paths start.
    var rowsDirectory: String
    var pattern: OutputPattern

    static func load(template path: String, rows rowsPath: String, output: String) throws -> BatchInput {
        try requireReadableFile(path, what: "the template")
        guard let bytes = FileManager.default.contents(atPath: path) else { throw UserError("cannot read the template \(path)") }
        guard let template = Template.parse(Array(bytes)) else {
            throw UserError("\(path) is not a template: it has no top-level \"variables\" object (docs/templates.md), so no row could change it; "
                            + "render a plain composition with reel render")
        }
        guard let format = BatchRows.Format(path: rowsPath) else {
            throw UserError("the rows file \(rowsPath) must be CSV (.csv, with a header row of variable names) or JSON Lines (.jsonl, one object per line)")
        }
        try requireReadableFile(rowsPath, what: "the rows file")
        guard let rowBytes = FileManager.default.contents(atPath: rowsPath) else { throw UserError("cannot read the rows file \(rowsPath)") }
        let pattern: OutputPattern
        switch OutputPattern.parse(output) {
        case .success(let p): pattern = p
        case .failure(let problem): throw UserError(problem.text(template: path, rows: rowsPath, outputPattern: output))
        }
        return BatchInput(template: template, templateName: URL(fileURLWithPath: path).lastPathComponent,
                          templateSHA256: RowValues.sha256(of: Array(bytes)),
                          templateDirectory: URL(fileURLWithPath: absolute(path)).deletingLastPathComponent().path,
                          rows: BatchRows.parse(Array(rowBytes), format: format),
                          rowsDirectory: URL(fileURLWithPath: absolute(rowsPath)).deletingLastPathComponent().path, pattern: pattern)
    }
}
