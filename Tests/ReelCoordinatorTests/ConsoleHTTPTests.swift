import ReelHTTPTesting
import Foundation
import ReelConsole
import ReelCoordinator
import ReelCore
import ReelKernels
import ReelMedia
import ReelProtocol
import ReelThreadTesting
import Testing

/// The console on a real coordinator (`--http`): the API's documents are the protocol's, the
/// job page shows each chunk's agent, actions work, and a real browser renders the dashboard.
@Suite(.database) struct ConsoleHTTPTests {
    static func consoleHarness() async throws -> (CoordinatorHarness, TinyHTTP) {
        let harness = try await CoordinatorHarness { $0.http = HostPort(host: "127.0.0.1", port: 0) }
        guard let port = harness.coordinator.httpAddress?.port else { throw TestFailure(description: "the console did not start") }
        return (harness, TinyHTTP(port: port))
    }

    static func token(_ role: ConsoleRole) async throws -> String {
        try await ConsoleTokens.make(authenticator: try Authenticator(secret: Array(CoordinatorHarness.secret.utf8)))
            .issue(role: role, subject: "test", lifetime: .seconds(600))
    }

    @Test func theAPIReturnsTheProtocolsDocumentsAndEachChunksAgent() async throws {
        let media = try await TestMedia()
        defer { media.cleanUp() }
        let (harness, http) = try await Self.consoleHarness()
        let client = try await harness.connect(role: .client, name: "ops@test")
        try await client.upload(media.video)
        try await client.upload(media.audio)
        let job = try await ConsoleControlTests.submit(client, media, priority: 7)
        let agent = try await harness.agent("render-03")
        guard case .task(let task, _) = try await agent.send(.claim(waitSeconds: 60)) else { Issue.record("no TASK"); return }
        let token = try await Self.token(.operator_)

        // The same JobStatus as STATUS job= (nothing moves in between: no frames were reported),
        // except for what only a report about one job carries: its agent time and cost, which
        // the list leaves out, and which grows while the leased task runs (compared below).
        let status = try await client.status(job: job)
        #expect(status.agentSeconds != nil && status.cost == nil && status.unpricedTasks == 1, "one task running on an agent without a price")
        var statusWithoutCost = status
        (statusWithoutCost.agentSeconds, statusWithoutCost.cost, statusWithoutCost.unpricedTasks) = (nil, nil, nil)
        let list = try await http.request("GET", "/api/v1/jobs", token: token)
        #expect(list.status == 200, "\(list.body)")
        let listed = try JSONDecoder().decode(StatusReport.self, from: Data(list.body.utf8))
        #expect(listed.jobs.first { $0.id == job } == statusWithoutCost)
        #expect(status.priority == 7 && !status.paused)
        let running = try await http.request("GET", "/api/v1/jobs?state=running", token: token)
        #expect(try JSONDecoder().decode(StatusReport.self, from: Data(running.body.utf8)).jobs.map(\.id) == [job])
        #expect(try JSONDecoder().decode(StatusReport.self, from: Data(try await http.request("GET", "/api/v1/jobs?state=done", token: token).body.utf8)).jobs.isEmpty)

        let detail = try JSONDecoder().decode(JobDetail.self, from: Data(try await http.request("GET", "/api/v1/jobs/\(job)", token: token).body.utf8))
        var detailWithoutCost = detail.job
        (detailWithoutCost.agentSeconds, detailWithoutCost.cost, detailWithoutCost.unpricedTasks) = (nil, nil, nil)
        #expect(detailWithoutCost == statusWithoutCost)
        #expect(try #require(detail.job.agentSeconds) >= (try #require(status.agentSeconds)), "the running task's agent time counts to now")
        #expect(detail.job.cost == nil && detail.job.unpricedTasks == 1)
        let chunks = detail.chunks.filter { $0.kind == "video_chunk" }
        #expect(chunks.count == status.tasks.total, "every render task is listed")
        let leased = try #require(detail.chunks.first { $0.task == task.task })
        #expect(leased.state == "leased" && leased.agent == "render-03" && leased.attempts == 1 && leased.startedAtMillis != nil)
        #expect(leased.frameStart == task.frameStart && leased.frameEnd == task.frameEnd)
        #expect(detail.chunks.filter { $0.task != task.task }.allSatisfy { $0.state == "queued" && $0.agent == nil })

        // The agents, as AGENTS reports them.
        let agents = try JSONDecoder().decode(AgentsReport.self, from: Data(try await http.request("GET", "/api/v1/agents", token: token).body.utf8))
        let listedAgent = try #require(agents.agents.first { $0.name == "render-03" })
        #expect(listedAgent.state == "busy" && listedAgent.currentTask?.contains("task \(task.task)") == true)

        // Events, then actions through HTTP, seen by the protocol.
        let events = try JSONDecoder().decode(EventsReport.self, from: Data(try await http.request("GET", "/api/v1/jobs/\(job)/events", token: token).body.utf8))
        #expect(events.events.map(\.kind).prefix(3) == ["submitted", "planned", "claimed"])
        #expect(try await http.request("POST", "/api/v1/jobs/\(job)/pause", token: try await Self.token(.readOnly)).status == 403)
        #expect(try await client.status(job: job).paused == false)
        #expect(try await http.request("POST", "/api/v1/jobs/\(job)/pause", token: token).status == 200)
        #expect(try await client.status(job: job).paused == true)
        #expect(try await http.request("PUT", "/api/v1/jobs/\(job)/priority", token: token, body: #"{"priority": 42}"#).status == 200)
        #expect(try await client.status(job: job).priority == 42)
        #expect(try await http.request("PUT", "/api/v1/jobs/\(job)/priority", token: token, body: #"{"priority": 4200}"#).status == 400)
        #expect(try await http.request("POST", "/api/v1/jobs/\(job)/cancel", token: token).status == 200)
        let again = try await http.request("POST", "/api/v1/jobs/\(job)/cancel", token: token)
        #expect(again.status == 409 && again.body.contains("already cancelled"), "\(again.body)")
        #expect(try await http.request("GET", "/api/v1/jobs/99999", token: token).status == 404)
        #expect(try await http.request("GET", "/api/v1/jobs/99999/events", token: token).status == 404)
        #expect(try await http.request("GET", "/api/v1/jobs", token: nil).status == 401)

        // /metrics on the console's listener, as on --metrics.
        let metrics = try await http.request("GET", "/metrics")
        #expect(metrics.status == 200 && metrics.body.contains("reel_"), "\(metrics.body.prefix(200))")
        await agent.close(); await client.close()
        try await harness.stop()
    }
}

/// The dashboard in a real browser: Debian's Chromium, headless, loads it from a running
/// coordinator with a job and an agent, and the DOM its script rendered lists both.
@Suite(.database) struct ConsoleBrowserTests {
    static func chromium() throws -> String {
        for path in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] where FileManager.default.isExecutableFile(atPath: path) { return path }
        throw TestFailure(description: "the browser test needs Chromium: run ops/install-deps.sh (apt-get install chromium)")
    }

    /// The DOM after the page's scripts ran, by `chromium --headless --dump-dom`.
    /// Chromium is waited for on a thread of its own: the coordinator serving it needs the concurrency pool.
    static func renderedDOM(_ url: String) async throws -> String {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("reel-chromium-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let arguments = [try chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--no-first-run", "--user-data-dir=\(profile)", "--virtual-time-budget=5000", "--dump-dom", url]
        return try await offThePool { try runProgram(arguments).stdout }
    }

    @Test func theDashboardListsTheJobAndTheAgent() async throws {
        let media = try await TestMedia()
        defer { media.cleanUp() }
        let (harness, http) = try await ConsoleHTTPTests.consoleHarness()
        let client = try await harness.connect(role: .client, name: "ops@test")
        try await client.upload(media.video)
        try await client.upload(media.audio)
        let job = try await ConsoleControlTests.submit(client, media, priority: 3)
        let agent = try await harness.agent("render-browser-1")
        guard case .task = try await agent.send(.claim(waitSeconds: 60)) else { Issue.record("no TASK"); return }
        let token = try await ConsoleHTTPTests.token(.readOnly)
        let url = "http://127.0.0.1:\(http.port)/#token=\(token)"

        // Each run is a fresh page load; retry while the page's data has not arrived yet.
        let deadline = Date().addingTimeInterval(90)
        var dom = ""
        repeat {
            dom = try await Self.renderedDOM(url)
            if dom.contains("data-job-id=\"\(job)\"") && dom.contains("data-agent=\"render-browser-1\"") { break }
        } while Date() < deadline
        #expect(dom.contains("data-job-id=\"\(job)\""), "the jobs table does not list job \(job): \(dom.prefix(3000))")
        #expect(dom.contains("data-agent=\"render-browser-1\""), "the agents table does not list the agent")
        #expect(dom.contains("test job"), "the job's name is shown")
        #expect(dom.contains(">read-only<"), "the token's role is shown")
        #expect(!dom.contains("data-action=\"cancel\""), "a read-only token gets no action buttons")

        // The job's page: the strip shows the claimed chunk rendering, the table its agent, the history the claim.
        let pageURL = "http://127.0.0.1:\(http.port)/#token=\(token)&view=/jobs/\(job)"
        var page = ""
        repeat {
            page = try await Self.renderedDOM(pageURL)
            if page.contains("data-state=\"leased\"") && page.contains(">claimed<") { break }
        } while Date() < deadline
        #expect(page.contains("class=\"cell leased\"") && page.contains("data-state=\"leased\""), "no chunk shown rendering: \(page.prefix(3000))")
        #expect(page.components(separatedBy: "data-state=\"queued\"").count - 1 >= 3, "the queued chunks are in the strip")
        #expect(page.contains("<td>render-browser-1</td>"), "the chunk's agent is listed")
        #expect(page.contains(">claimed<") && page.contains(">submitted<"), "the history is shown")

        // A wrong token: the sign-in form with the coordinator's reason.
        let refused = try await Self.renderedDOM("http://127.0.0.1:\(http.port)/#token=nonsense")
        #expect(refused.contains("not a valid console token"), "\(refused.prefix(3000))")
        await agent.close(); await client.close()
        try await harness.stop()
    }
}

/// POSTER: the newest poster frame of a job, sent by the agent holding one of its tasks, is
/// what the console serves; a stale sender or a non-JPEG changes nothing.
@Suite(.database) struct PosterTests {
    @Test func anAgentsPosterIsServedByTheConsoleAndOnlyTheLeaseHolderMaySendOne() async throws {
        let media = try await TestMedia()
        defer { media.cleanUp() }
        let (harness, http) = try await ConsoleHTTPTests.consoleHarness()
        let client = try await harness.connect(role: .client, name: "ops@test")
        let job = try await LeaseTests.queuedJob(client, media)
        let agent = try await harness.agent("render-01")
        guard case .task(let task, _) = try await agent.send(.claim(waitSeconds: 60)) else { Issue.record("no TASK"); return }
        let token = try await ConsoleHTTPTests.token(.readOnly)
        #expect(try await http.request("GET", "/api/v1/jobs/\(job)/poster", token: token).status == 404, "no poster yet")

        let picture = YUVImage(width: 640, height: 360)
        picture.fill(y: 81, u: 90, v: 240)
        let jpeg = try PosterFrame.jpeg(picture, matrix: .smpte170M)
        #expect(try await agent.send(.poster(task: task.task, epoch: task.epoch, jpeg: jpeg)) == .ok)
        let served = try await http.request("GET", "/api/v1/jobs/\(job)/poster", token: token)
        #expect(served.status == 200 && served.headers["content-type"] == "image/jpeg")
        #expect(served.headers["content-length"] == String(jpeg.count))

        do {
            _ = try await agent.send(.poster(task: task.task, epoch: task.epoch, jpeg: Array("not a picture".utf8)))
            Issue.record("a poster that is not a JPEG was accepted")
        } catch let error as ReelProtocolError {
            #expect(error.code == .malformed)
        }
        #expect(try await agent.send(.poster(task: task.task, epoch: task.epoch + 1, jpeg: jpeg)) == .lost(task: task.task))
        #expect(try await agent.send(.release(task: task.task, epoch: task.epoch)) == .ok)
        #expect(try await agent.send(.poster(task: task.task, epoch: task.epoch, jpeg: jpeg)) == .lost(task: task.task))

        // Deleting the job deletes its poster.
        #expect(try await client.send(.cancel(job: job)) == .ok)
        #expect(try await client.send(.delete(job: job)) == .ok)
        #expect(!FileManager.default.fileExists(atPath: harness.storage + "/posters/\(job).jpg"))
        await agent.close(); await client.close()
        try await harness.stop()
    }
}
