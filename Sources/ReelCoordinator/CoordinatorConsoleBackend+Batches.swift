import Foundation
import ReelConsole
import ReelCore
import ReelProtocol

// The console's batches (proto/console-api.yaml, `/api/v1/batches`): the same reports as
// `BATCHSTATUS`, and a batch submitted in one request — a template, its rows and their assets
// by content — checked row by row as `reel batch` checks a rows file.
extension CoordinatorConsoleBackend {
    func batch(_ id: Int64, rows: Bool) async throws -> BatchReport {
        try await translating { try await handler.batchReport(id, rows: rows) }
    }

    func submitBatch(_ body: [UInt8]) async throws -> BatchReport {
        let submission = try BatchSubmission.parse(body)
        let plan = BatchPlan.make(template: submission.template, rows: submission.rows, output: submission.pattern,
                                  rowsDirectory: "/", currentDirectory: "/")
        func text(_ problem: BatchProblem) -> String { problem.text(template: "template", rows: "rows", outputPattern: "fileType") }
        guard plan.batchProblems.isEmpty else {
            throw ConsoleBackendError(.invalid, "the batch cannot be rendered: \(text(plan.batchProblems[0]))",
                                      problems: plan.batchProblems.map(text))
        }
        guard plan.invalidRowCount == 0 else {
            throw ConsoleBackendError(.invalid, "\(plan.invalidRowCount) of \(plan.rows.count) rows are invalid, so no job was created: fix them",
                                      problems: plan.rowProblems.map(text))
        }
        // Each row's composition with its assets by content, before anything is created.
        var requests: [(row: Int, request: SubmitRequest)] = []
        var problems: [String] = []
        for row in plan.rows {
            guard case .valid(let valid) = row.outcome else { continue }
            var assets: [String: AssetManifestEntry] = [:]
            for (id, asset) in valid.resolved.composition.assets.sorted(by: { $0.key < $1.key }) {
                guard let entry = submission.asset(asset.url) else {
                    problems.append("row \(row.number): asset \"\(id)\" is \(asset.url), which is not in assets: "
                                    + "add it there with its sha256 and size")
                    continue
                }
                assets[id] = entry
            }
            var settings = submission.settings
            settings.name = "\(submission.name) row \(row.number)"
            settings.fileType = valid.fileType
            requests.append((row.number, SubmitRequest(composition: valid.resolved.text, assets: assets, settings: settings)))
        }
        guard problems.isEmpty else {
            throw ConsoleBackendError(.invalid, "\(problems.count) asset(s) of the rows are not in assets: \(problems[0])", problems: problems)
        }
        let hashes = Set(requests.flatMap { $0.request.assets.values.map(\.sha256) }).sorted()
        let missing = try await handler.pool.run { try $0.assets.missing(hashes) }
        guard missing.isEmpty else {
            throw ConsoleBackendError(.conflict, "the farm does not hold \(missing.count) of the batch's assets (\(missing[0]) …): "
                                      + "upload them first (a `reel submit` of any composition that uses them uploads them)",
                                      problems: missing)
        }
        return try await translating {
            let batch = try await handler.openBatch(NewBatchRequest(name: submission.name, rows: requests.count))
            for (row, var request) in requests {
                request.settings.batch = BatchMembership(id: batch, row: row)
                _ = try await handler.createJob(request)
            }
            handler.logger.info("batch submitted from the console", metadata: ["batch": "\(batch)", "rows": "\(requests.count)"])
            return try await handler.batchReport(batch, rows: true)
        }
    }
}

/// The body of `POST /api/v1/batches`, read: a template, its rows (as JSON Lines rows read
/// them), the assets by the URL the template or a row gives, shared job settings, the name,
/// and the outputs' container.
struct BatchSubmission {
    var name: String
    var template: Template
    var rows: BatchRows
    var assets: [String: AssetManifestEntry]
    var settings: JobSettings
    /// `{{row}}.EXT`: each row's output container, as `reel batch -o` gives it.
    var pattern: OutputPattern

    static let keys: Set<String> = ["name", "template", "rows", "assets", "settings", "fileType"]

    /// The asset a URL names. A row's relative path is read as from the root (`/ada.jpg`), so
    /// `assets` may key it either way.
    func asset(_ url: String) -> AssetManifestEntry? {
        assets[url] ?? (url.hasPrefix("/") ? assets[String(url.dropFirst())] : nil)
    }

    static func parse(_ body: [UInt8]) throws -> BatchSubmission {
        func invalid(_ message: String) -> ConsoleBackendError { ConsoleBackendError(.invalid, message) }
        let document: JSONValue
        do { document = try JSONParser.parse(body) } catch { throw invalid("the body is not JSON: \(error)") }
        guard case .object(let o) = document else { throw invalid("the body must be a JSON object with template, rows and assets") }
        if let unknown = o.keys.first(where: { !keys.contains($0) }) {
            throw invalid("\(unknown): not a key of a batch (it has \(keys.sorted().joined(separator: ", ")))")
        }
        guard case .object? = o["template"], let templateValue = o["template"] else {
            throw invalid("template: must be the template, a composition object with variables")
        }
        guard let template = Template.parse(Array(JSONWriter.compact(templateValue).utf8)) else {
            throw invalid("template: has no top-level \"variables\" object, so no row could change it")
        }
        guard case .array(let rowValues)? = o["rows"], !rowValues.isEmpty, rowValues.count <= NewBatchRequest.maximumRows else {
            throw invalid("rows: must be an array of 1…\(NewBatchRequest.maximumRows) objects, each a row's values by variable name")
        }
        var lines: [String] = []
        for (index, row) in rowValues.enumerated() {
            guard case .object = row else { throw invalid("rows[\(index)]: must be an object of the row's values by variable name") }
            lines.append(JSONWriter.compact(row))
        }
        var assets: [String: AssetManifestEntry] = [:]
        if let value = o["assets"] {
            guard case .object(let entries) = value else { throw invalid("assets: must be an object of URL → {\"sha256\", \"size\"}") }
            for member in entries.members {
                guard case .object(let entry) = member.value, case .string(let sha256)? = entry["sha256"],
                      CoordinatorStorage.isValidHash(sha256), case .number(let sizeText)? = entry["size"], let size = Int64(sizeText), size >= 0 else {
                    throw invalid("assets.\(member.key): must be {\"sha256\": 64 lower-case hex digits, \"size\": bytes}")
                }
                assets[member.key] = AssetManifestEntry(sha256: sha256, size: size)
            }
        }
        var settings = JobSettings()
        if let value = o["settings"] {
            do {
                settings = try JSONDecoder().decode(JobSettings.self, from: Data(JSONWriter.compact(value).utf8))
            } catch {
                throw invalid("settings: must be an object like {\"chunkSeconds\": \"10\", \"priority\": 0, \"encoderThreads\": 4, \"noCache\": false}")
            }
            settings.batch = nil
        }
        var name = "batch"
        if let value = o["name"] {
            guard case .string(let text) = value, text.utf8.count <= NewBatchRequest.maximumNameBytes else {
                throw invalid("name: must be a string of at most \(NewBatchRequest.maximumNameBytes) bytes")
            }
            name = text
        }
        var fileType = "mp4"
        if let value = o["fileType"] {
            guard case .string(let text) = value, text.allSatisfy({ $0.isLetter || $0.isNumber }) else {
                throw invalid("fileType: must be the outputs' container, like mp4, mov, webm, m4a or wav")
            }
            fileType = text
        }
        guard case .success(let pattern) = OutputPattern.parse("{{row}}.\(fileType)") else {
            throw invalid("fileType: must be the outputs' container, like mp4, mov, webm, m4a or wav")
        }
        return BatchSubmission(name: name, template: template, rows: BatchRows.parse(Array(lines.joined(separator: "\n").utf8), format: .jsonLines),
                               assets: assets, settings: settings, pattern: pattern)
    }
}
