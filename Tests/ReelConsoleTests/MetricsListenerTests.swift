import Logging
import ReelConsole
import ReelHTTPTesting
import ServiceLifecycle
import Testing

/// `MetricsListener` (`reel coordinator --metrics`): its documents and nothing else, each
/// answer saying it closes the connection; a port it cannot listen on is named in the error.
@Suite struct MetricsListenerTests {
    static func listener(port: Int) -> MetricsListener {
        MetricsListener(host: "127.0.0.1", port: port, documents: [
            .init(path: "/metrics", contentType: MetricsListener.prometheusText) { "reel_up 1\n" },
            .init(path: "/scale", contentType: "application/json") { "{}\n" },
        ], logger: Logger(label: "metrics-test"))
    }

    @Test func servesItsDocumentsAndNothingElse() async throws {
        let listener = Self.listener(port: 0)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [.init(service: listener.service)],
                                                                          logger: Logger(label: "metrics-test")))
        let running = Task { try await group.run() }
        let http = TinyHTTP(port: try #require(await listener.waitUntilListening()?.port))
        let metrics = try await http.request("GET", "/metrics")
        #expect(metrics.status == 200 && metrics.body == "reel_up 1\n")
        #expect(metrics.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        #expect(metrics.headers["connection"] == "close")
        let scale = try await http.request("GET", "/scale")
        #expect(scale.status == 200 && scale.body == "{}\n" && scale.headers["content-type"] == "application/json")
        for path in ["/", "/api/v1/jobs", "/console.js", "/other"] {
            #expect(try await http.request("GET", path).status == 404, "\(path)")
        }
        await group.triggerGracefulShutdown()
        try await running.value
    }

    @Test func aPortInUseIsNamed() async throws {
        let first = Self.listener(port: 0)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [.init(service: first.service)],
                                                                          logger: Logger(label: "metrics-test")))
        let running = Task { try await group.run() }
        let port = try #require(await first.waitUntilListening()?.port)
        let second = Self.listener(port: port)
        // Raced against a deadline, so that a second listener that did bind cannot hang the test.
        let outcome = try await withThrowingTaskGroup(of: String?.self) { tasks in
            tasks.addTask {
                do { try await second.service.run(); return "it ran" } catch { return "\(error)" }
            }
            tasks.addTask { try await Task.sleep(for: .seconds(30)); return nil }
            let answer = try await tasks.next() ?? nil
            tasks.cancelAll()
            return answer
        }
        #expect(outcome?.hasPrefix("cannot serve metrics on 127.0.0.1:\(port): ") == true, "\(outcome ?? "no answer in 30 s")")
        #expect(await second.waitUntilListening() == nil)
        await group.triggerGracefulShutdown()
        try await running.value
    }
}
