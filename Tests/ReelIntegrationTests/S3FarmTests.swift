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
        // The coordinator's log at the default level: no secret, no signature.
        let secret = try String(contentsOfFile: Self.environment["REEL_TEST_S3_CREDENTIALS"] ?? "", encoding: .utf8)
            .split(separator: "\n").first { $0.contains("aws_secret_access_key") }?.split(separator: "=").last?
            .trimmingCharacters(in: .whitespaces) ?? ""
        #expect(!secret.isEmpty)
        let log = s3.coordinator.output
        #expect(log.contains("coordinator listening") && log.contains("s3://"))
        for forbidden in [secret, "X-Amz-Signature", "Signature="] { #expect(!log.contains(forbidden)) }
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
