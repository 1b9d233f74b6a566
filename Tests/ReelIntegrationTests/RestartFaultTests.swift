import Foundation
import Testing
import ReelThreadTesting

/// Fault injection on a real farm (FarmTests' `LocalFarm`): the coordinator killed and restarted,
/// PostgreSQL crash-restarted, while `reel submit --wait -o` follows a job. The farm must finish
/// the job, the client must ride it out and download the output, and the output's video packets
/// must equal a fault-free render's, with no chunk accepted twice.
/// Needs `REEL_TEST_DATABASE_URL` (set by ops/test.sh); the PostgreSQL test starts its own cluster.
@Suite(.database, .blocking, .serialized) struct RestartFaultTests {
    /// 16 s at 320x240 in 2 s chunks: 8 video chunks, so one is done while others are still to come.
    static let seconds = 16

    /// The fault-free reference's video packets (MD5 of the stream copy), rendered once per run.
    /// The composition is generated deterministically, so every test's copy renders the same.
    nonisolated(unsafe) static var referenceMD5: String?

    static func videoMD5(_ path: String) throws -> String {
        String(decoding: try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v", "-c", "copy", "-f", "md5", "-"]).stdout,
               as: UTF8.self)
    }

    static func reference(for composition: String, in dir: URL) throws -> String {
        if let md5 = referenceMD5 { return md5 }
        let path = dir.appendingPathComponent("reference.mp4").path
        try Media.run(Media.reel, ["render", composition, "-o", path, "--in-process", "--agents", "2", "--chunk-seconds", "2", "--quiet"])
        let md5 = try videoMD5(path)
        referenceMD5 = md5
        return md5
    }

    /// A job followed by `submit --wait -o` that a fault hit in flight.
    struct InFlight {
        let submit: BackgroundProcess
        let job: String
        let output: String
        /// Results the agents had had accepted before this job was submitted.
        let acceptedBefore: Int
    }

    /// Results the farm's agents have had accepted, from their logs.
    static func acceptedResults(_ farm: FarmTests.LocalFarm) -> Int {
        farm.agents.values.map { $0.output.components(separatedBy: "result accepted").count - 1 }.reduce(0, +)
    }

    /// Starts `submit --wait -o` and injects `fault` once the job has a finished chunk and at
    /// least 4 of its 9 tasks still to render.
    ///
    /// A render of this size takes about two seconds, and a loaded machine can stall this test
    /// for as long. So each look at the job is taken with the agents stopped (`SIGSTOP`): what
    /// the test sees is still true when it lets them go, just before the fault. If the job
    /// nevertheless got past that window between two looks (a stall longer than the render), it
    /// is submitted again (`--no-cache`), up to 3 times.
    static func submitAndInjectMidJob(_ farm: FarmTests.LocalFarm, composition: String, fault: () throws -> Void) throws -> InFlight {
        func status(_ job: String) throws -> [String: Any]? {
            let json = try JSONSerialization.jsonObject(with: Data(try farm.reel(["status", job, "--json"]).stdout.utf8)) as? [String: Any]
            return ((json?["status"] as? [String: Any])?["jobs"] as? [[String: Any]])?.first
        }
        var missed: [String] = []
        for attempt in 1...3 {
            let acceptedBefore = acceptedResults(farm)
            let output = farm.dir.appendingPathComponent("out-\(attempt).mp4").path
            let submit = try farm.reelInBackground(["submit", composition, "--wait", "-o", output, "--chunk-seconds", "2", "--no-cache"],
                                                   name: "submit-\(attempt)")
            let stdout = farm.dir.appendingPathComponent("submit-\(attempt).out").path
            let deadline = Date().addingTimeInterval(180)
            var job: String?
            polling: while Date() < deadline {
                if job == nil {
                    job = (try? String(contentsOfFile: stdout, encoding: .utf8))?.split(separator: "\n").first.map(String.init)
                }
                if let job {
                    let now = try farm.withAgentsStopped { try status(job) }
                    let tasks = now?["tasks"] as? [String: Any]
                    let done = tasks?["done"] as? Int ?? 0, left = (tasks?["total"] as? Int ?? 0) - done
                    if now?["state"] as? String == "running", done >= 1, left >= 4 {
                        try fault()
                        return InFlight(submit: submit, job: job, output: output, acceptedBefore: acceptedBefore)
                    }
                    if done >= 1 && left < 4 {
                        missed.append("attempt \(attempt): \(now ?? [:])")
                        break polling
                    }
                }
                if submit.hasExited {
                    throw Media.Failure(description: "submit exited (\(submit.exitStatus ?? -1)) before the fault: \(submit.output)")
                }
                usleep(100_000)
            }
            guard Date() < deadline else {
                throw Media.Failure(description: "no chunk of the job finished within 180 s: \(farm.coordinator.output)")
            }
            #expect(submit.waitForExit(timeout: 300), "submit --wait of a job the fault missed did not finish: \(submit.output)")
        }
        throw Media.Failure(description: "the job got past the fault's window between two looks 3 times: \(missed)")
    }

    /// `submit --wait` exited 0; the output's video packets equal the
    /// reference's; every task of the job was accepted exactly once.
    static func checkOutcome(_ farm: FarmTests.LocalFarm, _ run: InFlight, composition: String) throws {
        let (submit, job, output) = (run.submit, run.job, run.output)
        #expect(submit.waitForExit(timeout: 300), "submit --wait did not finish: \(submit.output)")
        #expect(submit.exitStatus == 0, "submit --wait failed: \(submit.output)\ncoordinator: \(farm.coordinator.output.suffix(4000))")
        // (Whether it says "reconnecting" depends on timing: a connection found closed between two
        // polls is replaced silently when the coordinator is already back.)
        #expect(!submit.output.contains("I/O on closed channel"), "\(submit.output)")
        guard submit.exitStatus == 0 else { return }

        #expect(try videoMD5(output) == reference(for: composition, in: farm.dir), "the fault must change no video packet")
        #expect(try Media.decodeErrors(output).isEmpty)
        let files = try FileManager.default.contentsOfDirectory(atPath: farm.dir.path)
        #expect(files.allSatisfy { !$0.contains("reel-partial") }, "\(files)")

        // Accepted results, from the coordinator's events: exactly one per task.
        let rows = try farm.query("""
            SELECT t.id, t.kind, t.state, count(e.id) FROM tasks t
            LEFT JOIN events e ON e.task_id = t.id AND e.kind = 'completed'
            WHERE t.job_id = \(Int(job) ?? -1) GROUP BY t.id, t.kind, t.state ORDER BY t.id
            """)
        #expect(rows.count == seconds / 2 + 2, "the video chunks, audio, finalise: \(rows)")
        for row in rows {
            #expect(row.count == 4 && row[2] == "done" && row[3] == "1", "task \(row.first ?? "?") accepted \(row.last ?? "?") times: \(rows)")
        }
        // And from the agents' side: as many accepted RESULTs as render tasks.
        let accepted = acceptedResults(farm) - run.acceptedBefore
        #expect(accepted == seconds / 2 + 1, "agents saw \(accepted) accepted results")
    }

    @Test func submitWaitSurvivesTheCoordinatorKilledAndRestarted() throws {
        let farm = try FarmTests.LocalFarm(agents: 2, leaseSeconds: 5)
        let composition = try FarmTests.makeComposition(in: farm.dir, size: "320x240", seconds: Self.seconds)
        let run = try Self.submitAndInjectMidJob(farm, composition: composition) { try farm.crashAndRestartCoordinator() }
        try Self.checkOutcome(farm, run, composition: composition)
    }

    @Test func submitWaitAndAgentsSurviveAPostgreSQLCrashRestart() throws {
        let cluster = try PrivateCluster.start()
        defer { cluster.stop() }
        let farm = try FarmTests.LocalFarm(agents: 2, leaseSeconds: 10, server: cluster.url)
        let composition = try FarmTests.makeComposition(in: farm.dir, size: "320x240", seconds: Self.seconds)
        let run = try Self.submitAndInjectMidJob(farm, composition: composition) { try cluster.crashRestart() }
        try Self.checkOutcome(farm, run, composition: composition)
        #expect(farm.coordinator.hasExited == false, "the coordinator rides out its database's restart")
    }
}

/// A PostgreSQL cluster of one test's own (ops/postgres.sh), so the test can crash it.
struct PrivateCluster {
    let directory: URL
    let url: String

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("ops/postgres.sh").path

    static func start() throws -> PrivateCluster {
        let directory = try Media.tempDirectory()
        let data = directory.appendingPathComponent("pg").path
        // The port is free a moment before the server binds it; a lost race is retried on another.
        var lastError = ""
        for _ in 0..<3 {
            let result = try shell([script, "start", data, "\(freeLoopbackPort())"])
            if result.status == 0 {
                let url = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                // ops/postgres.sh runs with synchronous_commit=off: fine for tests, but a crash then
                // loses commits already acknowledged (a result "accepted" that the database forgot,
                // so its chunk is rendered twice). A crash test needs what production has: commits
                // that survive. A role setting overrides the server's command line.
                try Media.run("psql", [url, "-qc", "ALTER ROLE postgres SET synchronous_commit = on"])
                return PrivateCluster(directory: directory, url: url)
            }
            lastError = result.stderr
        }
        throw Media.Failure(description: "cannot start a private PostgreSQL: \(lastError)")
    }

    /// `pg_ctl -m immediate restart`: every connection is cut as in a crash; returns once it accepts connections again.
    func crashRestart() throws {
        let result = try Self.shell([Self.script, "crash-restart", directory.appendingPathComponent("pg").path])
        guard result.status == 0 else { throw Media.Failure(description: "crash-restart failed: \(result.stderr)") }
    }

    func stop() {
        _ = try? Self.shell([Self.script, "stop", directory.appendingPathComponent("pg").path])
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs the script with its output in files, not pipes: the server it starts inherits
    /// them, and reading a pipe to its end would wait for the server to exit.
    static func shell(_ argv: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("reel-pg-\(UUID().uuidString)").path
        defer { unlink(base + ".out"); unlink(base + ".err") }
        let process = try BackgroundProcess(["/bin/sh"] + argv, log: base + ".err", stdout: base + ".out")
        guard process.waitForExit(timeout: 120) else {
            process.stop(SIGKILL)
            throw Media.Failure(description: "\(argv.joined(separator: " ")) did not finish in 120 s")
        }
        return (process.exitStatus ?? -1, (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? "",
                (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? "")
    }
}
