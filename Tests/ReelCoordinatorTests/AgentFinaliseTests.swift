import Foundation
import NIOCore
import ReelAgent
import ReelCoordinator
import ReelCore
import ReelObjectStore
import ReelProtocol
import ReelStoreTesting
import ReelThreadTesting
import ServiceLifecycle
import Testing

/// Finalise tasks on agents with S3 storage (proto/PROTOCOL.md §4.5.1), against the real
/// SeaweedFS of ops/s3.sh, with Reel's own agents running in this process.
@Suite(.database, .blocking, .serialized, .enabled(if: CoordinatorS3.isConfigured, CoordinatorS3.skipReason))
struct AgentFinaliseTests {
    /// Reel's agent (`ReelAgent.Agent`) connected to `harness`, running until `stop()`.
    struct RunningAgent {
        let agent: Agent
        let task: Task<Void, any Error>
        let cache: URL

        static func start(_ harness: CoordinatorHarness, name: String, finalise: Bool = true) throws -> RunningAgent {
            let cache = FileManager.default.temporaryDirectory.appendingPathComponent("reel-agent-\(UUID().uuidString)")
            var configuration = AgentConfiguration(coordinatorHost: "127.0.0.1", coordinatorPort: harness.port, name: name,
                                                   cacheDirectory: cache, claimWaitSeconds: 2, progressInterval: .milliseconds(500))
            configuration.finalise = finalise
            let agent = try Agent(configuration: configuration, authenticator: try Authenticator(secret: Array(CoordinatorHarness.secret.utf8)))
            return RunningAgent(agent: agent, task: Task { try await agent.run() }, cache: cache)
        }

        func stop() async {
            agent.shutdownGracefully()
            _ = try? await task.value
            try? FileManager.default.removeItem(at: cache)
        }
    }

    /// The video packets of a file (pts, dts, size, flags, hash of the data), as ffprobe lists them.
    static func videoPackets(_ path: String) async throws -> [String] {
        let r = try await offThePool {
            try runProgram(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_packets", "-show_data_hash", "sha256",
                            "-show_entries", "packet=pts,dts,size,flags,data_hash", "-of", "csv=p=0", path])
        }
        return r.stdout.split(separator: "\n").map(String.init)
    }

    /// The agent named in the `claimed` events of the job's finalise task.
    static func finaliseClaimers(_ client: ReelClient, job: Int64) async throws -> [String] {
        guard case .report(let json) = try await client.send(.events(job: job, after: 0)) else { throw TestFailure(description: "EVENTS did not REPORT") }
        let report = try JSONDecoder().decode(EventsReport.self, from: Data(json))
        return report.events.filter { $0.kind == "claimed" && ($0.taskLabel ?? "") == "finalise" }.compactMap(\.agent)
    }

    /// The job's video packets rendered by two agents on a coordinator storing in a local
    /// directory (which finalises itself): what every S3 render here must equal. Once per process.
    static let reference = Task { () async throws -> [String] in
        let media = try await TestMedia()
        defer { media.cleanUp() }
        return try await localReference(media)
    }

    static func localReference(_ media: TestMedia) async throws -> [String] {
        let harness = try await CoordinatorHarness()
        let client = try await harness.connect(role: .client, name: "ops@test")
        let job = try await LeaseTests.queuedJob(client, media, withAudio: true)
        let agents = [try RunningAgent.start(harness, name: "local-1"), try RunningAgent.start(harness, name: "local-2")]
        _ = try await client.waitForState(job: job, "done", seconds: 120)
        let output = media.directory.appendingPathComponent("local-\(UUID().uuidString).mp4").path
        try await client.download(job: job, to: output)
        #expect(try await finaliseClaimers(client, job: job).allSatisfy { $0 != "local-1" && $0 != "local-2" },
                "with local storage the coordinator finalises")
        for agent in agents { await agent.stop() }
        await client.close()
        try await harness.stop()
        return try await videoPackets(output)
    }

    @Test func twoAgentsOnS3AndOneFinalisesWithNoResultByteThroughTheCoordinator() async throws {
        let settings = try await CoordinatorS3.settings("agent-finalise")
        try await withCoordinator(configure: { $0.objectStore = settings }) { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media, withAudio: true)
            let agents = [try RunningAgent.start(harness, name: "render-1"), try RunningAgent.start(harness, name: "render-2")]
            let done = try await client.waitForState(job: job, "done", seconds: 120)
            for agent in agents { await agent.stop() }
            #expect(done.tasks.done == 6 && done.framesDone == 50)
            let claimers = try await Self.finaliseClaimers(client, job: job)
            #expect(claimers.count == 1 && ["render-1", "render-2"].contains(claimers.first ?? ""), "finalised by \(claimers)")
            // The coordinator read no result and wrote no output: with an object store its local
            // directory holds copies of what it downloaded (`CoordinatorStorage.localCopy`), and it
            // has none; and reel/1 carried no result bytes (agents used presigned URLs).
            let local = harness.storage
            let copies = FileManager.default.fileExists(atPath: local + "/results/sha256") ? try harness.storedResults() : []
            #expect(copies.isEmpty, "the coordinator downloaded results: \(copies)")
            #expect(!FileManager.default.fileExists(atPath: local + "/outputs/\(job).mp4"))
            #expect(try await CoordinatorS3.objects(settings)["outputs/\(job).mp4"] != nil)
            #expect(try await CoordinatorS3.objects(settings)["posters/\(job).jpg"] != nil)
            // reel/1 served no byte out (no FETCH of a source or plan, no OUTPUT).
            let port = try #require(harness.coordinator.metricsAddress?.port)
            let http = try RawConnection(port: port)
            try http.send("GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
            var metrics: [String] = []
            while let line = try? http.readLine() { metrics.append(line) }
            #expect(metrics.contains("reel_bytes_out_total 0"), "\(metrics.filter { $0.hasPrefix("reel_bytes") })")

            guard case .url(let url) = try await client.send(.outputURL(job: job)) else { Issue.record("OUTPUTURL gave no URL"); return }
            let output = media.directory.appendingPathComponent("agent-finalised.mp4").path
            try await PresignedTransfer().download(url: url.url, to: output)
            let packets = try await Self.videoPackets(output)
            #expect(packets.count == 50)
            let reference = try await Self.reference.value
            #expect(packets == reference, "the agent's output has the video packets of a local-storage render")
        }
    }

    static let finaliseCaps = AgentCapabilities(threads: 1, encoders: ["libx264", "aac"], cacheBytes: 1 << 20, host: "localhost", finalise: true)

    /// How a test damages a result in the bucket (other bytes, same size) behind the
    /// coordinator's back, and who notices.
    enum Damage: String, CaseIterable, Sendable {
        /// Stored with its own `x-amz-checksum-sha256`: the coordinator's HEAD before handing
        /// out the finalise sees a SHA-256 other than the result's.
        case withItsChecksum
        /// Stored by botocore with no SHA-256 (its default CRC32): a HEAD cannot tell, the
        /// finalising agent's hash does (`INPUTBAD`).
        case withoutSHA256

        var noticedBy: String { self == .withItsChecksum ? "the store reports SHA-256" : "read by rescuer do not have SHA-256" }

        func plant(_ key: String, size: Int64) async throws {
            switch self {
            case .withItsChecksum:
                _ = try await CoordinatorS3.client().putObject(key: key, bytes: [UInt8](repeating: 7, count: Int(size)))
            case .withoutSHA256:
                let environment = ProcessInfo.processInfo.environment
                let r = try await offThePool {
                    try runProgram(["python3", "-c", """
                        import botocore.session, sys
                        s = botocore.session.get_session()
                        s.set_config_variable('credentials_file', sys.argv[3])
                        c = s.create_client('s3', endpoint_url=sys.argv[1], region_name='us-east-1')
                        c.put_object(Bucket=sys.argv[2], Key=sys.argv[4], Body=bytes([7]) * int(sys.argv[5]))
                        """, environment["REEL_TEST_S3_ENDPOINT"] ?? "", CoordinatorS3.bucket,
                        environment["REEL_TEST_S3_CREDENTIALS"] ?? "", key, "\(size)"])
                }
                #expect(r.status == 0, "\(r.stderr)")
            }
        }
    }

    /// A chunk's result damaged in the bucket after it was rendered (other bytes, same size):
    /// that chunk alone is rendered again, the agent finalises, and the output is identical.
    @Test(arguments: Damage.allCases)
    func aResultDamagedInTheBucketIsRenderedAgainAndTheAgentFinalisesTheSameOutput(_ damage: Damage) async throws {
        let settings = try await CoordinatorS3.settings("agent-finalise-damage")
        try await withCoordinator(configure: { $0.objectStore = settings }) { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media, withAudio: true)
            // A capable agent connected (it never claims): the coordinator leaves finalising to agents.
            let holder = try await harness.agent("holder", caps: Self.finaliseCaps)
            let renderer = try await harness.agent("renderer")
            let rendered = try await RenderingAgent(client: renderer, harness: harness, workDirectory: try makeWorkDirectory()).work()
            #expect(rendered.count == 6 && rendered.allSatisfy { $0.kind != .finalise })
            await renderer.close()
            let status = try await client.status(job: job)
            #expect(status.state != "done", "nobody finalised yet")

            let results = try await CoordinatorS3.objects(settings).filter { $0.key.hasPrefix("results/") }.sorted { $0.key < $1.key }
            #expect(results.count == 6)
            let (key, size) = try #require(results.first)
            try await damage.plant(settings.location.objectKey(key), size: size)
            unlink(harness.storage + "/" + key)

            let rescuer = try RunningAgent.start(harness, name: "rescuer")
            let done = try await client.waitForState(job: job, "done", seconds: 120)
            await rescuer.stop()
            #expect(done.tasks.done == 6 && done.framesDone == 50)
            #expect(try await Self.finaliseClaimers(client, job: job).last == "rescuer")
            guard case .report(let json) = try await client.send(.events(job: job, after: 0)) else { Issue.record("no EVENTS"); return }
            let events = try JSONDecoder().decode(EventsReport.self, from: Data(json)).events
            let rerendered = events.filter { $0.kind == "claimed" && $0.agent == "rescuer" && ($0.taskLabel ?? "") != "finalise" }
            #expect(rerendered.count == 1, "the damaged result's task alone again: \(rerendered.map { $0.taskLabel ?? "" })")
            let requeued = events.filter { $0.kind == "requeued" }.map(\.message)
            #expect(requeued.count == 1 && requeued.allSatisfy { $0.contains(damage.noticedBy) }, "\(requeued)")
            guard case .url(let url) = try await client.send(.outputURL(job: job)) else { Issue.record("OUTPUTURL gave no URL"); return }
            let output = media.directory.appendingPathComponent("damaged-then-finalised.mp4").path
            try await PresignedTransfer().download(url: url.url, to: output)
            #expect(try await Self.videoPackets(output) == (try await Self.reference.value))
            await holder.close()
        }
    }

    /// An agent gone mid-finalise (it holds the finalise task and sends nothing more): its lease
    /// expires on the coordinator's clock, and another agent finalises. No sleeping: the test
    /// moves the farm clock past the lease.
    @Test func anAgentLostMidFinaliseLeavesTheFinaliseToAnother() async throws {
        let settings = try await CoordinatorS3.settings("agent-finalise-lost")
        try await withCoordinator(leaseSeconds: 30, configure: { $0.objectStore = settings }) { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media, withAudio: true)
            let doomed = try await harness.agent("doomed", caps: Self.finaliseCaps)
            let renderer = try await harness.agent("renderer")
            try await RenderingAgent(client: renderer, harness: harness, workDirectory: try makeWorkDirectory()).work()
            await renderer.close()

            guard case .task(let assignment, let payload) = try await doomed.send(.claim(waitSeconds: 60)) else {
                Issue.record("the capable agent got no TASK"); return
            }
            #expect(assignment.kind == .finalise)
            let spec = try JSONDecoder().decode(TaskSpecification.self, from: Data(payload))
            let inputs = try #require(spec.inputs)
            #expect(inputs.count == 6 && inputs.filter { $0.kind == .audio }.count == 1)
            #expect(inputs.filter { $0.kind == .videoChunk }.map(\.frames.count).reduce(0, +) == 50)
            // Each URL reads exactly the bytes named.
            let first = try #require(inputs.first)
            let path = media.directory.appendingPathComponent("input-0").path
            let got = try await PresignedTransfer().download(url: first.url, headers: first.headers, to: path, expectedSHA256: first.sha256)
            #expect(got.size == first.size)
            #expect(!"\(first)".contains("X-Amz-Signature"), "an input's description hides its signature")
            await expectRefusal(.notFound) {
                _ = try await doomed.send(.inputBad(task: assignment.task, epoch: assignment.epoch, sha256: String(repeating: "0", count: 64)))
            }
            // The agent dies here. Its lease runs out on the farm clock; the reaper queues the task again.
            harness.clock.advance(seconds: 31)
            let rescuer = try RunningAgent.start(harness, name: "rescuer")
            let done = try await client.waitForState(job: job, "done", seconds: 120)
            await rescuer.stop()
            #expect(done.tasks.done == 6)
            #expect(try await Self.finaliseClaimers(client, job: job) == ["doomed", "rescuer"])
            // The dead agent's lease is gone: what it says now is fenced off.
            await expectRefusal(.staleEpoch) {
                _ = try await doomed.send(.finalURL(task: assignment.task, epoch: assignment.epoch, sha256: first.sha256, total: 1))
            }
            guard case .url(let url) = try await client.send(.outputURL(job: job)) else { Issue.record("OUTPUTURL gave no URL"); return }
            let output = media.directory.appendingPathComponent("rescued.mp4").path
            try await PresignedTransfer().download(url: url.url, to: output)
            #expect(try await Self.videoPackets(output) == (try await Self.reference.value))
            await doomed.close()
        }
    }

    /// A job on S3 with `partSize` direct parts whose chunks are all rendered, and an agent
    /// ("holder", able to finalise) that has claimed its finalise task (epoch `epoch`); `body`
    /// works the task by hand. The holder is closed after `body`.
    func withHeldFinalise(bucket: String, partSize: Int64,
                          _ body: (TestMedia, ReelClient, ObjectStoreSettings, Int64, ReelClient, Int64, Int64) async throws -> Void) async throws {
        let settings = try await CoordinatorS3.settings(bucket)
        try await withCoordinator(configure: { $0.objectStore = settings; $0.directPartSize = partSize }) { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media, withAudio: true)
            let holder = try await harness.agent("holder", caps: Self.finaliseCaps)
            let renderer = try await harness.agent("renderer")
            try await RenderingAgent(client: renderer, harness: harness, workDirectory: try makeWorkDirectory()).work()
            await renderer.close()
            guard case .task(let assignment, _) = try await holder.send(.claim(waitSeconds: 60)) else {
                Issue.record("the capable agent got no TASK"); return
            }
            #expect(assignment.kind == .finalise)
            try await body(media, client, settings, job, holder, assignment.task, assignment.epoch)
            await holder.close()
        }
    }

    /// A finalise output larger than the part size (`FINALPARTS`, proto/PROTOCOL.md §4.5.1): a
    /// multipart upload of the job's output key through part URLs fenced by the finalise lease.
    /// An upload interrupted after its first part is found again with that part held, only the
    /// others are sent, and `FINALDONE upload=` completes it, checks its size and completes the
    /// job. A small output still gets one `PUT`, and a stale epoch is refused.
    @Test func aFinaliseOutputInPartsResumesAfterAnInterruption() async throws {
        let partSize = S3MultipartUploadTests.partSize
        try await withHeldFinalise(bucket: "agent-finalise-parts", partSize: partSize) { media, client, settings, job, holder, task, epoch in
            // The "output": 5 MiB, 5 MiB and 99 bytes (the coordinator reads none of it).
            let output = try S3MultipartUploadTests.file(media.directory, "output.bin", size: 2 * Int(partSize) + 99, seed: 11)
            let total = 2 * partSize + 99
            let key = settings.location.objectKey("outputs/\(job).mp4")

            guard case .url(let small) = try await holder.send(.finalParts(task: task, epoch: epoch, sha256: output.sha256, total: 1000)) else {
                Issue.record("a small FINALPARTS gave no URL"); return
            }
            #expect(small.method == "PUT" && small.total == 1000 && small.url.contains("/outputs/\(job).mp4"))
            await expectRefusal(.staleEpoch) { _ = try await holder.send(.finalParts(task: task, epoch: epoch + 1, sha256: output.sha256, total: total)) }
            guard case .parts(_, let upload, let size, _, let have) = try await holder.send(.finalParts(task: task, epoch: epoch, sha256: output.sha256, total: total)) else {
                Issue.record("FINALPARTS gave no PARTS"); return
            }
            #expect(size == partSize && have.isEmpty)

            // Interrupted after part 1 (a lost connection, a failed part).
            let log = S3MultipartUploadTests.PartURLLog()
            do {
                _ = try await DirectPartUpload().send(file: output.path, upload: BlobUpload(id: upload, total: total, partSize: size, held: have),
                                                      partURL: S3MultipartUploadTests.partURL(holder, sha256: output.sha256, upload: upload, log: log,
                                                                                              task: (task, epoch))) { _ in
                    throw S3MultipartUploadTests.Interrupted()
                }
                Issue.record("the upload was not interrupted")
            } catch is S3MultipartUploadTests.Interrupted {}
            #expect(log.all == [1])
            // Said done too early: parts 2 and 3 are missing; nothing is completed.
            let hashes = try S3MultipartUploadTests.partHashes(output.path, partSize: size)
            await expectRefusal(.notFound) {
                _ = try await holder.send(.finalDone(task: task, epoch: epoch, sha256: output.sha256, total: total, loudness: nil,
                                                     upload: UploadedParts(id: upload, partSHA256s: hashes)))
            }
            #expect(try await client.status(job: job).state != "done")

            // Asked again: the same upload, part 1 held; only parts 2 and 3 go.
            guard case .parts(_, let again, _, _, let held) = try await holder.send(.finalParts(task: task, epoch: epoch, sha256: output.sha256, total: total)) else {
                Issue.record("FINALPARTS gave no PARTS the second time"); return
            }
            #expect(again == upload && held == [1])
            let resumed = S3MultipartUploadTests.PartURLLog()
            let report = try await DirectPartUpload().send(file: output.path, upload: BlobUpload(id: again, total: total, partSize: size, held: held),
                                                           partURL: S3MultipartUploadTests.partURL(holder, sha256: output.sha256, upload: again,
                                                                                                   log: resumed, task: (task, epoch)))
            #expect(report.uploaded == [2, 3] && report.skipped == 1 && resumed.all == [2, 3])
            #expect(try await holder.send(.finalDone(task: task, epoch: epoch, sha256: output.sha256, total: total, loudness: nil,
                                                     upload: UploadedParts(id: again, partSHA256s: report.partSHA256s))) == .accepted(task: task))
            #expect(try await client.status(job: job).state == "done")
            let stored = try await CoordinatorS3.client().sha256(ofObject: key)
            #expect(stored.size == total && stored.sha256 == output.sha256)
            let head = try #require(try await CoordinatorS3.client().headObject(key: key))
            #expect(head.etag.hasSuffix("-3\"") || head.etag.hasSuffix("-3"), "a 3-part object: \(head.etag)")
            #expect(try await CoordinatorS3.client().listMultipartUploads(prefix: key).isEmpty)
        }
    }

    /// Parts held from an earlier upload of other bytes under the output key (which does not name
    /// its content: an earlier attempt's output that differed): `FINALDONE` with the new output's
    /// part SHA-256s is refused (`ERR checksum_mismatch`, SeaweedFS checking them at completion),
    /// the upload is aborted, and the next `FINALPARTS` starts a new one that completes.
    @Test func partsOfAnEarlierOutputAbortTheUploadAndTheNextStartsAnew() async throws {
        let partSize = S3MultipartUploadTests.partSize
        try await withHeldFinalise(bucket: "agent-finalise-stale-parts", partSize: partSize) { media, client, settings, job, holder, task, epoch in
            let total = partSize + 99
            let earlier = try S3MultipartUploadTests.file(media.directory, "earlier.bin", size: Int(total), seed: 12)
            let output = try S3MultipartUploadTests.file(media.directory, "output.bin", size: Int(total), seed: 13)
            // The earlier attempt stored part 1 of its output, then stopped.
            guard case .parts(_, let first, let size, _, _) = try await holder.send(.finalParts(task: task, epoch: epoch, sha256: earlier.sha256, total: total)) else {
                Issue.record("FINALPARTS gave no PARTS"); return
            }
            do {
                _ = try await DirectPartUpload().send(file: earlier.path, upload: BlobUpload(id: first, total: total, partSize: size, held: []),
                                                      partURL: S3MultipartUploadTests.partURL(holder, sha256: earlier.sha256, upload: first,
                                                                                              log: .init(), task: (task, epoch))) { _ in
                    throw S3MultipartUploadTests.Interrupted()
                }
            } catch is S3MultipartUploadTests.Interrupted {}
            // This attempt's output: the upload is found with part 1 held (of the earlier bytes).
            guard case .parts(_, let found, _, _, let held) = try await holder.send(.finalParts(task: task, epoch: epoch, sha256: output.sha256, total: total)) else {
                Issue.record("FINALPARTS gave no PARTS"); return
            }
            #expect(found == first && held == [1])
            let report = try await DirectPartUpload().send(file: output.path, upload: BlobUpload(id: found, total: total, partSize: size, held: held),
                                                           partURL: S3MultipartUploadTests.partURL(holder, sha256: output.sha256, upload: found,
                                                                                                   log: .init(), task: (task, epoch)))
            #expect(report.uploaded == [2])
            await expectRefusal(.checksumMismatch) {
                _ = try await holder.send(.finalDone(task: task, epoch: epoch, sha256: output.sha256, total: total, loudness: nil,
                                                     upload: UploadedParts(id: found, partSHA256s: report.partSHA256s)))
            }
            let key = settings.location.objectKey("outputs/\(job).mp4")
            #expect(try await CoordinatorS3.client().listMultipartUploads(prefix: key).isEmpty, "the upload was aborted")
            // Asked again: a new upload, nothing held; sent whole, it completes the job.
            guard case .parts(_, let fresh, _, _, let none) = try await holder.send(.finalParts(task: task, epoch: epoch, sha256: output.sha256, total: total)) else {
                Issue.record("FINALPARTS gave no PARTS the third time"); return
            }
            #expect(fresh != first && none.isEmpty)
            let again = try await DirectPartUpload().send(file: output.path, upload: BlobUpload(id: fresh, total: total, partSize: size, held: none),
                                                          partURL: S3MultipartUploadTests.partURL(holder, sha256: output.sha256, upload: fresh,
                                                                                                  log: .init(), task: (task, epoch)))
            #expect(try await holder.send(.finalDone(task: task, epoch: epoch, sha256: output.sha256, total: total, loudness: nil,
                                                     upload: UploadedParts(id: fresh, partSHA256s: again.partSHA256s))) == .accepted(task: task))
            let stored = try await CoordinatorS3.client().sha256(ofObject: key)
            #expect(stored.size == total && stored.sha256 == output.sha256)
        }
    }

    /// Reel's agent finalising an output larger than the part size (H.264 at CRF 1, 1920×1080,
    /// over 5 MiB): it goes up in parts (`FINALPARTS`). An upload left under the output key by an
    /// earlier attempt, holding a part 1 of other bytes, is found; the completion refuses it
    /// (`ERR checksum_mismatch`, the upload aborted) and the agent's output upload tries again
    /// (`DirectOutputUpload`), now as a new upload, within the same finalise attempt: the job
    /// is done with one finalise claim and no failure, and the output is a multipart object of
    /// one part per started 5 MiB with every frame.
    @Test func reelsAgentUploadsALargeOutputInPartsAndStartsAnewOverAnEarlierUpload() async throws {
        let settings = try await CoordinatorS3.settings("agent-finalise-large")
        let partSize = S3MultipartUploadTests.partSize
        try await withCoordinator(configure: { $0.objectStore = settings; $0.directPartSize = partSize }) { media, harness, client in
            try await client.upload(media.video)
            let composition = """
                {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}},
                 "videoComposition": {"renderSize": {"width": 1920, "height": 1080}, "frameDuration": "1/25"},
                 "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "sourceRange": {"start": 0, "duration": 2}, "at": 0}]}],
                 "export": {"preset": "medium", "video": {"crf": 1, "x264Preset": "ultrafast"}}}
                """
            var assets = try media.manifest()
            assets["tone"] = nil
            let request = SubmitRequest(composition: composition, assets: assets,
                                        settings: JobSettings(chunkSeconds: Rational(1, 1), encoderThreads: 1, name: "large output"))
            guard case .job(let job, let missing) = try await client.send(.submit(document: Array(try JSONEncoder().encode(request)))),
                  missing.isEmpty else { Issue.record("SUBMIT did not answer JOB with nothing missing"); return }
            // An earlier attempt's upload under the output key, with a part 1 of other bytes.
            let key = settings.location.objectKey("outputs/\(job).mp4")
            let s3 = try CoordinatorS3.client()
            let stale = try await s3.createMultipartUpload(key: key)
            _ = try await s3.uploadPart(key: key, uploadID: stale, number: 1,
                                        bytes: ByteBuffer(bytes: [UInt8](repeating: 3, count: Int(partSize))))

            let agents = [try RunningAgent.start(harness, name: "render-1"), try RunningAgent.start(harness, name: "render-2")]
            _ = try await client.waitForState(job: job, "done", seconds: 180)
            for agent in agents { await agent.stop() }
            let claimers = try await Self.finaliseClaimers(client, job: job)
            #expect(claimers.count == 1 && claimers.allSatisfy { $0.hasPrefix("render-") }, "one finalise attempt: \(claimers)")
            guard case .report(let json) = try await client.send(.events(job: job, after: 0)) else { Issue.record("no EVENTS"); return }
            let events = try JSONDecoder().decode(EventsReport.self, from: Data(json)).events
            #expect(!events.contains { $0.kind == "failed" }, "\(events.filter { $0.kind == "failed" }.map(\.message))")

            let head = try #require(try await s3.headObject(key: key))
            let parts = Int((head.size + partSize - 1) / partSize)
            #expect(head.size > partSize && parts >= 2)
            #expect(head.etag.hasSuffix("-\(parts)\"") || head.etag.hasSuffix("-\(parts)"), "\(head.size) bytes in \(parts) parts: \(head.etag)")
            #expect(try await s3.listMultipartUploads(prefix: key).isEmpty, "the stale upload was aborted")
            guard case .url(let url) = try await client.send(.outputURL(job: job)) else { Issue.record("OUTPUTURL gave no URL"); return }
            let output = media.directory.appendingPathComponent("large.mp4").path
            let got = try await PresignedTransfer().download(url: url.url, to: output)
            #expect(got.size == head.size)
            #expect(try await Self.videoPackets(output).count == 50)
        }
    }

    /// With S3 and no connected agent that can finalise (old agents, or `--no-finalise`), the
    /// coordinator finalises itself at once, as with a local directory: the job never waits.
    @Test func withNoCapableAgentTheCoordinatorFinalises() async throws {
        let settings = try await CoordinatorS3.settings("agent-finalise-fallback")
        try await withCoordinator(configure: { $0.objectStore = settings }) { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media, withAudio: true)
            let agent = try RunningAgent.start(harness, name: "no-finalise", finalise: false)
            _ = try await client.waitForState(job: job, "done", seconds: 120)
            await agent.stop()
            #expect(try await Self.finaliseClaimers(client, job: job) == [harness.configuration.finaliserAgentName])
            guard case .url(let url) = try await client.send(.outputURL(job: job)) else { Issue.record("OUTPUTURL gave no URL"); return }
            let output = media.directory.appendingPathComponent("coordinator-finalised.mp4").path
            try await PresignedTransfer().download(url: url.url, to: output)
            #expect(try await Self.videoPackets(output) == (try await Self.reference.value))
        }
    }
}

