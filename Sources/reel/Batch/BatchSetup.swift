import Foundation
import ArgumentParser
import ReelCore

/// What `reel batch` and `reel submit --batch` do before the first row renders: report the
/// plan's problems (by row, line and column), then lay out the manifest — every row's entry,
/// the rows a run before this one finished left as they are (`BatchResume`), the others queued.
enum BatchSetup {
    /// Problems printed before the rest are summed up in one line.
    static let printedProblems = 100

    /// What happens to a batch's valid rows: rendered here (`reel batch`) or submitted to a
    /// farm (`reel submit --batch`); the errors say which.
    enum Action: String {
        case render, submit
        var pastParticiple: String { self == .render ? "rendered" : "submitted" }
    }

    /// Prints every problem; throws when the batch cannot go on (a problem of the batch as a
    /// whole, or an invalid row without `skipInvalid`; with `check`, invalid rows are only reported).
    static func report(_ plan: BatchPlan, template: String, rows: String, output: String, skipInvalid: Bool, check: Bool,
                       action: Action = .render) throws {
        func print(_ problems: [BatchProblem]) {
            for problem in problems.prefix(printedProblems) {
                Terminal.error(problem.text(template: template, rows: rows, outputPattern: output))
            }
            if problems.count > printedProblems {
                Terminal.error("… and \(problems.count - printedProblems) more problems")
            }
        }
        guard plan.batchProblems.isEmpty else {
            print(plan.batchProblems)
            throw ExitCode(1)
        }
        let invalid = plan.invalidRowCount
        guard invalid > 0 else { return }
        print(plan.rowProblems)
        if !skipInvalid && !check {
            throw UserError("\(invalid) of \(plan.rows.count) rows are invalid, so nothing was \(action.pastParticiple): "
                            + "fix them, or give --skip-invalid to \(action.rawValue) the other \(plan.rows.count - invalid)")
        }
        if !check { Terminal.error("\(invalid) invalid row(s) skipped (--skip-invalid); the manifest lists them") }
    }

    /// The manifest in `directory` with an entry for every row, written once: invalid rows
    /// `invalid`, rows done before (same values, output still in place) as recorded then, the
    /// others `pending` and queued to render.
    static func manifest(_ plan: BatchPlan, input: BatchInput, template: String, rows: String, output: String,
                         directory: String) async throws -> (ManifestFiles, [BatchRun.Item]) {
        try makeFolder(directory, what: "the manifest's folder")
        let resume = BatchResume(previous: try ManifestFiles.previous(in: directory), templateSHA256: input.templateSHA256)
        if resume.templateChanged {
            Terminal.error("\(template) changed since \(ManifestFiles.jsonPath(in: directory)) was written: every row renders again")
        }
        var entries: [BatchManifest.Entry] = []
        var queue: [BatchRun.Item] = []
        for row in plan.rows {
            switch row.outcome {
            case .invalid(let problems):
                entries.append(.init(row: row.number, line: row.line, output: row.output, status: .invalid,
                                     error: problems.map(\.messageInRow).joined(separator: "; ")))
            case .valid(let valid):
                let output = row.output!
                if let finished = resume.finished(row: row.number, line: row.line, output: output, valuesSHA256: valid.valuesSHA256,
                                                  bytesOnDisk: regularFileSize) {
                    entries.append(finished)
                    continue
                }
                queue.append(BatchRun.Item(entry: entries.count, row: row.number, output: output, valid: valid))
                entries.append(.init(row: row.number, line: row.line, valuesSHA256: valid.valuesSHA256, output: output, status: .pending))
            }
        }
        let files = ManifestFiles(directory: directory, manifest: BatchManifest(
            template: template, templateSHA256: input.templateSHA256, rows: rows, output: output, entries: entries))
        try await files.write()
        let already = await files.manifest.count(.done)
        if already > 0 { Terminal.error("\(already) row(s) done before, with their outputs in place: not rendered again") }
        return (files, queue)
    }

    /// The summary line both commands end with; throws exit status 1 unless every row is done.
    static func finish(_ files: ManifestFiles, stopped: Bool) async throws {
        let m = await files.manifest
        let summary = "\(m.entries.count) rows: \(m.count(.done)) done, \(m.count(.failed)) failed, \(m.count(.invalid)) invalid"
            + (m.count(.pending) > 0 ? ", \(m.count(.pending)) not rendered" : "")
            + (stopped ? " (stopped at the first failure: --fail-fast)" : "")
        print("\(summary); manifest: \(files.jsonPath)")
        if m.count(.done) < m.entries.count { throw ExitCode(1) }
    }
}
