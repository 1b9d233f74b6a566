import Foundation
import ReelConsole
import ReelCoordinator
import ReelCore
import ReelHTTPTesting
import ReelMedia
import ReelProtocol
import ReelStore
import ReelThreadTesting
import Testing

/// Batches on a coordinator: `BATCH` opens one, `SUBMIT`s with `settings.batch` join it, its
/// later rows are planned once its first has ended (so they reuse what they share with it),
/// `BATCHSTATUS` sums it up, and the console's `/api/v1/batches` submits and reads one.
@Suite(.database) struct BatchTests {
    static func open(_ client: ReelClient, rows: Int) async throws -> Int64 {
        let reply = try await client.send(.batch(document: Array(try JSONEncoder().encode(NewBatchRequest(name: "test batch", rows: rows)))))
        guard case .report(let json) = reply else { throw TestFailure(description: "BATCH answered \(reply)") }
        return try JSONDecoder().decode(BatchCreated.self, from: Data(json)).batch
    }

    static func submit(_ client: ReelClient, _ media: TestMedia, batch: Int64, row: Int) async throws -> Message {
        let request = SubmitRequest(composition: media.composition(), assets: try media.manifest(),
                                    settings: JobSettings(chunkSeconds: Rational(1, 2), encoderThreads: 1, name: "row \(row)",
                                                          batch: BatchMembership(id: batch, row: row)))
        return try await client.send(.submit(document: Array(try JSONEncoder().encode(request))))
    }

    static func report(_ client: ReelClient, _ batch: Int64, rows: Bool = true) async throws -> BatchReport {
        guard case .report(let json) = try await client.send(.batchStatus(batch: batch, rows: rows)) else { throw TestFailure(description: "no REPORT") }
        return try JSONDecoder().decode(BatchReport.self, from: Data(json))
    }

    @Test func laterRowsWaitForTheFirstAndReuseWhatTheyShareWithIt() async throws {
        let media = try await TestMedia()
        defer { media.cleanUp() }
        let harness = try await CoordinatorHarness()
        defer { Task { try? await harness.stop() } }
        let client = try await harness.connect(role: .client, name: "ops@test")
        try await client.upload(media.video)
        try await client.upload(media.audio)
        let batch = try await Self.open(client, rows: 3)

        // Rows are numbered as in the rows file: a batch of the rows not done yet has gaps.
        var jobs: [Int64] = []
        for row in [1, 4, 7] {
            guard case .job(let job, let missing) = try await Self.submit(client, media, batch: batch, row: row), missing.isEmpty else {
                Issue.record("row \(row) was not submitted"); return
            }
            jobs.append(job)
        }
        // A row submitted twice, a fourth row for a batch of three, a batch that does not exist.
        await expectRefusal(.conflict) { _ = try await Self.submit(client, media, batch: batch, row: 4) }
        await expectRefusal(.invalidComposition) { _ = try await Self.submit(client, media, batch: batch, row: 2) }
        await expectRefusal(.notFound) { _ = try await Self.submit(client, media, batch: batch + 1000, row: 1) }
        await expectRefusal(.notFound) { _ = try await client.send(.batchStatus(batch: batch + 1000, rows: false)) }

        // The first row is planned; the others wait for it, without tasks.
        #expect(try await client.status(job: jobs[0]).tasks.total == 6, "5 chunks and the audio")
        for job in jobs.dropFirst() { #expect(try await client.status(job: job).tasks.total == 0, "job \(job) waits for the first row") }
        var report = try await Self.report(client, batch)
        #expect(report.rows == 3 && report.counts.queued == 3 && report.state == "queued" && report.rowStatuses?.map(\.job) == jobs)

        // The first row renders; then the others are planned, every task reused from it.
        let agent = RenderingAgent(client: try await harness.agent("render-01"), harness: harness, workDirectory: try makeWorkDirectory())
        _ = try await agent.work(limit: 6)
        _ = try await client.waitForState(job: jobs[0], "done")
        for job in jobs.dropFirst() { _ = try await client.waitForState(job: job, "done") }
        report = try await Self.report(client, batch)
        #expect(report.state == "done" && report.counts.done == 3 && report.etaSeconds == nil)
        #expect(report.chunks == 18 && report.reusedChunks == 12, "rows 2 and 3 reuse all 6 of row 1's tasks: \(report)")
        #expect(report.rowStatuses?.map(\.reusedChunks) == [0, 6, 6])
        // Rows 2 and 3 render nothing; only their finalise (joining the reused chunks) takes time.
        let agentSeconds = report.rowStatuses?.map(\.agentSeconds) ?? []
        #expect(report.agentSeconds > 0 && agentSeconds.count == 3 && agentSeconds[1] < agentSeconds[0] && agentSeconds[2] < agentSeconds[0],
                "\(agentSeconds)")

        // The database's footprint of a variant: its job, documents, tasks, events and asset
        // references, in bytes of rows (pg_column_size of the whole row counts a value kept in
        // TOAST at its stored, compressed size), by table, each against its budget.
        let footprint = try BatchFootprint(try harness.schema.connect(), batch: batch)
        print("batch footprint a variant (3 rows of 6 tasks): \(footprint)")
        for problem in footprint.problems { Issue.record("\(problem)") }
        // What a batch adds is its row (once) and two columns a job: the rest is any job's.
        let batchRow = try harness.schema.connect().query("SELECT pg_column_size(b.*) AS n FROM batches b WHERE b.id = $1::bigint", [batch])
        #expect(try batchRow.rows[0].int64("n") < 200, "the batch's own row")
    }

    @Test func theConsoleSubmitsTheDocumentedBatchAndRefusesBadRowsAndMissingAssets() async throws {
        let media = try await TestMedia()
        defer { media.cleanUp() }
        let still = media.directory.appendingPathComponent("still.jpg").path
        _ = try runProgram(["/usr/bin/ffmpeg", "-v", "error", "-f", "lavfi", "-i", "color=c=red:s=320x240", "-frames:v", "1", "-y", still])
        let (harness, http) = try await ConsoleHTTPTests.consoleHarness()
        defer { Task { try? await harness.stop() } }
        let client = try await harness.connect(role: .client, name: "ops@test")
        try await client.upload(media.video)
        try await client.upload(still)
        let token = try await ConsoleHTTPTests.token(.operator_)

        // docs/templates.md's request body, with the files' real hashes and sizes.
        let markdown = try String(contentsOfFile: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                                      .deletingLastPathComponent().appendingPathComponent("docs/templates.md").path, encoding: .utf8)
        let fence = "```batch-request\n"
        let start = try #require(markdown.range(of: fence), "docs/templates.md has no batch-request block")
        let end = try #require(markdown.range(of: "\n```", range: start.upperBound..<markdown.endIndex))
        var body = String(markdown[start.upperBound..<end.lowerBound])
        let (clipSize, clipHash) = try FileDigest.sha256(path: media.video)
        let (stillSize, stillHash) = try FileDigest.sha256(path: still)
        body = body.replacingOccurrences(of: #""CLIP_SHA256", "size": 0"#, with: #""\#(clipHash)", "size": \#(clipSize)"#)
            .replacingOccurrences(of: #""STILL_SHA256", "size": 0"#, with: #""\#(stillHash)", "size": \#(stillSize)"#)

        let created = try await http.request("POST", "/api/v1/batches", token: token, body: body)
        #expect(created.status == 201, "\(created.body)")
        let report = try JSONDecoder().decode(BatchReport.self, from: Data(created.body.utf8))
        #expect(report.rows == 2 && report.name == "greetings" && report.rowStatuses?.map(\.row) == [1, 2])
        let first = try #require(report.rowStatuses?.first)
        let job = try await client.status(job: first.job)
        #expect(job.name == "greetings row 1" && job.priority == 5 && job.tasks.total > 0)
        let read = try await http.request("GET", "/api/v1/batches/\(report.id)/rows", token: try await ConsoleHTTPTests.token(.readOnly))
        #expect(try JSONDecoder().decode(BatchReport.self, from: Data(read.body.utf8)).rowStatuses?.map(\.job) == report.rowStatuses?.map(\.job))

        // A bad row: nothing is created, every problem named by row and column.
        let bad = body.replacingOccurrences(of: ##""ink": "#FFD700""##, with: #""ink": "gold""#)
        let refused = try await http.request("POST", "/api/v1/batches", token: token, body: bad)
        #expect(refused.status == 400)
        let problems = (refused.json as? [String: Any])?["problems"] as? [String] ?? []
        #expect(problems.count == 1 && problems.first?.hasPrefix("row 1 (rows line 1), column ink:") == true, "\(refused.body)")
        // An asset the farm does not hold.
        let foreign: String = String(repeating: "ab", count: 32)
        let unknown: String = body.replacingOccurrences(of: stillHash, with: foreign)
        let missing = try await http.request("POST", "/api/v1/batches", token: token, body: unknown)
        #expect(missing.status == 409 && missing.body.contains(foreign), "\(missing.body)")
        // Without a token.
        #expect(try await http.request("POST", "/api/v1/batches", body: body).status == 401)
        let jobs = try await client.send(.status(job: nil))
        guard case .report(let json) = jobs else { Issue.record("no STATUS report"); return }
        #expect(try JSONDecoder().decode(StatusReport.self, from: Data(json)).jobs.count == 2, "only the good batch made jobs")
    }
}

/// The bytes of rows one variant of a batch keeps in the database (`pg_column_size`, so a
/// value in TOAST counts at its stored size), by table, each held to a budget: a regression
/// in what a job, its documents, its tasks, its events or its asset references store fails
/// here, counted exactly rather than timed. Measured on `BatchTests`' 3 rows of 6 tasks each
/// (5 video chunks and the audio, rows 2 and 3 reusing row 1's); the budgets are those
/// figures plus a margin for ids and times of other widths.
struct BatchFootprint: CustomStringConvertible {
    /// Per variant, by table: the jobs row (rewritten at every claim, result and state change:
    /// state, counters and times only), its documents (composition and settings, written
    /// once), its tasks, events and asset references.
    /// Measured at migration 20: 328, 750, 2,949, 913 and 194 bytes (5,134 in all). With the
    /// render plan copied into the jobs row again, as before it, the row alone is 1,936.
    static let budgets: KeyValuePairs<String, Int64> = [
        "jobs": 400, "job_documents": 850, "tasks": 3_200, "events": 1_000, "job_assets": 250,
    ]
    /// All of it, a variant.
    static let totalBudget: Int64 = 5_600

    var perVariant: [(table: String, bytes: Int64)]
    var total: Int64 { perVariant.reduce(0) { $0 + $1.bytes } }

    init(_ db: PGConnection, batch: Int64) throws {
        let row = try db.query("""
            WITH b AS (SELECT id FROM jobs WHERE batch_id = $1::bigint)
            SELECT count(*) AS variants,
                   (SELECT sum(pg_column_size(j.*)) FROM jobs j WHERE j.id IN (SELECT id FROM b)) AS jobs,
                   (SELECT sum(pg_column_size(d.*)) FROM job_documents d WHERE d.job_id IN (SELECT id FROM b)) AS job_documents,
                   (SELECT sum(pg_column_size(t.*)) FROM tasks t WHERE t.job_id IN (SELECT id FROM b)) AS tasks,
                   (SELECT coalesce(sum(pg_column_size(e.*)), 0) FROM events e WHERE e.job_id IN (SELECT id FROM b)) AS events,
                   (SELECT sum(pg_column_size(a.*)) FROM job_assets a WHERE a.job_id IN (SELECT id FROM b)) AS job_assets
            FROM b
            """, [batch]).rows[0]
        let variants = max(1, try row.int64("variants"))
        perVariant = try Self.budgets.map { ($0.key, try row.int64($0.key) / variants) }
    }

    /// Each table over its budget, and the total over its own.
    var problems: [String] {
        var problems: [String] = []
        for ((table, bytes), (_, budget)) in zip(perVariant, Self.budgets) where bytes > budget {
            problems.append("\(table): \(bytes) bytes a variant, over its budget of \(budget)")
        }
        if total > Self.totalBudget { problems.append("a variant takes \(total) bytes of rows, over the budget of \(Self.totalBudget)") }
        return problems
    }

    var description: String {
        "\(total) bytes; " + perVariant.map { "\($0.table) \($0.bytes)" }.joined(separator: ", ")
    }
}
