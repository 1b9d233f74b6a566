import Testing
import ReelThreadTesting
@testable import reel

/// The pure pieces behind the operator commands' reconnecting (RetrySchedule, DownloadCursor)
/// and ReconnectingClient itself, on a scripted connection with an injected clock: no sockets,
/// no waiting.
@Suite(.blocking) struct ReconnectTests {
    @Test func theScheduleDoublesToItsCapAndEndsExactlyAtTheWindow() {
        let t0 = ContinuousClock.now
        var schedule = RetrySchedule(policy: RetryPolicy(window: .seconds(20), initialDelay: .milliseconds(250), maximumDelay: .seconds(5)))
        var t = t0
        var delays: [Duration] = []
        while let delay = schedule.failed(at: t) {
            delays.append(delay)
            t += delay
        }
        #expect(Array(delays.prefix(7)) == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5)])
        #expect(t - t0 == .seconds(20), "the last attempt is at the window's end, not past it")
        #expect(delays.last == .milliseconds(2250), "the final delay is cut to what is left (20 − 17.75 s): \(delays)")
        #expect(schedule.inOutage)

        // A success ends the outage: the next one starts from the first delay with a whole window.
        schedule.succeeded()
        #expect(!schedule.inOutage)
        let later = t0 + .seconds(3600)
        #expect(schedule.failed(at: later) == .milliseconds(250))
        #expect(schedule.failed(at: later + .seconds(19)) == .milliseconds(500))
        #expect(schedule.failed(at: later + .seconds(20)) == nil)
    }

    @Test func theDownloadCursorResumesAtTheFirstMissingByteAndRefusesAnythingElse() throws {
        var cursor = DownloadCursor()
        #expect(!cursor.isComplete)
        try cursor.accept(at: 0, total: 20, count: 8, job: 3)
        #expect(cursor.offset == 8 && !cursor.isComplete)
        // After a reconnection the next request asks for byte 8; a reply for any other offset is refused.
        #expect(throws: UserError.self) { var c = cursor; try c.accept(at: 0, total: 20, count: 8, job: 3) }
        #expect(throws: UserError.self) { var c = cursor; try c.accept(at: 8, total: 21, count: 8, job: 3) }
        #expect(throws: UserError.self) { var c = cursor; try c.accept(at: 8, total: 20, count: 0, job: 3) }
        #expect(throws: UserError.self) { var c = cursor; try c.accept(at: 8, total: 20, count: 13, job: 3) }
        try cursor.accept(at: 8, total: 20, count: 12, job: 3)
        #expect(cursor.offset == 20 && cursor.isComplete)

        var empty = DownloadCursor()
        try empty.accept(at: 0, total: 0, count: 0, job: 4)
        #expect(empty.isComplete)
    }

    /// A connection whose requests follow a script.
    final class ScriptedConnection: CoordinatorConnection {
        let id: Int
        var isClosed = false
        init(id: Int) { self.id = id }
        func close() async { isClosed = true }
    }

    /// Clock, sleeps, connects and announcements of one ReconnectingClient.
    final class Harness {
        var now = ContinuousClock.now
        var sleeps: [Duration] = []
        var announcements: [String] = []
        var connects = 0
        /// Results of successive connect attempts: a connection id, or nil for "refused".
        var connectScript: [Int?]
        init(connectScript: [Int?]) { self.connectScript = connectScript }

        func client(initial: ScriptedConnection?, window: Duration = .seconds(300)) -> ReconnectingClient<ScriptedConnection> {
            ReconnectingClient(
                initial: initial, coordinator: "10.0.0.5:7400", policy: RetryPolicy(window: window),
                connect: {
                    self.connects += 1
                    let next = self.connectScript.isEmpty ? nil : self.connectScript.removeFirst()
                    guard let id = next else {
                        throw UserError("cannot reach the coordinator at 10.0.0.5:7400 (Connection refused)", transient: .connectionLost)
                    }
                    return ScriptedConnection(id: id)
                },
                sleep: { self.sleeps.append($0); self.now += $0 },
                now: { self.now },
                announce: { self.announcements.append($0) })
        }
    }

    @Test func transientFailuresAreRetriedReconnectingOnlyWhenTheConnectionIsGone() async throws {
        let harness = Harness(connectScript: [nil, 1])
        let first = ScriptedConnection(id: 0)
        let client = harness.client(initial: first)
        var calls: [Int] = []
        let value = try await client.perform { connection -> Int in
            calls.append(connection.id)
            switch calls.count {
            case 1: throw UserError("the coordinator failed to handle STATUS (internal)", transient: .internalError)
            case 2: throw UserError("lost the connection to the coordinator", transient: .connectionLost)
            default: return 42
            }
        }
        #expect(value == 42)
        // ERR internal: same connection again. Lost: a refused connect (restarting), then a new one.
        #expect(calls == [0, 0, 1])
        #expect(harness.connects == 2)
        #expect(first.isClosed)
        #expect(harness.sleeps == [.milliseconds(250), .milliseconds(500), .seconds(1)])
        #expect(harness.announcements.count == 1, "said once: \(harness.announcements)")
        #expect(harness.announcements.first?.contains("reconnecting for up to 5 min") == true)

        // The outage is over: the next one is announced again, and starts from the first delay.
        var failedOnce = false
        _ = try await client.perform { connection -> Int in
            if !failedOnce { failedOnce = true; throw UserError("the coordinator failed (internal)", transient: .internalError) }
            return connection.id
        }
        #expect(harness.announcements.count == 2)
        #expect(harness.sleeps.last == .milliseconds(250))
    }

    @Test func whatTheUserMustFixIsThrownAtOnce() async throws {
        let harness = Harness(connectScript: [])
        let client = harness.client(initial: ScriptedConnection(id: 0))
        await #expect(throws: UserError.self) {
            try await client.perform { _ -> Int in throw UserError("job 99 not found (not_found)") }
        }
        #expect(harness.sleeps.isEmpty && harness.announcements.isEmpty && harness.connects == 0)
    }

    @Test func itGivesUpWhenTheWindowIsSpentSayingWhatToDo() async throws {
        let harness = Harness(connectScript: [])  // every reconnect is refused
        let client = harness.client(initial: ScriptedConnection(id: 0), window: .seconds(60))
        client.giveUpHint = "follow it with `reel status 7`"
        let started = harness.now
        do {
            _ = try await client.perform { _ -> Int in throw UserError("lost the connection", transient: .connectionLost) }
            Issue.record("must give up")
        } catch let error as UserError {
            #expect(error.transient == nil, "giving up is final")
            #expect(error.description.contains("gave up after 1 min") && error.description.contains("Connection refused")
                    && error.description.hasSuffix("follow it with `reel status 7`"), "\(error.description)")
        }
        #expect(harness.now - started == .seconds(60))
        #expect(harness.connects == harness.sleeps.count, "one connect attempt after every wait")
        #expect(harness.announcements.count == 1)
    }
}
