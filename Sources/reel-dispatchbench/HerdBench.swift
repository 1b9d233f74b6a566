import Foundation
import Logging
import ReelAgent
import ReelProtocol
import Synchronization

/// `reel-dispatchbench herd`: a thundering herd for `ops/bench-herd.sh`. Runs N real agents
/// (`ReelAgent.Agent`, one slot each, so the connect, `CAPS` and reconnect-with-backoff loop
/// measured is the one `reel agent` runs, not a copy) against a coordinator, waits until all are
/// registered, writes `--ready-file`, and then, once the coordinator has gone away (the script
/// kills and restarts it), waits until every agent has registered again. It reports how long
/// that took and what each agent met on the way back, as the agents themselves logged it:
/// refusals because the coordinator was busy (`too_many_connections`), handshake timeouts,
/// other failed attempts (nothing listening), and agents that gave up (their `run()` ended).
///
///   reel-dispatchbench herd --host H --port P --secret-file F --agents N --work-dir D
///       --ready-file R [--restarted-file S] [--seconds T] [--name-prefix P]
///
/// `--restarted-file`: where the script writes the moment (ms since 1970) the restarted
/// coordinator listened; the report measures from it too. `--seconds`: how long to wait for
/// each phase (default 300) before reporting what is missing.
enum HerdBench {
    struct Options {
        var coordinator = HostPort(host: "127.0.0.1", port: HostPort.defaultPort)
        var secretFile = ""
        var agents = 1000
        var workDirectory = ""
        var readyFile = ""
        var restartedFile: String?
        var seconds = 300.0
        var namePrefix = "herd"
    }

    static func parse(_ arguments: [String]) throws -> Options {
        var o = Options()
        try forEachOption(arguments) { flag, value in
            switch flag {
            case "--host": o.coordinator.host = try value()
            case "--port": o.coordinator.port = Int(try value()) ?? -1
            case "--secret-file": o.secretFile = try value()
            case "--agents": o.agents = Int(try value()) ?? 0
            case "--work-dir": o.workDirectory = try value()
            case "--ready-file": o.readyFile = try value()
            case "--restarted-file": o.restartedFile = try value()
            case "--seconds": o.seconds = Double(try value()) ?? 0
            case "--name-prefix": o.namePrefix = try value()
            default: throw BenchError("unknown argument \(flag)")
            }
        }
        guard HostPort.Purpose.connect.ports.contains(o.coordinator.port), !o.secretFile.isEmpty, o.agents >= 1,
              !o.workDirectory.isEmpty, !o.readyFile.isEmpty, o.seconds > 0 else {
            throw BenchError("usage: reel-dispatchbench herd --host H --port P --secret-file F --agents N --work-dir D "
                             + "--ready-file R [--restarted-file S] [--seconds T] [--name-prefix P]")
        }
        return o
    }

    static func run(_ o: Options) async throws -> String {
        let authenticator = try Authenticator(secretFile: o.secretFile)
        let tally = HerdTally()
        var agents: [Agent] = []
        for n in 0..<o.agents {
            var configuration = AgentConfiguration(
                coordinatorHost: o.coordinator.host, coordinatorPort: o.coordinator.port, name: "\(o.namePrefix)-\(n)", host: "herd",
                cacheDirectory: URL(fileURLWithPath: o.workDirectory).appendingPathComponent("agent-\(n)"), cacheByteLimit: 1 << 20)
            configuration.finalise = false
            agents.append(try Agent(configuration: configuration, authenticator: authenticator, logger: tally.logger))
        }
        let agentList = agents
        let runs = Task {
            await withTaskGroup(of: Void.self) { group in
                for agent in agentList {
                    group.addTask {
                        try? await agent.run()
                        // Only a drain (the end of this benchmark) may end an agent's run.
                        tally.agentEnded()
                    }
                }
            }
        }
        let phase = Duration.milliseconds(Int(o.seconds * 1000))
        let start = ContinuousClock.now
        guard await waitUntil(within: phase, { tally.registeredOnce == o.agents }) else {
            throw BenchError("only \(tally.registeredOnce) of \(o.agents) agents registered in \(o.seconds) s")
        }
        let firstRegistration = ContinuousClock.now - start
        let before = tally.snapshot()
        tally.startCountingAfterLoss()
        try "\(epochMilliseconds())\n".write(toFile: o.readyFile, atomically: true, encoding: .utf8)
        FileHandle.standardError.write(Data("reel-dispatchbench herd: \(o.agents) agents registered; waiting for the coordinator to go\n".utf8))

        // The coordinator goes away: every agent loses its connection, then comes back.
        guard await waitUntil(within: phase, { tally.lostCount == o.agents }) else {
            throw BenchError("only \(tally.lostCount) of \(o.agents) agents lost their connection in \(o.seconds) s")
        }
        let complete = await waitUntil(within: phase, { tally.reregisteredCount == o.agents })
        let after = tally.snapshot()
        let restarted = o.restartedFile.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }
            .flatMap { Int64($0.trimmingCharacters(in: .whitespacesAndNewlines)) }

        let gaveUpCount = tally.endedCount
        for agent in agents { agent.shutdownGracefully() }
        runs.cancel()

        var lines = [
            "agents: \(o.agents); first registration of all: \(format(firstRegistration)) s "
                + "(refused busy \(before.refusedBusy), handshake timeouts \(before.timeouts), other failed attempts \(before.otherFailures))",
        ]
        let back = after.reregisteredAtMillis.sorted()
        func percentile(_ q: Double, from origin: Int64) -> String {
            guard !back.isEmpty else { return "-" }
            return String(format: "%.2f", Double(back[min(back.count - 1, Int(Double(back.count) * q))] - origin) / 1000)
        }
        if let firstLoss = after.firstLossMillis {
            lines.append("registered again: \(back.count) of \(o.agents)\(complete ? "" : " (gave up waiting after \(Int(o.seconds)) s)")")
            lines.append("since the first lost connection, s: p50 \(percentile(0.5, from: firstLoss)), p90 \(percentile(0.9, from: firstLoss)), "
                         + "all \(percentile(1, from: firstLoss))")
        }
        if let restarted {
            lines.append("since the restarted coordinator listened, s: p50 \(percentile(0.5, from: restarted)), "
                         + "p90 \(percentile(0.9, from: restarted)), all \(percentile(1, from: restarted))")
        }
        func distribution(_ counts: [Int]) -> String {
            let total = counts.reduce(0, +)
            let agents = counts.filter { $0 > 0 }.count
            return "\(total) in all, \(agents) agents met one, at most \(counts.max() ?? 0) for one agent"
        }
        lines.append("after the loss, refused busy (too_many_connections): \(distribution(after.perAgent.map(\.refusedBusy)))")
        lines.append("after the loss, handshake timeouts: \(distribution(after.perAgent.map(\.timeouts)))")
        lines.append("after the loss, other failed attempts (nothing listening, closed): \(distribution(after.perAgent.map(\.otherFailures)))")
        lines.append("after the loss, agents with more than one handshake timeout: \(after.perAgent.filter { $0.timeouts > 1 }.count)")
        lines.append("agents that gave up (run ended before the benchmark's drain): \(gaveUpCount)")
        if let example = after.exampleOther { lines.append("an other failed attempt: \(example)") }
        return lines.joined(separator: "\n")
    }

    static func waitUntil(within limit: Duration, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    static func epochMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    static func format(_ d: Duration) -> String {
        String(format: "%.2f", Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)
    }
}

/// What the herd's agents logged, per agent (the `agent` metadata `Agent` puts on its logger).
/// Counts attempts by what ended them; after `startCountingAfterLoss` it counts afresh and
/// notes when each agent lost its connection and when it registered again.
final class HerdTally: Sendable {
    struct PerAgent: Sendable {
        var registered = false
        var lost = false
        var registeredAgainAtMillis: Int64?
        var refusedBusy = 0
        var timeouts = 0
        var otherFailures = 0
    }

    struct Snapshot: Sendable {
        var perAgent: [PerAgent]
        var refusedBusy: Int { perAgent.reduce(0) { $0 + $1.refusedBusy } }
        var timeouts: Int { perAgent.reduce(0) { $0 + $1.timeouts } }
        var otherFailures: Int { perAgent.reduce(0) { $0 + $1.otherFailures } }
        var reregisteredAtMillis: [Int64] { perAgent.compactMap(\.registeredAgainAtMillis) }
        var firstLossMillis: Int64?
        var exampleOther: String?
    }

    private struct State {
        var agents: [String: PerAgent] = [:]
        var afterLoss = false
        var firstLossMillis: Int64?
        var registeredOnce = 0
        var lost = 0
        var reregistered = 0
        var exampleOther: String?
        var ended = 0
    }

    private let state = Mutex(State())

    var registeredOnce: Int { state.withLock { $0.registeredOnce } }
    var lostCount: Int { state.withLock { $0.lost } }
    var reregisteredCount: Int { state.withLock { $0.reregistered } }
    /// Agents whose `run()` returned.
    var endedCount: Int { state.withLock { $0.ended } }
    func agentEnded() { state.withLock { $0.ended += 1 } }

    func startCountingAfterLoss() {
        state.withLock {
            $0.afterLoss = true
            for name in $0.agents.keys {
                $0.agents[name]?.refusedBusy = 0; $0.agents[name]?.timeouts = 0; $0.agents[name]?.otherFailures = 0
            }
        }
    }

    func snapshot() -> Snapshot {
        state.withLock { Snapshot(perAgent: Array($0.agents.values), firstLossMillis: $0.firstLossMillis, exampleOther: $0.exampleOther) }
    }

    var logger: Logger { Logger(label: "herd") { _ in Handler(tally: self) } }

    func record(agent: String, message: String, error: String?) {
        let now = HerdBench.epochMilliseconds()
        state.withLock { s in
            var entry = s.agents[agent] ?? PerAgent()
            if message == "connected" {
                if !entry.registered { entry.registered = true; s.registeredOnce += 1 }
                if s.afterLoss, entry.lost, entry.registeredAgainAtMillis == nil {
                    entry.registeredAgainAtMillis = now
                    s.reregistered += 1
                }
            } else if message.hasPrefix("connection to the coordinator lost") {
                if s.afterLoss, !entry.lost {
                    entry.lost = true
                    s.lost += 1
                    if s.firstLossMillis == nil { s.firstLossMillis = now }
                }
            } else if let error {
                if error.hasPrefix(ReelProtocolError.Code.tooManyConnections.rawValue) {
                    entry.refusedBusy += 1
                } else if error.hasPrefix(ReelProtocolError.Code.timeout.rawValue) || error.contains("connectTimeout") {
                    entry.timeouts += 1
                } else {
                    entry.otherFailures += 1
                    if s.afterLoss, s.exampleOther == nil { s.exampleOther = error }
                }
            }
            s.agents[agent] = entry
        }
    }

    struct Handler: LogHandler {
        let tally: HerdTally
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            guard let agent = metadata["agent"].map({ "\($0)" }) else { return }
            let error = (event.metadata?["error"]).map { "\($0)" }
            tally.record(agent: agent, message: event.message.description, error: error)
        }
    }
}
