import Crypto
import Foundation
import NIOCore
import ReelCore
import ReelProtocol

/// A load client for `ops/bench-dispatch.sh`: N simulated agents speaking `reel/1` against a
/// real coordinator. Each connects and authenticates as an agent, sends `CAPS`, then loops:
/// `CLAIM` → (optionally "render" for `--render-ms`) → `RESULT` with a small payload, for
/// `--seconds`. With `--render-ms 0` agents claim back to back (throughput); with
/// `--render-ms 1000` each offers about one claim per second (latency under a steady load —
/// in a saturated closed loop, latency is just agents ÷ throughput). To make the load steady
/// rather than 200 claims at once every second, each agent starts at a random moment within
/// the first render time and each "render" lasts between half and one and a half render times
/// (uniformly, seeded per agent, so runs are repeatable): a real farm's chunks do not all end
/// together. Not part of the CLI. `reel-dispatchbench herd …` is a coordinator restart under
/// many real agents instead (`HerdBench`, `ops/bench-herd.sh`).
///
///   reel-dispatchbench --host H --port P --secret-file F --agents N --seconds S [--render-ms M]
@main
struct DispatchBench {
    struct Options {
        var coordinator = HostPort(host: "127.0.0.1", port: HostPort.defaultPort)
        var secretFile = ""
        var agents = 200
        var seconds = 20.0
        var renderMilliseconds = 0
        var resultBytes = 1024
        /// Agents are named PREFIX-0, PREFIX-1, …: load clients on one database (several
        /// coordinators) need prefixes of their own, or their agents are one agent row each.
        var namePrefix = "bench"
    }

    static func main() async {
        do {
            let arguments = Array(CommandLine.arguments.dropFirst())
            if arguments.first == "herd" {
                print(try await HerdBench.run(try HerdBench.parse(Array(arguments.dropFirst()))))
                exit(0)
            }
            let options = try parse(arguments)
            let report = try await run(options)
            print(report)
        } catch {
            FileHandle.standardError.write(Data("reel-dispatchbench: \(error)\n".utf8))
            exit(1)
        }
    }

    static func parse(_ arguments: [String]) throws -> Options {
        var o = Options()
        try forEachOption(arguments) { flag, value in
            switch flag {
            case "--host": o.coordinator.host = try value()
            case "--port": o.coordinator.port = Int(try value()) ?? -1
            case "--secret-file": o.secretFile = try value()
            case "--agents": o.agents = Int(try value()) ?? 0
            case "--seconds": o.seconds = Double(try value()) ?? 0
            case "--render-ms": o.renderMilliseconds = Int(try value()) ?? -1
            case "--name-prefix": o.namePrefix = try value()
            case "--result-bytes": o.resultBytes = Int(try value()) ?? 0
            default: throw BenchError("unknown argument \(flag)")
            }
        }
        guard HostPort.Purpose.connect.ports.contains(o.coordinator.port), !o.secretFile.isEmpty, o.agents >= 1, o.seconds > 0, o.renderMilliseconds >= 0,
              o.resultBytes >= 1 else {
            throw BenchError("usage: reel-dispatchbench --host H --port P --secret-file F --agents N --seconds S [--render-ms M] [--result-bytes B] [--name-prefix P]")
        }
        return o
    }

    /// Per-agent measurements, merged at the end.
    struct Samples: Sendable {
        var claimMilliseconds: [Double] = []
        var resultMilliseconds: [Double] = []
        var empty = 0
        var errors: [String] = []
        /// When this agent's last result was accepted, ms after the start: with a queue that
        /// empties inside the window, the rate counts up to the last work, not the idle tail.
        var lastResultMilliseconds = 0.0
    }

    static func run(_ o: Options) async throws -> String {
        let authenticator = try Authenticator(secretFile: o.secretFile)
        let payload = (0..<o.resultBytes).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let digest = SHA256.hash(data: payload).map { String(format: "%02x", $0) }.joined()
        let clock = ContinuousClock()

        // Connect everyone first: the measured window starts with all agents ready.
        var clients: [ReelClient] = []
        for n in 0..<o.agents {
            let configuration = ReelClientConfiguration(host: o.coordinator.host, port: o.coordinator.port, role: .agent, name: "\(o.namePrefix)-\(n)")
            let client = try await ReelClient.connect(configuration: configuration, authenticator: authenticator)
            _ = try await client.request(.capabilities(AgentCapabilities(threads: 1, encoders: ["libx264", "aac"], cacheBytes: 0, host: "bench")))
            clients.append(client)
        }
        let start = clock.now
        let deadline = start + .milliseconds(Int(o.seconds * 1000))
        let merged = await withTaskGroup(of: Samples.self) { group in
            for (index, client) in clients.enumerated() {
                group.addTask {
                    var samples = Samples()
                    var random = SplitMix64(seed: UInt64(index) &+ 0x5EED)
                    func renderTime() -> Duration { .milliseconds(Int(Double(o.renderMilliseconds) * (0.5 + random.unit()))) }
                    if o.renderMilliseconds > 0 {
                        try? await Task.sleep(for: .milliseconds(Int(Double(o.renderMilliseconds) * random.unit())))
                    }
                    while clock.now < deadline {
                        let asked = clock.now
                        do {
                            let reply = try await client.request(.claim(waitSeconds: 1), timeout: .seconds(30))
                            guard case .task(let assignment, _) = reply else { samples.empty += 1; continue }
                            samples.claimMilliseconds.append(milliseconds(clock.now - asked))
                            if o.renderMilliseconds > 0 { try await Task.sleep(for: renderTime()) }
                            let sent = clock.now
                            _ = try await client.request(.result(task: assignment.task, epoch: assignment.epoch, sha256: digest, data: payload),
                                                         timeout: .seconds(30))
                            samples.resultMilliseconds.append(milliseconds(clock.now - sent))
                            samples.lastResultMilliseconds = milliseconds(clock.now - start)
                        } catch {
                            samples.errors.append("\(error)")
                            if samples.errors.count > 20 { break }
                        }
                    }
                    return samples
                }
            }
            var all = Samples()
            for await s in group {
                all.claimMilliseconds += s.claimMilliseconds
                all.resultMilliseconds += s.resultMilliseconds
                all.empty += s.empty
                all.errors += s.errors
                all.lastResultMilliseconds = max(all.lastResultMilliseconds, s.lastResultMilliseconds)
            }
            return all
        }
        let elapsed = clock.now - start
        for client in clients { await client.close() }

        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let claims = merged.claimMilliseconds.count
        func line(_ name: String, _ values: [Double]) -> String {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return "\(name): none" }
            func p(_ q: Double) -> String { String(format: "%.1f", sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]) }
            return "\(name) ms: p50 \(p(0.5)), p99 \(p(0.99)), max \(String(format: "%.1f", sorted.last!))"
        }
        // Agents claiming back to back that got NONE had emptied the queue: the rate is then
        // over the time until the last result, not the whole window.
        let busySeconds = o.renderMilliseconds == 0 && merged.empty > 0 && merged.lastResultMilliseconds > 0
            ? merged.lastResultMilliseconds / 1000 : seconds
        var lines = [
            "agents: \(o.agents), render: \(o.renderMilliseconds) ms per task, window: \(String(format: "%.1f", seconds)) s"
                + (busySeconds < seconds ? " (the queue emptied after \(String(format: "%.2f", busySeconds)) s)" : ""),
            "claims: \(claims) (\(String(format: "%.0f", Double(claims) / busySeconds)) per second), empty claims (NONE): \(merged.empty)",
            line("claim latency", merged.claimMilliseconds),
            line("result latency", merged.resultMilliseconds),
            "errors: \(merged.errors.count)",
        ]
        if let first = merged.errors.first { lines.append("first error: \(first)") }
        return lines.joined(separator: "\n")
    }

    static func milliseconds(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
