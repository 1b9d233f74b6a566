import Foundation
import Testing
import ReelThreadTesting

/// Two `reel coordinator` processes on one database and one `--storage` directory, agents on
/// both, `reel submit --wait` given both: one coordinator is killed with SIGKILL mid-job and
/// never comes back. The agents on it move to the other with their leases, the client follows
/// the job there, and the output's video packets equal a fault-free render's, with no chunk
/// accepted twice (RestartFaultTests' checks). Needs `REEL_TEST_DATABASE_URL` (ops/test.sh).
@Suite(.database, .blocking, .serialized) struct SeveralCoordinatorsFaultTests {
    @Test func submitWaitSurvivesOneOfTwoCoordinatorsKilled() throws {
        try Self.killOneOfTwoCoordinatorsMidJob(try FarmTests.LocalFarm(agents: 2, leaseSeconds: 5, coordinators: 2))
    }

    /// Starts a job on `farm` (two coordinators, two agents), kills the first coordinator with
    /// SIGKILL mid-job and checks that the job ends as a fault-free render would, that agents
    /// were on both coordinators and all end on the survivor, and that the registry lists both.
    /// S3FarmTests runs it with the farm's storage in S3.
    static func killOneOfTwoCoordinatorsMidJob(_ farm: FarmTests.LocalFarm) throws {
        let composition = try FarmTests.makeComposition(in: farm.dir, size: "320x240", seconds: RestartFaultTests.seconds)
        let run = try RestartFaultTests.submitAndInjectMidJob(farm, composition: composition) { farm.killCoordinator() }
        try RestartFaultTests.checkOutcome(farm, run, composition: composition)
        #expect(farm.coordinator.hasExited, "the killed coordinator stayed dead")
        #expect(farm.otherCoordinators.allSatisfy { !$0.hasExited }, "the other coordinator ran on")
        // Agents were on both, and the one on the killed coordinator moved to the other.
        let killed = "127.0.0.1:\(farm.ports[0])", survivor = "127.0.0.1:\(farm.ports[1])"
        func connections(_ log: String) -> [String] {
            log.split(separator: "\n").filter { $0.contains("connected") && !$0.contains("reconnecting") }.map(String.init)
        }
        let logs = farm.agents.values.map { connections($0.output) }
        #expect(logs.contains { $0.first?.contains(killed) == true }, "an agent started on the coordinator that was killed: \(logs)")
        #expect(logs.contains { $0.first?.contains(survivor) == true }, "an agent started on the other: \(logs)")
        #expect(logs.allSatisfy { $0.last?.contains(survivor) == true }, "every agent ends on the survivor: \(logs)")
        // The registry lists both (the killed one turns `silent` once three heartbeats are missed).
        let coordinators = try JSONSerialization.jsonObject(with: Data(try farm.reel(["agents", "--json"]).stdout.utf8)) as? [String: Any]
        let listed = (coordinators?["coordinators"] as? [[String: Any]]) ?? []
        #expect(listed.count == 2, "both coordinators are in the registry: \(listed)")
    }
}
