import Foundation
import Testing
import ReelThreadTesting

/// The farm with its storage in S3 (`reel coordinator --storage s3://…`), as operators run it,
/// against the real SeaweedFS of ops/s3.sh: `REEL_TEST_S3_ENDPOINT` and `REEL_TEST_S3_CREDENTIALS`
/// (set by ops/test.sh); skipped, saying so, without them.
@Suite(.blocking, .serialized, .enabled(if: FarmS3.isConfigured, FarmS3.skipReason))
struct S3FarmTests {
    static let environment = ProcessInfo.processInfo.environment

    /// A bucket of its own (made through botocore, which the signer tests use too: `reel` has no
    /// bucket command) and the coordinator's storage in it.
    static func bucketStorage(_ name: String, endpoint: String = environment["REEL_TEST_S3_ENDPOINT"] ?? "",
                              credentials: String = environment["REEL_TEST_S3_CREDENTIALS"] ?? "") throws
        -> (arguments: [String], environment: [String: String]) {
        let bucket = "reel-farm-\(name)-\(UInt32.random(in: 0...UInt32.max))"
        try Media.run("env", ["python3", "-c", """
            import botocore.session, sys
            s = botocore.session.get_session()
            s.set_config_variable('credentials_file', sys.argv[3])
            s.create_client('s3', endpoint_url=sys.argv[1], region_name='us-east-1').create_bucket(Bucket=sys.argv[2])
            """, endpoint, bucket, credentials])
        return (["--storage", "s3://\(bucket)/farm", "--s3-endpoint", endpoint],
                ["AWS_SHARED_CREDENTIALS_FILE": credentials])
    }

    /// The same composition rendered by a farm storing in S3 and by one storing in a folder
    /// (two agents each) has the same video packets; the S3 farm's coordinator logged neither
    /// the secret nor a signature.
    @Test func aFarmRenderWithS3StorageHasThePacketsOfOneWithLocalStorage() throws {
        let s3 = try FarmTests.LocalFarm(agents: 2, storage: try Self.bucketStorage("packets"))
        let local = try FarmTests.LocalFarm(agents: 2)
        let composition = try FarmTests.makeComposition(in: s3.dir, size: "320x240", seconds: 6)
        var packets: [[String]] = []
        for farm in [s3, local] {
            let output = farm.dir.appendingPathComponent("out.mp4").path
            let r = try farm.reel(["submit", composition, "--chunk-seconds", "2", "--wait", "-o", output, "--quiet"], allowFailure: true)
            #expect(r.status == 0, "\(r.stderr); coordinator log: \(farm.coordinator.output)")
            #expect(try Media.framePTS(output).count == 150)
            packets.append(try ReuseTests.videoPackets(output))
        }
        #expect(packets[0].count == 150 && ReuseTests.firstDifference(packets[0], packets[1]) == nil)
        // Where each farm finalised (proto/PROTOCOL.md §4.5.1): on S3 one of the render agents,
        // on the local directory the coordinator itself.
        let finaliser = "SELECT a.name FROM tasks t JOIN agents a ON a.id = t.last_agent WHERE t.kind = 'finalise'"
        let s3Finaliser = try s3.query(finaliser).map { $0.joined() }
        #expect(s3Finaliser.count == 1 && s3Finaliser.allSatisfy { $0.hasPrefix("agent-") }, "\(s3Finaliser)")
        #expect(try local.query(finaliser).map { $0.joined() } == ["@coordinator"])
        // The coordinator's log at the default level: no secret, no signature.
        let secret = try String(contentsOfFile: Self.environment["REEL_TEST_S3_CREDENTIALS"] ?? "", encoding: .utf8)
            .split(separator: "\n").first { $0.contains("aws_secret_access_key") }?.split(separator: "=").last?
            .trimmingCharacters(in: .whitespaces) ?? ""
        #expect(!secret.isEmpty)
        let log = s3.coordinator.output
        #expect(log.contains("coordinator listening") && log.contains("s3://"))
        for forbidden in [secret, "X-Amz-Signature", "Signature="] { #expect(!log.contains(forbidden)) }
    }

    /// An HLS ladder on S3: an agent finalises it (the ladder archive of proto/PROTOCOL.md §4.6
    /// made on the agent and uploaded to the bucket) and the fetched folder is byte for byte the
    /// in-process render's. Then one rendition changed: the agent's finalise joins each chunk
    /// from two archives (its own with the changed rendition, the first job's with the others:
    /// the finalise TASK's inputs with `renditions`).
    @Test func anHLSLadderOnS3IsFinalisedByAnAgentAsItRendersInProcess() throws {
        let farm = try FarmTests.LocalFarm(agents: 2, storage: try Self.bucketStorage("ladder"))
        let (composition, reference, master, job) = try FarmTests.renderLadderBothWays(farm)
        let finaliser = try farm.query("SELECT a.name FROM tasks t JOIN agents a ON a.id = t.last_agent WHERE t.job_id = \(job) AND t.kind = 'finalise'")
        #expect(finaliser.map { $0.joined() }.allSatisfy { $0.hasPrefix("agent-") } && finaliser.count == 1, "\(finaliser)")
        let farmFiles = try FarmTests.folderFiles(master), localFiles = try FarmTests.folderFiles(reference)
        #expect(farmFiles.keys.sorted() == localFiles.keys.sorted())
        #expect(farmFiles.count >= 3 * (FarmTests.ladderSeconds / 2 + 2) + 2, "\(farmFiles.keys.sorted())")
        for (name, bytes) in localFiles { #expect(farmFiles[name] == bytes, "\(name) differs from the in-process render's") }

        let source = farm.dir.appendingPathComponent("src.mov").path
        try FarmTests.ladderComposition(source: source, lowBitRate: 120_000).write(toFile: composition, atomically: true, encoding: .utf8)
        let (changed, job2) = try FarmTests.submitLadder(farm, composition, folder: "changed")
        let finaliser2 = try farm.query("SELECT a.name FROM tasks t JOIN agents a ON a.id = t.last_agent WHERE t.job_id = \(job2) AND t.kind = 'finalise'")
        #expect(finaliser2.map { $0.joined() }.allSatisfy { $0.hasPrefix("agent-") } && finaliser2.count == 1, "\(finaliser2)")
        let encoded = try farm.query("""
            SELECT string_agg(r.name, ',' ORDER BY r.position) FROM tasks t JOIN task_renditions r ON r.task_id = t.id
            WHERE t.job_id = \(job2) AND r.source_sha256 IS NULL GROUP BY t.id
            """).map { $0[0] }
        #expect(encoded == Array(repeating: "low", count: FarmTests.ladderSeconds / 2), "only low is encoded: \(encoded)")
        let changedFiles = try FarmTests.folderFiles(changed)
        for name in ["top", "mid"] {
            #expect(FarmTests.segments(changedFiles, rendition: name) == FarmTests.segments(farmFiles, rendition: name), "\(name) changed")
        }
        #expect(FarmTests.segments(changedFiles, rendition: "low") != FarmTests.segments(farmFiles, rendition: "low"))
        try FarmTests.expectPlays(changed, renditions: FarmTests.ladderRenditions)
    }

    /// A farm of two agents on a bucket of its own whose coordinator uploads in parts above
    /// S3's 5 MiB minimum, the bucket's name, and a `media` folder for the test's sources.
    static func farmWithSmallParts(_ name: String) throws -> (farm: FarmTests.LocalFarm, bucket: String, media: URL) {
        var storage = try bucketStorage(name)
        storage.arguments += ["--direct-part-size", "5242880"]
        let bucket = String(storage.arguments[1].dropFirst("s3://".count).prefix { $0 != "/" })
        let farm = try FarmTests.LocalFarm(agents: 2, storage: storage)
        let media = farm.dir.appendingPathComponent("media")
        try FileManager.default.createDirectory(at: media, withIntermediateDirectories: true)
        return (farm, bucket, media)
    }

    /// `reel submit` of a source over 16 MiB: named by its tree hash (`AssetAddress`, computed
    /// here independently in Python), it goes to the bucket as a multipart upload of 16 MiB
    /// parts (an asset's own layout, whatever the coordinator's part size) through presigned
    /// part URLs, resuming an upload that an earlier, interrupted submit left with part 1 (made
    /// here with botocore under the Python-computed name, as that submit would have); the object
    /// is the file (SHA-256 read back through botocore) and a 3-part object (ETag `…-3`: the
    /// coordinator's own client, had the bytes gone through it over reel/1, would have sent one
    /// 39 MB `PUT`), and the job renders.
    @Test func submitUploadsALargeSourceInPartsResumingAnEarlierUpload() throws {
        let (farm, bucket, media) = try Self.farmWithSmallParts("parts")
        let clip = media.appendingPathComponent("clip.mp4").path
        // Lossless H.264 of noise: about 39 MB for 4 s, so three 16 MiB parts.
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=4,noise=alls=40:allf=t", "-f", "lavfi", "-i",
                          "sine=frequency=500:sample_rate=44100:duration=4", "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0",
                          "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", clip])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: clip))
        #expect(bytes.count > 2 * 16_777_216 && bytes.count <= 3 * 16_777_216, "\(bytes.count) bytes")
        let composition = media.appendingPathComponent("comp.json").path
        try """
            {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]},
                        {"id": 2, "mediaType": "audio", "segments": [{"asset": "clip", "at": 0}]}],
             "export": {"preset": "medium", "video": {"x264Preset": "veryfast"}}}
            """.write(toFile: composition, atomically: true, encoding: .utf8)

        let script = """
            import botocore.session, hashlib, base64, sys, json
            endpoint, credentials, bucket, path, action = sys.argv[1:6]
            s = botocore.session.get_session()
            s.set_config_variable('credentials_file', credentials)
            c = s.create_client('s3', endpoint_url=endpoint, region_name='us-east-1')
            data = open(path, 'rb').read()
            digest = hashlib.sha256(data).hexdigest()
            PART = 16777216
            # The asset's name: the tree hash of its 16 MiB parts (docs/object-storage.md).
            tree = hashlib.sha256(b'reel-asset-tree-v1\\n' + PART.to_bytes(8, 'big') + len(data).to_bytes(8, 'big')
                                  + b''.join(hashlib.sha256(data[i:i + PART]).digest() for i in range(0, len(data), PART))).hexdigest()
            key = 'farm/assets/sha256/%s/%s' % (tree[:2], tree)
            if action == 'start':
                upload = c.create_multipart_upload(Bucket=bucket, Key=key, ChecksumAlgorithm='SHA256')['UploadId']
                part = data[:PART]
                c.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=1, Body=part,
                              ChecksumSHA256=base64.b64encode(hashlib.sha256(part).digest()).decode())
                print(json.dumps({'upload': upload}))
            else:
                head = c.head_object(Bucket=bucket, Key=key)
                body = c.get_object(Bucket=bucket, Key=key)['Body'].read()
                uploads = c.list_multipart_uploads(Bucket=bucket, Prefix=key).get('Uploads', [])
                print(json.dumps({'etag': head['ETag'], 'size': len(body), 'same': hashlib.sha256(body).hexdigest() == digest,
                                  'uploads': len(uploads)}))
            """
        let endpoint = Self.environment["REEL_TEST_S3_ENDPOINT"] ?? "", credentials = Self.environment["REEL_TEST_S3_CREDENTIALS"] ?? ""
        _ = try Media.run("env", ["python3", "-c", script, endpoint, credentials, bucket, clip, "start"])

        let output = farm.dir.appendingPathComponent("out.mp4").path
        let r = try farm.reel(["submit", composition, "--chunk-seconds", "2", "--wait", "-o", output, "--quiet"], allowFailure: true)
        #expect(r.status == 0, "\(r.stderr); coordinator log: \(farm.coordinator.output)")
        #expect(try Media.framePTS(output).count == 100)

        let checked = try Media.run("env", ["python3", "-c", script, endpoint, credentials, bucket, clip, "check"])
        let report = try #require(try JSONSerialization.jsonObject(with: checked.stdout) as? [String: Any])
        #expect(report["size"] as? Int == bytes.count && report["same"] as? Bool == true, "\(report)")
        #expect((report["etag"] as? String)?.hasSuffix("-3\"") == true, "\(report)")
        #expect(report["uploads"] as? Int == 0, "no upload left in progress: \(report)")
        // The coordinator resumed the upload the earlier submit left: part 1 was held.
        let resumed = farm.coordinator.output.split(separator: "\n").filter { $0.contains("resuming a multipart upload") }
        #expect(resumed.count == 1 && resumed.first?.contains("held=1") == true, "\(resumed)")
    }

    /// Agents' chunk results larger than the part size (ProRes 4444 XQ of noise, about 10 MB a
    /// 2-second chunk) go to the bucket in parts (`RESULTPARTS`): every stored result is a
    /// multipart object (ETag `…-N`, N ≥ 2). The output (about 20 MB), finalised by an agent, goes
    /// there in parts too (`FINALPARTS`): a multipart object of one part per started 5 MiB, and
    /// its video packets are those of the same job rendered by a farm storing in a folder.
    @Test func agentsUploadLargeResultsAndTheOutputInParts() throws {
        let (farm, bucket, media) = try Self.farmWithSmallParts("results")
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=4,noise=alls=40:allf=t", "-c:v", "libx264", "-preset", "ultrafast",
                          "-crf", "18", "-pix_fmt", "yuv420p", media.appendingPathComponent("clip.mp4").path])
        let composition = media.appendingPathComponent("comp.json").path
        try """
            {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]}],
             "export": {"preset": "prores4444", "fileType": "mov", "video": {"proresProfile": "4444xq"}}}
            """.write(toFile: composition, atomically: true, encoding: .utf8)
        let output = farm.dir.appendingPathComponent("out.mov").path
        let r = try farm.reel(["submit", composition, "--chunk-seconds", "2", "--wait", "-o", output, "--quiet"], allowFailure: true)
        #expect(r.status == 0, "\(r.stderr); coordinator log: \(farm.coordinator.output)")
        #expect(try Media.framePTS(output).count == 100)
        let listed = try Media.run("env", ["python3", "-c", """
            import botocore.session, sys, json
            s = botocore.session.get_session()
            s.set_config_variable('credentials_file', sys.argv[2])
            c = s.create_client('s3', endpoint_url=sys.argv[1], region_name='us-east-1')
            objects = c.list_objects_v2(Bucket=sys.argv[3], Prefix='farm/results/').get('Contents', [])
            print(json.dumps([{'size': o['Size'], 'etag': c.head_object(Bucket=sys.argv[3], Key=o['Key'])['ETag']} for o in objects]))
            """, Self.environment["REEL_TEST_S3_ENDPOINT"] ?? "", Self.environment["REEL_TEST_S3_CREDENTIALS"] ?? "", bucket])
        let results = try #require(try JSONSerialization.jsonObject(with: listed.stdout) as? [[String: Any]])
        let large = results.filter { ($0["size"] as? Int ?? 0) > 5_242_880 }
        #expect(large.count >= 2, "the video chunks are larger than one part: \(results)")
        for result in large {
            let etag = (result["etag"] as? String ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            let parts = etag.split(separator: "-").last.flatMap { Int($0) } ?? 0
            #expect(etag.contains("-") && parts >= 2, "a result of \(result["size"] ?? 0) bytes stored in parts: \(etag)")
        }

        // The output: finalised by an agent and stored in 5 MiB parts.
        let finaliser = try farm.query("SELECT a.name FROM tasks t JOIN agents a ON a.id = t.last_agent WHERE t.kind = 'finalise'")
        #expect(finaliser.map { $0.joined() }.allSatisfy { $0.hasPrefix("agent-") } && finaliser.count == 1, "\(finaliser)")
        let outputs = try Media.run("env", ["python3", "-c", """
            import botocore.session, sys, json
            s = botocore.session.get_session()
            s.set_config_variable('credentials_file', sys.argv[2])
            c = s.create_client('s3', endpoint_url=sys.argv[1], region_name='us-east-1')
            objects = c.list_objects_v2(Bucket=sys.argv[3], Prefix='farm/outputs/').get('Contents', [])
            uploads = c.list_multipart_uploads(Bucket=sys.argv[3], Prefix='farm/outputs/').get('Uploads', [])
            print(json.dumps({'objects': [{'size': o['Size'], 'etag': c.head_object(Bucket=sys.argv[3], Key=o['Key'])['ETag']} for o in objects],
                              'uploads': len(uploads)}))
            """, Self.environment["REEL_TEST_S3_ENDPOINT"] ?? "", Self.environment["REEL_TEST_S3_CREDENTIALS"] ?? "", bucket])
        let listing = try #require(try JSONSerialization.jsonObject(with: outputs.stdout) as? [String: Any])
        let objects = try #require(listing["objects"] as? [[String: Any]])
        #expect(objects.count == 1 && listing["uploads"] as? Int == 0, "\(listing)")
        let outputSize = objects.first?["size"] as? Int ?? 0
        let outputETag = (objects.first?["etag"] as? String ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        let expectedParts = (outputSize + 5_242_879) / 5_242_880
        let fetched = try Data(contentsOf: URL(fileURLWithPath: output)).count
        #expect(outputSize > 2 * 5_242_880 && outputSize == fetched, "\(outputSize) bytes, fetched \(fetched)")
        #expect(outputETag.hasSuffix("-\(expectedParts)"), "the \(outputSize)-byte output stored in \(expectedParts) parts: \(outputETag)")

        // The same job on a farm storing in a folder: the same video packets.
        let local = try FarmTests.LocalFarm(agents: 2)
        let localOutput = local.dir.appendingPathComponent("out.mov").path
        let l = try local.reel(["submit", composition, "--chunk-seconds", "2", "--wait", "-o", localOutput, "--quiet"], allowFailure: true)
        #expect(l.status == 0, "\(l.stderr); coordinator log: \(local.coordinator.output)")
        let packets = try ReuseTests.videoPackets(output), localPackets = try ReuseTests.videoPackets(localOutput)
        #expect(packets.count == 100 && ReuseTests.firstDifference(packets, localPackets) == nil)
    }

    /// The S3 server killed (SIGKILL, as a crash) and started again on its data while a job
    /// renders: the coordinator's requests to it are retried until it is back, `submit --wait`
    /// exits 0 and the video packets are a fault-free render's, each chunk accepted once. The
    /// server is one of this test's own, so the crash touches no other test.
    @Test func submitWaitSurvivesTheS3ServerCrashRestarted() throws {
        let server = try PrivateS3.start()
        defer { server.stop() }
        let farm = try FarmTests.LocalFarm(agents: 2, leaseSeconds: 10,
                                           storage: try Self.bucketStorage("crash", endpoint: server.endpoint, credentials: server.credentials))
        let composition = try FarmTests.makeComposition(in: farm.dir, size: "320x240", seconds: RestartFaultTests.seconds)
        let run = try RestartFaultTests.submitAndInjectMidJob(farm, composition: composition) { try server.crashRestart() }
        try RestartFaultTests.checkOutcome(farm, run, composition: composition)
        #expect(farm.coordinator.hasExited == false, "the coordinator rides out its object store's restart")
    }

    /// A PNG sequence with S3 storage: a render agent finalises it (the frames' archive of
    /// proto/PROTOCOL.md §4.7 made on the agent) and the frames are the in-process render's.
    @Test func aPNGSequenceOnS3IsFinalisedByAnAgent() throws {
        let farm = try FarmTests.LocalFarm(agents: 2, storage: try Self.bucketStorage("frames"))
        let job = try FarmTests.checkPNGSequenceJob(farm)
        let finaliser = try farm.query("SELECT a.name FROM tasks t JOIN agents a ON a.id = t.last_agent WHERE t.job_id = \(job) AND t.kind = 'finalise'")
        #expect(finaliser.map { $0.joined() } == ["agent-1"] || finaliser.map { $0.joined() } == ["agent-2"], "\(finaliser)")
    }

    /// A `.cube` LUT planned from the bucket (told from media by its content) and rendered.
    @Test func aLUTFilterRendersWithS3Storage() throws {
        try FarmTests.checkLUTJob(try FarmTests.LocalFarm(agents: 2, storage: try Self.bucketStorage("lut")))
    }

    /// Two coordinators on one database and one bucket, agents on both: the first is killed
    /// with SIGKILL mid-job and the job still ends as a fault-free render would.
    @Test func submitWaitSurvivesOneOfTwoCoordinatorsKilled() throws {
        try SeveralCoordinatorsFaultTests.killOneOfTwoCoordinatorsMidJob(
            try FarmTests.LocalFarm(agents: 2, leaseSeconds: 5, storage: try Self.bucketStorage("twocoordinators"), coordinators: 2))
    }
}

/// An S3 server of one test's own (ops/s3.sh), so the test can crash it.
struct PrivateS3 {
    let directory: URL
    let endpoint: String
    var credentials: String { directory.appendingPathComponent("s3/credentials").path }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("ops/s3.sh").path

    /// ops/s3.sh (a bash script) with `arguments`, its output in files (`PrivateCluster.shell`).
    static func s3sh(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try PrivateCluster.shell(["-c", #"exec bash "$0" "$@""#, script] + arguments)
    }

    static func start() throws -> PrivateS3 {
        let directory = try Media.tempDirectory()
        // ops/s3.sh takes PORT … PORT+7; a lost race for them is retried on others.
        var lastError = ""
        for _ in 0..<3 {
            let result = try s3sh(["start", directory.appendingPathComponent("s3").path, "\(freeLoopbackPort())"])
            if result.status == 0 {
                return PrivateS3(directory: directory, endpoint: result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            lastError = result.stderr
            _ = try? s3sh(["stop", directory.appendingPathComponent("s3").path])
        }
        throw Media.Failure(description: "cannot start a private S3 server: \(lastError)")
    }

    func crashRestart() throws {
        let result = try Self.s3sh(["crash-restart", directory.appendingPathComponent("s3").path])
        guard result.status == 0 else { throw Media.Failure(description: "crash-restart failed: \(result.stderr)") }
    }

    func stop() {
        _ = try? Self.s3sh(["stop", directory.appendingPathComponent("s3").path])
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Whether the S3 farm tests can run, and why not.
enum FarmS3 {
    static var isConfigured: Bool { !(ProcessInfo.processInfo.environment["REEL_TEST_S3_ENDPOINT"] ?? "").isEmpty }
    static let skipReason: Comment = """
        REEL_TEST_S3_ENDPOINT is not set: start a server with `ops/s3.sh start DIR PORT` and export \
        REEL_TEST_S3_ENDPOINT (its output) and REEL_TEST_S3_CREDENTIALS=DIR/credentials (ops/test.sh does)
        """
}
