import ReelHTTPTesting
import Foundation
import Logging
import NIOConcurrencyHelpers
import ReelCore
import ReelLogTesting
import ReelProtocol
import ServiceLifecycle
import Testing
@testable import ReelConsole

/// An in-memory farm behind the console: jobs and agents it is told, actions recorded.
final class FakeBackend: ConsoleBackend {
    private let state = NIOLockedValueBox<(jobs: [JobStatus], agents: [AgentStatus], actions: [String])>(([], [], []))

    init(jobs: [JobStatus], agents: [AgentStatus]) { state.withLockedValue { $0.jobs = jobs; $0.agents = agents } }

    var actions: [String] { state.withLockedValue { $0.actions } }
    func update(_ body: (inout [JobStatus]) -> Void) { state.withLockedValue { body(&$0.jobs) } }

    func jobs(limit: Int) async throws -> [JobStatus] { state.withLockedValue { Array($0.jobs.prefix(limit)) } }
    func job(_ id: Int64) async throws -> JobDetail {
        guard let job = state.withLockedValue({ $0.jobs.first { $0.id == id } }) else { throw ConsoleBackendError(.notFound, "no job \(id)") }
        return JobDetail(job: job, chunks: [])
    }
    func events(job: Int64, after: Int64, limit: Int) async throws -> EventsReport {
        _ = try await self.job(job)
        return EventsReport(job: job, events: [JobEvent(id: 1, atMillis: 1, kind: "submitted", message: "")].filter { $0.id > after })
    }
    func agents() async throws -> [AgentStatus] { state.withLockedValue { $0.agents } }
    func perform(_ action: JobAction, job: Int64) async throws {
        let current = try await self.job(job).job
        if ["done", "failed", "cancelled"].contains(current.state) { throw ConsoleBackendError(.conflict, "job \(job) is already \(current.state)") }
        state.withLockedValue { $0.actions.append("\(action.rawValue) \(job)") }
    }
    func setPriority(job: Int64, priority: Int) async throws {
        _ = try await self.job(job)
        state.withLockedValue { $0.actions.append("priority \(job) \(priority)") }
    }
    /// Job 7 has a poster (a JPEG's first bytes and its JFIF header), the others none.
    static let poster: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0x00, 0x01, 0xFF, 0xD9]
    func poster(job: Int64) async throws -> [UInt8]? {
        _ = try await self.job(job)
        return job == 7 ? Self.poster : nil
    }
    /// Job 7's preview: chunks 0 and 2 of 3 finished (so only 0 is listed); job 8's preview fails
    /// inside the farm (a 500 whose details go to the log only).
    static let previewInit: [UInt8] = [0, 0, 0, 8] + Array("ftyp".utf8)
    func previewPlaylist(job: Int64) async throws -> PreviewPlaylist {
        if job == 8 { throw CocoaError(.fileReadCorruptFile) }
        _ = try await self.job(job)
        guard job == 7 else { throw ConsoleBackendError(.notFound, "job \(job) has no picture (sound only): nothing to preview") }
        let chunks = (0..<3).map { PreviewChunk(ordinal: $0, frames: FrameRange(start: $0 * 25, end: $0 * 25 + 25), finished: $0 != 1) }
        return PreviewPlaylist(chunks: chunks, frameDuration: Rational(1, 25), ended: false)
    }
    func previewInitSegment(job: Int64) async throws -> [UInt8] {
        _ = try await previewPlaylist(job: job)
        return Self.previewInit
    }
    func previewSegment(job: Int64, chunk: Int) async throws -> [UInt8] {
        _ = try await previewPlaylist(job: job)
        // Chunk 1 still renders, longer than a request may wait for it.
        guard chunk == 0 || chunk == 2 else { throw ConsoleBackendError(.unavailable, "chunk \(chunk) of job \(job) is not rendered yet: ask again later") }
        return [0, 0, 0, 8] + Array("moof".utf8) + [UInt8(chunk)]
    }
    func metricsExposition() -> String { "# TYPE reel_jobs gauge\nreel_jobs 1\n" }
    /// Batch 3: rows 1 (job 6, done) and 2 (job 7, running); a submitted batch is batch 4.
    func batch(_ id: Int64, rows: Bool) async throws -> BatchReport {
        guard id == 3 || id == 4 else { throw ConsoleBackendError(.notFound, "no batch \(id)") }
        let statuses = [BatchRowStatus(row: 1, job: 6, state: "done", progress: 1, reusedChunks: 0, chunks: 3, agentSeconds: 4.5, outputBytes: 1000),
                        BatchRowStatus(row: 2, job: 7, state: "running", progress: 0.5, reusedChunks: 2, chunks: 3, agentSeconds: 1)]
        return BatchReport(id: id, name: "card.json × 2 rows", rows: 2, counts: BatchRowCounts(running: 1, done: 1), state: "running",
                           createdAtMillis: 1, etaSeconds: 4, agentSeconds: 5.5, reusedChunks: 2, chunks: 6, rowStatuses: rows ? statuses : nil)
    }
    /// A body with `"bad"` is refused with its problems; any other is batch 4.
    func submitBatch(_ body: [UInt8]) async throws -> BatchReport {
        if String(decoding: body, as: UTF8.self).contains("bad") {
            throw ConsoleBackendError(.invalid, "1 of 2 rows are invalid", problems: ["row 2 (rows line 2), column ink: must be a colour"])
        }
        state.withLockedValue { $0.actions.append("batch \(body.count) bytes") }
        return try await batch(4, rows: true)
    }
}

@Suite(.serialized) struct ConsoleServerTests {
    static func job(_ id: Int64, state: String = "running") -> JobStatus {
        JobStatus(id: id, name: "job \(id).json", state: state, tasks: TaskCounts(done: 1, running: 1, queued: 2, total: 4), frameCount: 100,
                  framesDone: 25, progress: 0.25, framesPerSecond: 10, etaSeconds: 7.5, submittedAtMillis: 1, updatedAtMillis: 2,
                  outputBytes: nil, error: nil, priority: 3, paused: false)
    }

    struct Farm {
        let server: ConsoleServer
        let backend: FakeBackend
        let http: TinyHTTP
        let operatorToken: String
        let readOnlyToken: String
        let tokens: ConsoleTokens
    }

    static func withFarm(streamRefresh: Duration = .seconds(5), logger: Logger = Logger(label: "console-test"),
                         _ body: (Farm) async throws -> Void) async throws {
        let backend = FakeBackend(jobs: [job(7), job(6, state: "done")],
                                  agents: [AgentStatus(name: "render-01", host: "r1", state: "busy", threads: 8, heartbeatAgeSeconds: 0.5,
                                                       currentTask: "job 7 task 3 frames [20, 30)")])
        let server = try await ConsoleServer(host: "127.0.0.1", port: 0, tls: nil, backend: backend,
                                             authenticator: ConsoleTokenTests.farm, logger: logger, streamRefresh: streamRefresh)
        // As the coordinator runs it: the console's services in a service group.
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: server.services.map { .init(service: $0) }, logger: logger))
        let running = Task { try await group.run() }
        func stop() async throws {
            await group.triggerGracefulShutdown()
            try await running.value
        }
        do {
            let address = await server.waitUntilListening()
            let tokens = await ConsoleTokens.make(authenticator: ConsoleTokenTests.farm)
            let farm = Farm(server: server, backend: backend, http: TinyHTTP(port: try #require(address?.port)),
                            operatorToken: try await tokens.issue(role: .operator_, subject: "op", lifetime: .seconds(600)),
                            readOnlyToken: try await tokens.issue(role: .readOnly, subject: "viewer", lifetime: .seconds(600)), tokens: tokens)
            try await body(farm)
        } catch {
            try? await stop()
            throw error
        }
        try await stop()
    }

    @Test func theDashboardAndMetricsNeedNoTokenButTheAPIDoes() async throws {
        try await Self.withFarm { farm in
            let page = try await farm.http.request("GET", "/")
            #expect(page.status == 200 && page.headers["content-type"]?.hasPrefix("text/html") == true)
            #expect(page.body.contains("<script src=\"/console.js\">") && !page.body.contains("http://") && !page.body.contains("https://"),
                    "the page loads nothing from elsewhere")
            #expect(page.headers["content-security-policy"]?.contains("script-src 'self'") == true, "the page runs only its own script")
            #expect(try await farm.http.request("GET", "/console.js").status == 200)
            #expect(try await farm.http.request("GET", "/console.css").status == 200)
            let metrics = try await farm.http.request("GET", "/metrics")
            #expect(metrics.status == 200 && metrics.body.contains("reel_jobs 1"))

            for path in ["/api/v1/jobs", "/api/v1/jobs/7", "/api/v1/jobs/7/events", "/api/v1/jobs/7/poster", "/api/v1/agents", "/api/v1/session", "/api/v1/stream"] {
                let reply = try await farm.http.request("GET", path)
                #expect(reply.status == 401, "\(path) without a token: \(reply.status)")
                #expect(reply.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
                #expect((reply.json as? [String: Any])?["error"] as? String != nil, "a 401 says why: \(reply.body)")
            }
            let malformed = try await farm.http.raw("GET", "/api/v1/jobs", headers: ["Authorization": "Basic b3A6b3A="])
            #expect(try TinyHTTP.parse(malformed).status == 401)
        }
    }

    @Test func tamperedExpiredAndOtherFarmTokensGet401() async throws {
        try await Self.withFarm { farm in
            let parts = farm.readOnlyToken.split(separator: ".").map(String.init)
            let payload = String(decoding: Data(base64URL: parts[1])!, as: UTF8.self).replacingOccurrences(of: "read-only", with: "operator")
            let tampered = [parts[0], Data(payload.utf8).base64URLEncoded(), parts[2]].joined(separator: ".")
            let expired = try await farm.tokens.issue(role: .operator_, subject: "old", lifetime: .seconds(60), now: Date().addingTimeInterval(-7200))
            let other = try await ConsoleTokens.make(authenticator: ConsoleTokenTests.otherFarm)
                .issue(role: .operator_, subject: "mallory", lifetime: .seconds(600))
            for (what, token) in [("tampered", tampered), ("expired", expired), ("other farm", other)] {
                let read = try await farm.http.request("GET", "/api/v1/jobs", token: token)
                #expect(read.status == 401, "\(what): \(read.status) \(read.body)")
                let act = try await farm.http.request("POST", "/api/v1/jobs/7/cancel", token: token)
                #expect(act.status == 401, "\(what): \(act.status)")
            }
            #expect(try await farm.http.request("GET", "/api/v1/jobs", token: expired).body.contains("expired"))
            #expect(farm.backend.actions.isEmpty)
        }
    }

    @Test func aReadOnlyTokenReadsButCannotAct() async throws {
        try await Self.withFarm { farm in
            let jobs = try await farm.http.request("GET", "/api/v1/jobs", token: farm.readOnlyToken)
            #expect(jobs.status == 200)
            let report = try JSONDecoder().decode(StatusReport.self, from: Data(jobs.body.utf8))
            #expect(report.jobs.map(\.id) == [7, 6])
            let session = try await farm.http.request("GET", "/api/v1/session", token: farm.readOnlyToken)
            #expect((session.json as? [String: Any])?["role"] as? String == "read-only")
            for action in ["cancel", "retry", "pause", "resume"] {
                let reply = try await farm.http.request("POST", "/api/v1/jobs/7/\(action)", token: farm.readOnlyToken)
                #expect(reply.status == 403, "\(action): \(reply.status)")
            }
            #expect(try await farm.http.request("PUT", "/api/v1/jobs/7/priority", token: farm.readOnlyToken, body: #"{"priority": 9}"#).status == 403)
            #expect(farm.backend.actions.isEmpty)
        }
    }

    @Test func batchesNeedATokenAndOnlyAnOperatorSubmitsOne() async throws {
        try await Self.withFarm { farm in
            for (method, path) in [("GET", "/api/v1/batches/3"), ("GET", "/api/v1/batches/3/rows"), ("POST", "/api/v1/batches")] {
                let reply = try await farm.http.request(method, path, body: method == "POST" ? "{}" : nil)
                #expect(reply.status == 401, "\(method) \(path) without a token: \(reply.status)")
                #expect(reply.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
            }
            let summary = try await farm.http.request("GET", "/api/v1/batches/3", token: farm.readOnlyToken)
            #expect(summary.status == 200)
            let report = try JSONDecoder().decode(BatchReport.self, from: Data(summary.body.utf8))
            #expect(report.id == 3 && report.counts.done == 1 && report.rowStatuses == nil)
            let rows = try JSONDecoder().decode(BatchReport.self, from: Data(try await farm.http.request("GET", "/api/v1/batches/3/rows",
                                                                                                         token: farm.readOnlyToken).body.utf8))
            #expect(rows.rowStatuses?.map(\.job) == [6, 7])
            #expect(try await farm.http.request("GET", "/api/v1/batches/9", token: farm.readOnlyToken).status == 404)
            #expect(try await farm.http.request("GET", "/api/v1/batches/b3", token: farm.readOnlyToken).status == 400)

            let refused = try await farm.http.request("POST", "/api/v1/batches", token: farm.readOnlyToken, body: #"{"rows": []}"#)
            #expect(refused.status == 403 && farm.backend.actions.isEmpty)
            let created = try await farm.http.request("POST", "/api/v1/batches", token: farm.operatorToken, body: #"{"rows": [{}]}"#)
            #expect(created.status == 201, "\(created.body)")
            #expect(try JSONDecoder().decode(BatchReport.self, from: Data(created.body.utf8)).id == 4)
            #expect(farm.backend.actions == ["batch 14 bytes"])
            let invalid = try await farm.http.request("POST", "/api/v1/batches", token: farm.operatorToken, body: #"{"rows": ["bad"]}"#)
            #expect(invalid.status == 400)
            #expect((invalid.json as? [String: Any])?["problems"] as? [String] == ["row 2 (rows line 2), column ink: must be a colour"])
        }
    }

    @Test func aJobsPosterIsAJPEGAndAJobWithoutOneIs404() async throws {
        try await Self.withFarm { farm in
            let poster = try await farm.http.request("GET", "/api/v1/jobs/7/poster", token: farm.readOnlyToken)
            #expect(poster.status == 200)
            #expect(poster.headers["content-type"] == "image/jpeg")
            #expect(poster.headers["content-length"] == String(FakeBackend.poster.count) && poster.body.contains("JFIF"))
            let none = try await farm.http.request("GET", "/api/v1/jobs/6/poster", token: farm.readOnlyToken)
            #expect(none.status == 404 && none.body.contains("no poster"), "\(none.status) \(none.body)")
            #expect(try await farm.http.request("GET", "/api/v1/jobs/99/poster", token: farm.readOnlyToken).status == 404)
        }
    }

    @Test func thePreviewTakesTheTokenAsAHeaderOrAsAQueryAndPassesTheQueryOn() async throws {
        let capture = LogCapture()
        try await Self.withFarm(logger: capture.logger) { farm in
            let token = farm.readOnlyToken
            let paths = ["/api/v1/jobs/7/preview.m3u8", "/api/v1/jobs/7/preview/init.mp4", "/api/v1/jobs/7/preview/0.m4s"]
            let other = try await ConsoleTokens.make(authenticator: ConsoleTokenTests.otherFarm)
                .issue(role: .operator_, subject: "mallory", lifetime: .seconds(600))
            for path in paths {
                let missing = try await farm.http.request("GET", path)
                #expect(missing.status == 401 && missing.body.contains("?token="), "\(path) without a token: \(missing.status) \(missing.body)")
                #expect(try await farm.http.request("GET", path + "?token=").status == 401, "\(path) with an empty token")
                #expect(try await farm.http.request("GET", path + "?token=nonsense").status == 401, "\(path) with a wrong token")
                let wrong = try await farm.http.request("GET", path + "?token=\(other)")
                #expect(wrong.status == 401 && wrong.body.contains("does not match"), "\(path) with another farm's token")
                #expect(try await farm.http.request("GET", path + "?token=\(token)").status == 200, "\(path) with ?token=")
                #expect(try await farm.http.request("GET", path, token: token).status == 200, "\(path) with the header")
            }
            // Only the preview takes a token in the address: it would end up in logs and histories.
            #expect(try await farm.http.request("GET", "/api/v1/jobs?token=\(token)").status == 401)
            #expect(try await farm.http.request("GET", "/api/v1/jobs/7/poster?token=\(token)").status == 401)

            let playlist = try await farm.http.request("GET", "/api/v1/jobs/7/preview.m3u8?token=\(token)")
            #expect(playlist.headers["content-type"] == "application/vnd.apple.mpegurl")
            #expect(playlist.headers["cache-control"] == "no-store")
            #expect(playlist.body.contains("#EXT-X-MAP:URI=\"preview/init.mp4?token=\(token)\""), "\(playlist.body)")
            #expect((0..<3).allSatisfy { playlist.body.contains("\npreview/\($0).m4s?token=\(token)\n") },
                    "a running job's playlist is its whole timeline, chunk 1 unfinished too: \(playlist.body)")
            #expect(playlist.body.hasSuffix("#EXT-X-ENDLIST\n"))
            let viaHeader = try await farm.http.request("GET", "/api/v1/jobs/7/preview.m3u8", token: token)
            #expect(viaHeader.body.contains("\npreview/0.m4s\n") && !viaHeader.body.contains("token="), "a header's token stays out of URLs")

            let initSegment = try await farm.http.request("GET", "/api/v1/jobs/7/preview/init.mp4?token=\(token)")
            #expect(initSegment.headers["content-type"] == "video/mp4" && initSegment.headers["content-length"] == String(FakeBackend.previewInit.count))
            let segment = try await farm.http.request("GET", "/api/v1/jobs/7/preview/0.m4s?token=\(token)")
            #expect(segment.headers["content-type"] == "video/iso.segment" && segment.body.contains("moof"))
            let unfinished = try await farm.http.request("GET", "/api/v1/jobs/7/preview/1.m4s?token=\(token)")
            #expect(unfinished.status == 503 && unfinished.headers["retry-after"] == "1" && unfinished.body.contains("not rendered yet"),
                    "\(unfinished.status) \(unfinished.headers) \(unfinished.body)")
            #expect(try await farm.http.request("GET", "/api/v1/jobs/7/preview/x.m4s?token=\(token)").status == 400)
            #expect(try await farm.http.request("GET", "/api/v1/jobs/6/preview.m3u8?token=\(token)").status == 404)
            #expect(try await farm.http.request("GET", "/api/v1/jobs/99/preview.m3u8?token=\(token)").status == 404)

            // A failure inside the farm is logged by path, without the token.
            let failed = try await farm.http.request("GET", "/api/v1/jobs/8/preview.m3u8?token=\(token)")
            #expect(failed.status == 500 && !failed.body.contains(token))
            #expect(capture.count("console request failed") == 1)
        }
        let logged = capture.records.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
        #expect(logged.contains("/api/v1/jobs/8/preview.m3u8"))
        #expect(!logged.contains("token="), "a token was logged: \(logged)")
    }

    @Test func anOperatorActsAndRefusalsKeepTheirStatus() async throws {
        try await Self.withFarm { farm in
            let token = farm.operatorToken
            #expect(try await farm.http.request("POST", "/api/v1/jobs/7/pause", token: token).status == 200)
            #expect(try await farm.http.request("POST", "/api/v1/jobs/7/resume", token: token).status == 200)
            let priority = try await farm.http.request("PUT", "/api/v1/jobs/7/priority", token: token, body: #"{"priority": -20}"#)
            #expect(priority.status == 200, "\(priority.body)")
            #expect(farm.backend.actions == ["pause 7", "resume 7", "priority 7 -20"])
            #expect(try await farm.http.request("POST", "/api/v1/jobs/99/cancel", token: token).status == 404)
            let conflict = try await farm.http.request("POST", "/api/v1/jobs/6/cancel", token: token)
            #expect(conflict.status == 409 && conflict.body.contains("already done"))
            #expect(try await farm.http.request("PUT", "/api/v1/jobs/7/priority", token: token, body: "ten").status == 400)
            #expect(try await farm.http.request("GET", "/api/v1/jobs/x", token: token).status == 400)
            #expect(try await farm.http.request("GET", "/api/v1/jobs?limit=0", token: token).status == 400)
            let filtered = try await farm.http.request("GET", "/api/v1/jobs?state=done", token: token)
            #expect(try JSONDecoder().decode(StatusReport.self, from: Data(filtered.body.utf8)).jobs.map(\.id) == [6])
            let events = try await farm.http.request("GET", "/api/v1/jobs/7/events", token: token)
            #expect(try JSONDecoder().decode(EventsReport.self, from: Data(events.body.utf8)).events.map(\.kind) == ["submitted"])
        }
    }

    @Test func theStreamSendsASnapshotAtOnceAndAnotherWhenAJobChanges() async throws {
        // Unchanged snapshots are re-sent only hourly here: a second snapshot within the
        // deadline can only be the change, pushed because it changed.
        try await Self.withFarm(streamRefresh: .seconds(3600)) { farm in
            let token = farm.operatorToken
            let backend = farm.backend
            // Once the first snapshot has arrived, the job changes: the stream must push it.
            let changed = NIOLockedValueBox(false)
            let text = try await farm.http.raw("GET", "/api/v1/stream", headers: ["Authorization": "Bearer \(token)"], deadline: 60) { text in
                if text.contains("event: snapshot"), !changed.withLockedValue({ $0 }) {
                    changed.withLockedValue { $0 = true }
                    backend.update { $0[0].framesDone = 60; $0[0].tasks.done = 3 }
                }
                return text.contains(#""framesDone":60"#)
            }
            #expect(changed.withLockedValue { $0 })
            #expect(text.hasPrefix("HTTP/1.1 200"))
            #expect(text.lowercased().contains("content-type: text/event-stream"))
            let snapshots = text.components(separatedBy: "event: snapshot").count - 1
            #expect(snapshots >= 2, "\(text.suffix(500))")
            #expect(text.contains(#""framesDone":60"#), "the change was not pushed")
            #expect(text.contains(#""name":"render-01""#))
        }
    }
}
