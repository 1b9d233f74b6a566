import Foundation
import Testing
import ReelAgent
import ReelCore
import ReelMedia
import ReelObjectStore
import ReelProtocol
import ReelThreadTesting

/// The agent moving bytes straight to and from a real S3 server (SeaweedFS from ops/s3.sh) through
/// the presigned URLs a coordinator hands out (proto/PROTOCOL.md §4.5): sources by ranged GETs,
/// results by one PUT bound to their SHA-256. URLs that the server must refuse — signed already
/// expired (a signing clock an hour behind, no waiting), or with a changed signature — are
/// refused by the server, and the agent asks for new ones and finishes. Skipped, saying so,
/// without `REEL_TEST_S3_ENDPOINT`.
@Suite(.serialized, .enabled(if: AgentS3.isConfigured, AgentS3.skipReason))
struct DirectTransferTests {
    @Test(arguments: [AgentS3.Spoil.expired, .tampered])
    func sourcesAndResultsGoThroughTheStoreAndRefusedURLsAreAskedForAgain(_ spoil: AgentS3.Spoil) async throws {
        let fixture = try await RenderFixture.make(seconds: 2, audio: true)
        defer { fixture.remove() }
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        let store = try await AgentS3.store(spoil)
        coordinator.direct = store
        let frames = FrameRange(start: 25, end: 50)
        let video = fixture.specification(task: 11, kind: .videoChunk, frames: frames)
        try coordinator.enqueue(video)
        // The sources and the plan document are in the store only: FETCH finds nothing.
        for (hash, bytes) in fixture.contents { _ = try await store.client.putObject(key: store.key("assets", hash), bytes: bytes) }
        let plan = try #require(TestPlanDocuments.bytes(video.planDocument.sha256))
        _ = try await store.client.putObject(key: store.key("assets", video.planDocument.sha256), bytes: plan)
        coordinator.spoilSourceURLs = 1
        coordinator.spoilResultURLs = 1

        let running = try RunningAgent.start(on: coordinator)
        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }
        #expect(await eventually { coordinator.results.count == 1 },
                "results: \(coordinator.results.map(\.task)) fails: \(coordinator.fails.map(\.reason))")
        #expect(try await running.group.shutDownGracefully())
        await coordinator.stop()

        // The result in the store is the chunk a direct render of the local files makes.
        let result = try #require(coordinator.results.first)
        let path = fixture.directory.appendingPathComponent("direct-video.mp4").path
        let localPlan = fixture.localPlan
        let reference = try await offThePool { try ChunkRenderer.renderVideo(localPlan, frames: frames, to: path, encoderThreads: 1) }
        #expect(result.sha256 == reference.sha256)
        #expect(result.bytes == [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))

        // No byte came through the coordinator; the refused URLs were replaced by fresh ones.
        #expect(coordinator.fetchCount == 0 && coordinator.parts.isEmpty && coordinator.resultDones == 1)
        let urls = coordinator.directURLs
        #expect(urls.first == "SOURCEURL-spoiled" && urls.dropFirst().first == "SOURCEURL", "\(urls)")
        #expect(urls.filter { $0.hasPrefix("RESULTURL") } == ["RESULTURL-spoiled", "RESULTURL"], "\(urls)")
        #expect(Int64(running.agent.cache.fetchedBytes) > 0)
        #expect(coordinator.fails.isEmpty)
        #expect(running.workFiles.isEmpty, "left in work/: \(running.workFiles)")
    }

    @Test func withoutAStoreTheAgentFallsBackToFetchAndResultParts() async throws {
        let fixture = try await RenderFixture.make(seconds: 1, audio: false)
        defer { fixture.remove() }
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        fixture.serve(on: coordinator)
        try coordinator.enqueue(fixture.specification(task: 21, kind: .videoChunk, frames: FrameRange(start: 0, end: 25)))
        let running = try RunningAgent.start(on: coordinator)
        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }
        #expect(await eventually { coordinator.results.count == 1 }, "fails: \(coordinator.fails.map(\.reason))")
        #expect(try await running.group.shutDownGracefully())
        await coordinator.stop()
        #expect(coordinator.fetchCount > 0 && !coordinator.parts.isEmpty && coordinator.directURLs.isEmpty)
    }
}

/// The S3 server of the agent's tests (as `CoordinatorS3` for the coordinator's).
enum AgentS3 {
    enum Spoil: String, Sendable, CustomTestStringConvertible {
        case expired, tampered
        var testDescription: String { rawValue }
    }

    static let environment = ProcessInfo.processInfo.environment
    static var isConfigured: Bool { !(environment["REEL_TEST_S3_ENDPOINT"] ?? "").isEmpty }
    static let skipReason: Comment = """
        REEL_TEST_S3_ENDPOINT is not set: start a server with `ops/s3.sh start DIR PORT` and export \
        REEL_TEST_S3_ENDPOINT (its output) and REEL_TEST_S3_CREDENTIALS=DIR/credentials (ops/test.sh does)
        """
    static let bucket = "reel-agent-test-\(UInt32.random(in: 0...UInt32.max))"

    static func client(now: @escaping @Sendable () -> Date = { Date() }) throws -> S3Client {
        let file = environment["REEL_TEST_S3_CREDENTIALS"] ?? ""
        let credentials = try CredentialChain(environment: file.isEmpty ? environment
                                              : ["AWS_SHARED_CREDENTIALS_FILE": file, "HOME": "/nonexistent"]).resolve()
        return S3Client(configuration: S3ClientConfiguration(endpoint: try S3Endpoint(environment["REEL_TEST_S3_ENDPOINT"] ?? ""), bucket: bucket),
                        credentials: credentials, now: now)
    }

    static let bucketCreated = Task { try await client().createBucket() }

    static func store(_ spoil: Spoil) async throws -> FakeCoordinator.DirectStore {
        try await bucketCreated.value
        let client = try client()
        let spoiled: @Sendable (PresignedOperation) throws -> (PresignedRequest, url: String)
        switch spoil {
        case .expired:
            // Signed an hour ago for 60 s: past its expiry before it is handed out.
            let past = try AgentS3.client(now: { Date().addingTimeInterval(-3600) })
            spoiled = { let request = try past.presign($0, expires: 60); return (request, request.url) }
        case .tampered:
            // One hex digit of the signature (the query's last item) changed.
            spoiled = { operation in
                let good = try client.presign(operation)
                precondition(good.url.range(of: "X-Amz-Signature=") != nil)
                return (good, String(good.url.dropLast()) + (good.url.last == "0" ? "1" : "0"))
            }
        }
        return FakeCoordinator.DirectStore(client: client, spoiled: spoiled, prefix: "agent/\(UUID().uuidString)")
    }
}
