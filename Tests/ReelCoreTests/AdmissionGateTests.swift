import Foundation
import ReelThreadTesting
import Testing

/// `AdmissionGate`: no more holders than places, waiters admitted in order as places free up.
@Suite struct AdmissionGateTests {
    @Test func noMoreHoldersThanPlacesAndWaitersGoInInOrder() async throws {
        let gate = AdmissionGate(places: 2)
        let admitted = Collector<Int>()
        await gate.enter()
        await gate.enter()
        // Three more wait, in order; none gets in while both places are held.
        var waiters: [Task<Void, Never>] = []
        for k in 0..<3 {
            waiters.append(Task { await gate.enter(); admitted.append(k) })
            try await waitUntil("waiter \(k) is queued") { gate.waiting == k + 1 }
        }
        #expect(admitted.values.isEmpty && gate.occupancy.inside == 2)
        gate.leave()
        try await waitUntil("one waiter is in") { admitted.values.count == 1 }
        gate.leave()
        try await waitUntil("two waiters are in") { admitted.values.count == 2 }
        #expect(admitted.values == [0, 1] && gate.occupancy.inside == 2 && gate.waiting == 1)
        gate.leave(); gate.leave()
        try await waitUntil("the last waiter is in") { admitted.values.count == 3 }
        gate.leave()
        for waiter in waiters { await waiter.value }
        #expect(admitted.values == [0, 1, 2])
        #expect(gate.occupancy.inside == 0 && gate.occupancy.most == 2)
    }

    /// The `.database` suites really pass their gate: this test case holds a place.
    @Suite(.database) struct Marked {
        @Test func aTestCaseOfADatabaseSuiteHoldsAPlace() async {
            #expect(AdmissionGate.database.occupancy.inside >= 1)
        }
    }
}
