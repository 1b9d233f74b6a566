import Foundation
import ReelCoordinator
import ReelCore
import ReelLogTesting
import ReelMedia
import ReelObjectStore
import ReelProtocol
import ReelStoreTesting
import ReelThreadTesting
import Testing

/// The real S3-compatible server of the coordinator's S3 tests: SeaweedFS from ops/s3.sh, named
/// by `REEL_TEST_S3_ENDPOINT` with its credentials file in `REEL_TEST_S3_CREDENTIALS` (ops/test.sh
/// sets both). Without the endpoint the tests are skipped, saying so.
enum CoordinatorS3 {
    static let environment = ProcessInfo.processInfo.environment
    static var isConfigured: Bool { !(environment["REEL_TEST_S3_ENDPOINT"] ?? "").isEmpty }
    static let skipReason: Comment = """
        REEL_TEST_S3_ENDPOINT is not set: start a server with `ops/s3.sh start DIR PORT` and export \
        REEL_TEST_S3_ENDPOINT (its output) and REEL_TEST_S3_CREDENTIALS=DIR/credentials (ops/test.sh does)
        """
    /// One bucket per test process.
    static let bucket = "reel-coord-test-\(UInt32.random(in: 0...UInt32.max))"

    /// Found the way the coordinator finds them: the AWS chain, pointed at ops/s3.sh's file.
    static func credentials() throws -> S3Credentials {
        let file = environment["REEL_TEST_S3_CREDENTIALS"] ?? ""
        return try CredentialChain(environment: file.isEmpty ? environment : ["AWS_SHARED_CREDENTIALS_FILE": file, "HOME": "/nonexistent"])
            .resolve()
    }

    static func client() throws -> S3Client {
        S3Client(configuration: S3ClientConfiguration(endpoint: try S3Endpoint(environment["REEL_TEST_S3_ENDPOINT"] ?? ""), bucket: bucket),
                 credentials: try credentials())
    }

    static let bucketCreated = Task { try await client().createBucket() }

    /// Settings for a coordinator whose blobs live under a prefix of their own.
    static func settings(_ name: String) async throws -> ObjectStoreSettings {
        try await bucketCreated.value
        return ObjectStoreSettings(location: try ObjectStoreLocation(bucket: bucket, prefix: "\(name)/\(UUID().uuidString)"),
                                   endpoint: try S3Endpoint(environment["REEL_TEST_S3_ENDPOINT"] ?? ""), credentials: try credentials())
    }

    /// Every object under the settings' prefix, by its key relative to the prefix.
    static func objects(_ settings: ObjectStoreSettings) async throws -> [String: Int64] {
        let root = settings.location.objectKey("")
        let listed = try await client().listAllObjects(prefix: root)
        return Dictionary(uniqueKeysWithValues: listed.map { (String($0.key.dropFirst(root.count)), $0.size) })
    }
}

/// The coordinator with its blobs in S3 (`--storage s3://…`): the same farm path as
/// `RenderFlowTests`, and damage detection and retention working against the bucket.
@Suite(.database, .enabled(if: CoordinatorS3.isConfigured, CoordinatorS3.skipReason))
struct S3StorageTests {
    @Test func aJobRendersWithEveryBlobInTheBucketUnderItsKey() async throws {
        let settings = try await CoordinatorS3.settings("render")
        try await withCoordinator(configure: { $0.objectStore = settings }) { media, harness, client in
            let manifest = try media.manifest()
            let job = try await LeaseTests.queuedJob(client, media, withAudio: true)
            var objects = try await CoordinatorS3.objects(settings)
            for entry in manifest.values {
                #expect(objects[BlobKey.asset(sha256: entry.sha256).relativePath] == entry.size, "the uploaded source is in the bucket")
            }
            let agentClient = try await harness.agent("render-01")
            let rendered = try await RenderingAgent(client: agentClient, harness: harness, workDirectory: try makeWorkDirectory()).work()
            #expect(rendered.count == 6)
            let done = try await client.waitForState(job: job, "done", seconds: 60)
            #expect(done.tasks.done == 6 && done.framesDone == 50)
            #expect(done.outputFileType == "mp4" && (done.outputBytes ?? 0) > 0)

            let output = media.directory.appendingPathComponent("output.mp4").path
            try await client.download(job: job, to: output)
            #expect(try await countFrames(output) == 50)

            // In the bucket: both sources and the plan document, six results, the output (the
            // bytes `reel fetch` got) and the poster the finaliser made.
            objects = try await CoordinatorS3.objects(settings)
            #expect(objects.keys.filter { $0.hasPrefix("assets/sha256/") }.count == 3, "\(objects.keys.sorted())")
            #expect(objects.keys.filter { $0.hasPrefix("results/sha256/") }.count == 6, "\(objects.keys.sorted())")
            let outputBytes = try Data(contentsOf: URL(fileURLWithPath: output))
            #expect(objects["outputs/\(job).mp4"] == Int64(outputBytes.count))
            let stored = try await CoordinatorS3.client().getObject(key: settings.location.objectKey("outputs/\(job).mp4"))
            #expect(Data(stored.bytes.readableBytesView) == outputBytes)
            #expect(objects["posters/\(job).jpg"] != nil)
            #expect(objects.keys.allSatisfy { BlobKey(relativePath: $0) != nil }, "nothing but blobs: \(objects.keys.sorted())")

            await agentClient.close()
            // A second coordinator on the same database and bucket, with an empty local
            // directory, serves the output from the bucket.
            let second = try await CoordinatorHarness(reusing: harness, configure: {
                $0.objectStore = settings
                $0.storageDirectory = harness.storage + "-second"
            })
            let secondClient = try await second.connect(role: .client, name: "ops@test")
            let again = output + ".again"
            try await secondClient.download(job: job, to: again)
            #expect(try Data(contentsOf: URL(fileURLWithPath: again)) == outputBytes)
            #expect(try await secondClient.status(job: job).outputBytes == Int64(outputBytes.count))
            await secondClient.close()
            try await second.stop()
        }
    }

    /// proto/PROTOCOL.md §4.5 end to end against the real server: sources, results and the output
    /// move through presigned URLs; the coordinator counts a result only once the store holds it
    /// whole, and the store refuses bytes other than those a URL was bound to.
    @Test func directTransfersRenderAJobAndOnlyVerifiedUploadsCount() async throws {
        let settings = try await CoordinatorS3.settings("direct")
        try await withCoordinator(configure: { $0.objectStore = settings }) { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media, withAudio: true)
            let agentClient = try await harness.agent("render-01")
            let agent = RenderingAgent(client: agentClient, harness: harness, workDirectory: try makeWorkDirectory())
            var rendered = 0, checkedRefusals = false
            while case .task(let assignment, let payload) = try await agentClient.send(.claim(waitSeconds: rendered == 0 ? 60 : 5)) {
                let (path, sha256) = try await agent.renderDirect(assignment, payload)
                let size = Int64(try Data(contentsOf: URL(fileURLWithPath: path)).count)
                let (task, epoch) = (assignment.task, assignment.epoch)
                if !checkedRefusals {
                    // Said done before any upload: nothing in the store, nothing counted.
                    await expectRefusal(.notFound) { _ = try await agentClient.send(.resultDone(task: task, epoch: epoch, sha256: sha256, total: size)) }
                    guard case .url(let url) = try await agentClient.send(.resultURL(task: task, epoch: epoch, sha256: sha256, total: size)) else {
                        Issue.record("RESULTURL gave no URL"); return
                    }
                    #expect(url.method == "PUT" && url.total == size && url.headers["x-amz-checksum-sha256"] != nil)
                    // Other bytes of the same length under the URL: the store refuses them (BadDigest).
                    let other = path + ".other"
                    try Data(repeating: 7, count: Int(size)).write(to: URL(fileURLWithPath: other))
                    do {
                        try await PresignedTransfer().put(url: url.url, headers: url.headers, file: other)
                        Issue.record("the store took bytes the URL was not bound to")
                    } catch let error as ObjectStoreError {
                        #expect(error.status == 400 && error.s3Code == "BadDigest", "\(error)")
                        #expect(!"\(error)".contains("X-Amz-Signature"), "the error shows the signed query")
                    }
                    // The URL without its checksum header: refused by the signature.
                    do {
                        try await PresignedTransfer().put(url: url.url, headers: [:], file: path)
                        Issue.record("the store took an upload without the signed checksum header")
                    } catch let error as ObjectStoreError {
                        #expect(error.code == .accessDenied, "\(error)")
                    }
                    try await PresignedTransfer().put(url: url.url, headers: url.headers, file: path)
                    // A wrong size is refused; the right one counts.
                    await expectRefusal(.checksumMismatch) {
                        _ = try await agentClient.send(.resultDone(task: task, epoch: epoch, sha256: sha256, total: size + 1))
                    }
                    // Another epoch of the task is fenced off.
                    await expectRefusal(.staleEpoch) { _ = try await agentClient.send(.resultDone(task: task, epoch: epoch + 1, sha256: sha256, total: size)) }
                    checkedRefusals = true
                } else {
                    guard case .url(let url) = try await agentClient.send(.resultURL(task: task, epoch: epoch, sha256: sha256, total: size)) else {
                        Issue.record("RESULTURL gave no URL"); return
                    }
                    try await PresignedTransfer().put(url: url.url, headers: url.headers, file: path)
                }
                #expect(try await agentClient.send(.resultDone(task: task, epoch: epoch, sha256: sha256, total: size)) == .accepted(task: task))
                rendered += 1
            }
            #expect(rendered == 6)
            let done = try await client.waitForState(job: job, "done", seconds: 60)
            #expect(done.tasks.done == 6 && done.framesDone == 50)

            // The output through OUTPUTURL: 50 frames, the bytes the bucket holds.
            guard case .url(let url) = try await client.send(.outputURL(job: job)) else { Issue.record("OUTPUTURL gave no URL"); return }
            let output = media.directory.appendingPathComponent("direct-output.mp4").path
            let got = try await PresignedTransfer().download(url: url.url, to: output)
            #expect(got.size == url.total)
            #expect(try await countFrames(output) == 50)
            // An asset already in the store is answered STORED at once.
            let manifest = try media.manifest()
            let source = try #require(manifest.values.first)
            #expect(try await client.send(.assetURL(sha256: source.sha256, total: source.size))
                    == .stored(sha256: source.sha256, have: source.size, total: source.size))
            await agentClient.close()
        }
    }

    @Test func noSecretAndNoSignatureIsLoggedAtAnyLevel() async throws {
        let settings = try await CoordinatorS3.settings("logs")
        let capture = LogCapture()
        let media = try await TestMedia()
        defer { media.cleanUp() }
        let harness = try await CoordinatorHarness(configure: { $0.objectStore = settings }, logger: capture.logger, logLevel: .trace)
        let client = try await harness.connect(role: .client, name: "ops@test")
        let job = try await LeaseTests.queuedJob(client, media, withAudio: true)
        let agentClient = try await harness.agent("render-01")
        try await RenderingAgent(client: agentClient, harness: harness, workDirectory: try makeWorkDirectory()).work()
        _ = try await client.waitForState(job: job, "done", seconds: 60)
        try await client.download(job: job, to: media.directory.appendingPathComponent("output.mp4").path)
        // Presigned URLs handed out (they are in the replies, never in the log).
        guard case .url = try await client.send(.outputURL(job: job)) else { Issue.record("OUTPUTURL gave no URL"); return }
        let source = try #require(try media.manifest().values.first)
        guard case .url = try await agentClient.send(.sourceURL(sha256: source.sha256)) else { Issue.record("SOURCEURL gave no URL"); return }
        await agentClient.close()
        await client.close()
        try await harness.stop()

        let secret = try CoordinatorS3.credentials().secretAccessKey.revealed
        let lines = capture.records.map { "\($0.message) \($0.metadata)" }
        #expect(lines.contains { $0.contains("HeadObject") || $0.contains("PutObject") }, "the S3 client's requests were logged (at debug)")
        for forbidden in [secret, "X-Amz-Signature", "Signature=", "Credential=", "X-Amz-Credential"] {
            #expect(!lines.contains { $0.contains(forbidden) }, "\(forbidden == secret ? "the secret" : forbidden) in the log")
        }
    }

    @Test func aDamagedResultInTheBucketIsRenderedAgainAndTheJobSucceeds() async throws {
        let settings = try await CoordinatorS3.settings("damage")
        try await withCoordinator(configure: { $0.objectStore = settings }) { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media, withAudio: false)
            let agentClient = try await harness.agent("render-01")
            let agent = RenderingAgent(client: agentClient, harness: harness, workDirectory: try makeWorkDirectory())
            guard case .task(let first, let payload) = try await agentClient.send(.claim(waitSeconds: 60)) else { Issue.record("no TASK"); return }
            try await agent.render(first, payload)
            // Other bytes of the same size under the result's key in the bucket (planted behind
            // the coordinator's back), and no local copy to hide it.
            let results = try await CoordinatorS3.objects(settings).filter { $0.key.hasPrefix("results/") }
            #expect(results.count == 1)
            let (key, size) = try #require(results.first)
            _ = try await CoordinatorS3.client().putObject(key: settings.location.objectKey(key), bytes: [UInt8](repeating: 7, count: Int(size)))
            unlink(harness.storage + "/" + key)

            var rendered = try await agent.work()
            let deadline = Date().addingTimeInterval(60)
            while !rendered.contains(where: { $0.task == first.task }), Date() < deadline {
                rendered += try await agent.work(claimWait: 1)
            }
            #expect(rendered.filter { $0.task == first.task }.map { $0.epoch > first.epoch } == [true], "the damaged chunk alone again")
            let done = try await client.waitForState(job: job, "done", seconds: 60)
            #expect(done.tasks.done == 5 && done.framesDone == 50)
            let output = media.directory.appendingPathComponent("output.mp4").path
            try await client.download(job: job, to: output)
            #expect(try await countFrames(output) == 50)
            await agentClient.close()
        }
    }

    @Test func retentionDeletesExpiredOutputsAndUnneededBlobsFromTheBucket() async throws {
        let settings = try await CoordinatorS3.settings("retention")
        try await withCoordinator(configure: { $0.objectStore = settings }) { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media, withAudio: false)
            let agentClient = try await harness.agent("render-01")
            try await RenderingAgent(client: agentClient, harness: harness, workDirectory: try makeWorkDirectory()).work()
            _ = try await client.waitForState(job: job, "done", seconds: 60)
            #expect(try await CoordinatorS3.objects(settings)["outputs/\(job).mp4"] != nil)

            // A week and a day later, everything of the job is past every grace.
            let later = Date().addingTimeInterval(8 * 86_400)
            let sweeper = try await StorageSweeper.connecting(configuration: harness.configuration,
                                                              now: { Int64(later.timeIntervalSince1970 * 1000) })
            let report = try await sweeper.sweep()
            #expect(report.outputs == 1 && report.results == 5 && report.assets == 3, "\(report)")
            let left = try await CoordinatorS3.objects(settings)
            #expect(left.keys.filter { !$0.hasPrefix("posters/") }.isEmpty, "\(left.keys.sorted())")
            await expectRefusal(.notFound) { _ = try await client.send(.output(job: job, offset: 0, length: 1)) }
            await agentClient.close()
        }
    }
}

/// With the local directory there are no presigned URLs: every direct-transfer request is
/// answered `no_direct`, and the bytes go over reel/1 as before (proto/PROTOCOL.md §4.5).
@Suite(.database) struct LocalStorageDirectTransferTests {
    @Test func aCoordinatorOnALocalDirectoryAnswersNoDirect() async throws {
        try await withCoordinator { media, harness, client in
            let manifest = try media.manifest()
            let source = try #require(manifest.values.first)
            let agentClient = try await harness.agent("render-01")
            await expectRefusal(.noDirect) { _ = try await agentClient.send(.sourceURL(sha256: source.sha256)) }
            await expectRefusal(.noDirect) { _ = try await client.send(.assetURL(sha256: source.sha256, total: source.size)) }
            await expectRefusal(.noDirect) { _ = try await client.send(.outputURL(job: 1)) }
            await expectRefusal(.noDirect) {
                _ = try await agentClient.send(.resultURL(task: 1, epoch: 1, sha256: source.sha256, total: source.size))
            }
            await agentClient.close()
        }
    }
}

extension RenderingAgent {
    /// Renders a claimed task reading its plan document through a presigned GET (`SOURCEURL`);
    /// returns the rendered file and its SHA-256, for the test to upload.
    func renderDirect(_ assignment: TaskAssignment, _ payload: [UInt8]) async throws -> (path: String, sha256: String) {
        let spec = try JSONDecoder().decode(TaskSpecification.self, from: Data(payload))
        guard case .url(let url) = try await client.send(.sourceURL(sha256: spec.planDocument.sha256)) else {
            throw TestFailure(description: "SOURCEURL of the plan document gave no URL")
        }
        #expect(url.method == "GET" && url.total == spec.planDocument.size)
        let documentBytes = try await PresignedTransfer().get(url: url.url, range: 0..<spec.planDocument.size)
        return try await renderChunk(spec, planDocument: documentBytes, assignment)
    }
}
