import Foundation
import ReelCoordinator
import ReelCore
import ReelMedia
import ReelProtocol
import Testing

/// Results uploaded in ranges (`RESULTPART`): larger than one payload, verified by SHA-256 at
/// the end, in order, fenced on every part, resumable across connections, swept when abandoned.
@Suite(.database) struct RangedResultTests {
    /// `count` bytes of a cheap, non-repeating-per-MiB pattern.
    static func pattern(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBufferPointer { buffer in
            for i in 0..<count { buffer[i] = UInt8(truncatingIfNeeded: (i &* 2_654_435_761) >> 13) }
        }
        return bytes
    }

    /// A coordinator with a queued job and an agent connection holding one of its tasks.
    struct Setup {
        let media: TestMedia
        let harness: CoordinatorHarness
        let client: ReelClient
        let agent: ReelClient
        let task: TaskAssignment
        /// The result to upload, and its SHA-256.
        let bytes: [UInt8]
        let hash: String

        static func start(resultBytes: Int, leaseSeconds: Double = 30, agentName: String = "uploader",
                          configure: @escaping (inout CoordinatorConfiguration) -> Void = { _ in }) async throws -> Setup {
            let media = try await TestMedia()
            let harness = try await CoordinatorHarness(leaseSeconds: leaseSeconds, configure: configure)
            let client = try await harness.connect(role: .client, name: "ops@test")
            _ = try await LeaseTests.queuedJob(client, media)
            let agent = try await harness.connect(role: .agent, name: agentName)
            #expect(try await agent.send(.capabilities(agentCaps)) == .ok)
            guard case .task(let task, _) = try await agent.send(.claim(waitSeconds: 60)) else { throw TestFailure(description: "no TASK") }
            let bytes = RangedResultTests.pattern(resultBytes)
            return Setup(media: media, harness: harness, client: client, agent: agent, task: task, bytes: bytes,
                         hash: FileDigest.sha256(bytes: bytes))
        }

        /// Sends bytes `range` of the result as a part (declaring `sha256`, by default its own).
        func part(_ range: Range<Int>, sha256: String? = nil, on connection: ReelClient? = nil) async throws -> Message {
            try await (connection ?? agent).send(.resultPart(task: task.task, epoch: task.epoch, sha256: sha256 ?? hash,
                                                             offset: Int64(range.lowerBound), total: Int64(bytes.count),
                                                             bytes: Array(bytes[range])))
        }

        /// What a reply to a part says: `stored(have)` (checked to name this task and total and
        /// to renew the lease into the future), `accepted`, or the reply itself when it is neither.
        func outcome(_ reply: Message) -> String {
            switch reply {
            case .resultStored(task.task, let have, Int64(bytes.count), let expires) where expires > Int64(Date().timeIntervalSince1970 * 1000):
                "stored(\(have))"
            case .accepted(task.task): "accepted"
            default: reply.headerLine
            }
        }

        /// Sends a part and says what came back (`outcome`).
        func send(_ range: Range<Int>, sha256: String? = nil, on connection: ReelClient? = nil) async throws -> String {
            outcome(try await part(range, sha256: sha256, on: connection))
        }

        /// Names of the partial result uploads in the coordinator's storage.
        var partialResults: [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: harness.storage + "/results")) ?? []).filter { $0.hasSuffix(".partial") }
        }

        func stop() async throws {
            await agent.close(); await client.close()
            try await harness.stop()
            media.cleanUp()
        }
    }

    /// The error a request was answered with (fails the test when it succeeded).
    static func refusal(_ request: () async throws -> Message) async -> ReelProtocolError? {
        do {
            let reply = try await request()
            Issue.record("expected an ERR, got \(reply.headerLine)")
            return nil
        } catch let error as ReelProtocolError {
            return error
        } catch {
            Issue.record("expected an ERR, got \(error)")
            return nil
        }
    }

    @Test func aResultLargerThanOnePayloadIsUploadedInPartsAndVerifiedByHash() async throws {
        let size = 70 << 20, partSize = 16 << 20
        #expect(size > ProtocolLimits.maxPayloadLength, "the point of the test")
        let setup = try await Setup.start(resultBytes: size)
        var replies: [String] = []
        for offset in stride(from: 0, to: size, by: partSize) {
            replies.append(try await setup.send(offset..<min(size, offset + partSize)))
        }
        #expect(replies == stride(from: partSize, to: size, by: partSize).map { "stored(\($0))" } + ["accepted"])
        // Stored content-addressed, whole and intact; nothing partial left behind.
        let (count, digest) = try FileDigest.sha256(path: setup.harness.resultPath(setup.hash))
        #expect(count == size && digest == setup.hash)
        #expect(setup.partialResults.isEmpty)
        #expect(try await setup.client.status(job: setup.task.job).tasks.done == 1)
        // The lease is spent: a late part of the same upload is stale.
        let late = await Self.refusal { try await setup.part(0..<10) }
        #expect(late?.code == .staleEpoch)
        try await setup.stop()
    }

    @Test func aPartAtTheWrongOffsetIsRefusedWithTheBytesHeld() async throws {
        let setup = try await Setup.start(resultBytes: 3_000)
        #expect(try await setup.send(0..<1_000) == "stored(1000)")
        for wrong in [2_000..<3_000, 0..<1_000, 999..<2_000] {
            let error = await Self.refusal { try await setup.part(wrong) }
            #expect(error?.code == .badRange && error?.heldBytes == 1_000, "part at \(wrong.lowerBound): \(String(describing: error))")
        }
        #expect(try await setup.send(1_000..<2_000) == "stored(2000)")
        #expect(try await setup.send(2_000..<3_000) == "accepted")
        try await setup.stop()
    }

    @Test func aCompleteUploadWithTheWrongHashIsRefusedAndDiscarded() async throws {
        let setup = try await Setup.start(resultBytes: 2_000)
        let wrong = FileDigest.sha256(bytes: Array(setup.bytes.reversed()))
        #expect(try await setup.send(0..<1_000, sha256: wrong) == "stored(1000)")
        let error = await Self.refusal { try await setup.part(1_000..<2_000, sha256: wrong) }
        #expect(error?.code == .checksumMismatch)
        #expect(setup.partialResults.isEmpty, "the upload is discarded")
        // The lease still holds: the right bytes are accepted, sent again from 0.
        #expect(try await setup.send(0..<1_000) == "stored(1000)")
        #expect(try await setup.send(1_000..<2_000) == "accepted")
        try await setup.stop()
    }

    @Test func aStaleEpochMidUploadIsRefusedAndThePartialUploadDiscarded() async throws {
        let setup = try await Setup.start(resultBytes: 3_000)
        #expect(try await setup.send(0..<1_000) == "stored(1000)")
        #expect(setup.partialResults.count == 1)
        // The lease runs out (the test moves the lease clock past it; PROGRESS does not renew
        // it) and the reaper re-queues the task.
        setup.harness.clock.advance(seconds: 31)
        try await eventually("the lease expires") {
            try await setup.agent.send(.progress(task: setup.task.task, epoch: setup.task.epoch, frames: 1)) == .lost(task: setup.task.task)
        }
        let error = await Self.refusal { try await setup.part(1_000..<2_000) }
        #expect(error?.code == .staleEpoch)
        #expect(setup.partialResults.isEmpty, "the partial upload of a stale epoch is discarded at once")
        try await setup.stop()
    }

    @Test func anUploadResumesOnANewConnectionFromTheBytesHeld() async throws {
        // A generous reconnect grace: the test is about resuming, not about racing the grace.
        let setup = try await Setup.start(resultBytes: 3_000, configure: { $0.reconnectGraceSeconds = 60 })
        #expect(try await setup.send(0..<1_000) == "stored(1000)")
        #expect(try await setup.send(1_000..<2_000) == "stored(2000)")
        await setup.agent.close()  // the connection drops

        let again = try await setup.harness.connect(role: .agent, name: "uploader")
        #expect(try await again.send(.capabilities(agentCaps)) == .ok)
        let restart = await Self.refusal { try await setup.part(0..<1_000, on: again) }
        #expect(restart?.heldBytes == 2_000, "the coordinator kept what arrived: \(String(describing: restart))")
        #expect(try await setup.send(2_000..<3_000, on: again) == "accepted")
        let (count, digest) = try FileDigest.sha256(path: setup.harness.resultPath(setup.hash))
        #expect(count == 3_000 && digest == setup.hash)
        await again.close()
        try await setup.stop()
    }

    @Test func anUploadResumesAcrossACoordinatorRestartCheckedAgainstTheBytesOnDisk() async throws {
        let grace: (inout CoordinatorConfiguration) -> Void = { $0.reconnectGraceSeconds = 60 }
        let setup = try await Setup.start(resultBytes: 3_000, configure: grace)
        #expect(try await setup.send(0..<2_000) == "stored(2000)")
        await setup.agent.close(); await setup.client.close()
        try await setup.harness.stop()

        // The new process has no running digest: it must hash the 2 000 bytes on disk first.
        let second = try await CoordinatorHarness(reusing: setup.harness, configure: grace)
        let again = try await second.agent("uploader")
        #expect(try await setup.send(2_000..<3_000, on: again) == "accepted")
        let (count, digest) = try FileDigest.sha256(path: second.resultPath(setup.hash))
        #expect(count == 3_000 && digest == setup.hash)
        await again.close()
        try await second.stop()
        setup.media.cleanUp()
    }

    @Test func theSweepDeletesPartialUploadsWhoseLeaseIsGoneAndKeepsLiveOnes() async throws {
        let setup = try await Setup.start(resultBytes: 2_000, configure: { $0.reconnectGraceSeconds = 0.5 })
        #expect(try await setup.send(0..<1_000) == "stored(1000)")
        let sweeper = try StorageSweeper(configuration: setup.harness.configuration)
        #expect(try await sweeper.sweep().abandonedUploads == 0, "the lease lives: the upload can still complete")
        #expect(setup.partialResults.count == 1)

        // The agent's connection drops and never comes back: its lease ends after the grace.
        await setup.agent.close()
        try await eventually("the lease ends and the task is queued again") {
            try await setup.client.status(job: setup.task.job).tasks.running == 0
        }
        #expect(try await sweeper.sweep().abandonedUploads == 1)
        #expect(setup.partialResults.isEmpty)
        try await setup.stop()
    }
}
