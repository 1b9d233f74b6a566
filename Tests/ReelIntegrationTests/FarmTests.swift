import Foundation
import Testing
import ReelThreadTesting

/// The farm as operators run it: a PostgreSQL, a `reel coordinator` process and `reel agent`
/// processes (each with its own cache), driven by the `reel` client commands (docs/farm.md).
/// Needs `REEL_TEST_DATABASE_URL` (set by ops/test.sh).
@Suite(.database, .blocking, .serialized) struct FarmTests {
    /// A coordinator and agents on loopback, with a fresh database and storage.
    final class LocalFarm {
        let dir: URL
        let port: Int
        let secret: String
        /// The farm's own database.
        let databaseURL: String
        private(set) var coordinator: BackgroundProcess
        private let coordinatorArguments: [String]
        private let coordinatorEnvironment: [String: String]
        var agents: [String: BackgroundProcess] = [:]
        /// Further coordinators on the same database and storage (`coordinators:` > 1), and
        /// every coordinator's port, `port` first.
        private(set) var otherCoordinators: [BackgroundProcess] = []
        let ports: [Int]
        /// `--coordinator` for clients: every coordinator, `port` first.
        var coordinatorList: String { ports.map { "127.0.0.1:\($0)" }.joined(separator: ",") }

        /// - Parameters:
        ///   - server: the PostgreSQL to create the farm's database in (default:
        ///     `REEL_TEST_DATABASE_URL`); a test that restarts PostgreSQL passes its own cluster.
        ///   - storage: the coordinator's `--storage` and what goes with it (default: a folder of
        ///     the farm's), and the environment it needs (an S3 bucket's credentials).
        ///   - coordinators: how many coordinators share the database and storage; agent i starts
        ///     on coordinator i mod n (its list rotated), clients start on the first.
        init(agents count: Int, leaseSeconds: Int = 3, server: String? = nil,
             storage: (arguments: [String], environment: [String: String])? = nil, coordinators: Int = 1) throws {
            let url = try FreshDatabase.url(server: server, prefix: "farm")
            dir = try Media.tempDirectory()
            databaseURL = url
            secret = dir.appendingPathComponent("secret").path
            try Data((0..<32).map { _ in UInt8.random(in: 97...122) }).write(to: URL(fileURLWithPath: secret))
            chmod(secret, 0o600) // reel refuses a secret file other users can read
            port = freeLoopbackPort()
            let folder = dir.appendingPathComponent("storage").path
            let storageArguments = storage.map { $0.arguments + ["--local-storage", folder] } ?? ["--storage", folder]
            coordinatorArguments = [Media.reel, "coordinator", "--listen", "127.0.0.1:\(port)", "--database", url,
                                    "--secret-file", secret, "--lease-seconds", "\(leaseSeconds)"] + storageArguments
            coordinatorEnvironment = storage?.environment ?? [:]
            coordinator = try BackgroundProcess(coordinatorArguments, log: dir.appendingPathComponent("coordinator.log").path,
                                                environment: coordinatorEnvironment)
            var ports = [port], others: [BackgroundProcess] = []
            let firstListen = "127.0.0.1:\(port)", arguments = coordinatorArguments, environment = coordinatorEnvironment
            for n in 1..<max(1, coordinators) {
                let other = freeLoopbackPort()
                ports.append(other)
                others.append(try BackgroundProcess(
                    arguments.map { $0 == firstListen ? "127.0.0.1:\(other)" : $0 },
                    log: dir.appendingPathComponent("coordinator-\(n + 1).log").path, environment: environment))
            }
            self.ports = ports
            otherCoordinators = others
            if ports.count > 1 { try waitForCoordinators() }
            for i in 1...count { try startAgent("agent-\(i)") }
            try waitForAgents(count)
        }

        /// Waits until every coordinator accepts connections, so that agent i really starts on
        /// coordinator i mod n: an agent whose first coordinator is not listening yet moves on to
        /// the next one in its list.
        func waitForCoordinators(timeout: TimeInterval = 120) throws {
            let deadline = Date().addingTimeInterval(timeout)
            for port in ports {
                while !Self.accepts(port: port) {
                    guard Date() < deadline else { throw Media.Failure(description: "no coordinator listens on port \(port)") }
                    usleep(200_000)
                }
            }
        }

        /// Whether a TCP connection to 127.0.0.1:`port` is accepted (closed at once).
        static func accepts(port: Int) -> Bool {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
        }

        /// Kills the coordinator with SIGKILL (no drain, no goodbye) and starts it again on the
        /// same port, database and storage, as a supervisor would after a crash.
        func crashAndRestartCoordinator() throws {
            coordinator.stop(SIGKILL)
            coordinator = try BackgroundProcess(coordinatorArguments, log: dir.appendingPathComponent("coordinator.log").path,
                                                environment: coordinatorEnvironment)
        }

        /// Kills the first coordinator with SIGKILL and leaves it dead: the others carry on.
        func killCoordinator() {
            coordinator.stop(SIGKILL)
        }

        /// Runs a client command in the background (e.g. `submit --wait`), its stdout in `name.out`.
        func reelInBackground(_ arguments: [String], name: String) throws -> BackgroundProcess {
            try BackgroundProcess([Media.reel] + arguments + ["--coordinator", coordinatorList, "--secret-file", secret],
                                  log: dir.appendingPathComponent("\(name).log").path, stdout: dir.appendingPathComponent("\(name).out").path)
        }

        /// One `psql -tA` query on the farm's database: rows of `|`-separated fields.
        func query(_ sql: String) throws -> [[String]] {
            let out = String(decoding: try Media.run("psql", [databaseURL, "-tAc", sql]).stdout, as: UTF8.self)
            return out.split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
        }

        func startAgent(_ name: String) throws {
            let first = agents.count % ports.count
            let list = (ports[first...] + ports[..<first]).map { "127.0.0.1:\($0)" }.joined(separator: ",")
            agents[name] = try BackgroundProcess([Media.reel, "agent", "--coordinator", list, "--secret-file", secret,
                                                  "--name", name, "--cache", dir.appendingPathComponent("cache-\(name)").path,
                                                  "--claim-wait", "1"],
                                                 log: dir.appendingPathComponent("\(name).log").path)
        }

        /// Runs a client command against this farm.
        @discardableResult
        func reel(_ arguments: [String], allowFailure: Bool = false) throws -> (status: Int32, stdout: String, stderr: String) {
            let r = try Media.run(Media.reel, arguments + ["--coordinator", coordinatorList, "--secret-file", secret], allowFailure: allowFailure)
            return (r.status, String(decoding: r.stdout, as: UTF8.self), r.stderr)
        }

        func agentsReport() throws -> [[String: Any]] {
            let json = try JSONSerialization.jsonObject(with: Data(try reel(["agents", "--json"]).stdout.utf8)) as? [String: Any]
            return json?["agents"] as? [[String: Any]] ?? []
        }

        func waitForAgents(_ count: Int, timeout: TimeInterval = 60) throws {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if coordinator.hasExited { throw Media.Failure(description: "the coordinator exited: \(coordinator.output)") }
                if let online = try? agentsReport().filter({ $0["state"] as? String != "offline" }).count, online >= count { return }
                usleep(200_000)
            }
            throw Media.Failure(description: "agents did not connect: \(coordinator.output)")
        }

        /// Polls `reel status JOB --json` until the job is finished; returns its status object.
        func waitForJob(_ job: String, timeout: TimeInterval = 300, whileRunning: (([String: Any]) throws -> Void)? = nil) throws -> [String: Any] {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                let json = try JSONSerialization.jsonObject(with: Data(try reel(["status", job, "--json"]).stdout.utf8)) as? [String: Any]
                let jobs = (json?["status"] as? [String: Any])?["jobs"] as? [[String: Any]] ?? []
                if let status = jobs.first, let state = status["state"] as? String {
                    if ["done", "failed", "cancelled"].contains(state) { return status }
                    try whileRunning?(status)
                }
                usleep(250_000)
            }
            throw Media.Failure(description: "job \(job) did not finish in \(timeout) s")
        }

        /// Runs `body` with every agent stopped (`SIGSTOP`) and lets them go after: what the test
        /// sees of the farm in `body` stays true until it returns, however slow the machine.
        func withAgentsStopped<T>(_ body: () throws -> T) rethrows -> T {
            let stopped = agents.values.filter { !$0.hasExited }
            for agent in stopped { kill(agent.pid, SIGSTOP) }
            defer { for agent in stopped where !agent.hasExited { kill(agent.pid, SIGCONT) } }
            return try body()
        }

        deinit {
            for agent in agents.values { agent.stop(SIGKILL, timeout: 2) }
            coordinator.stop(SIGTERM, timeout: 10)
            for other in otherCoordinators { other.stop(SIGTERM, timeout: 10) }
            try? FileManager.default.removeItem(at: dir)
        }
    }

    /// A composition of generated media in its own folder (so the test can take it away).
    static func makeComposition(in dir: URL, size: String, seconds: Int, preset: String = "medium") throws -> String {
        let media = dir.appendingPathComponent("media")
        try FileManager.default.createDirectory(at: media, withIntermediateDirectories: true)
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=\(size):r=25:d=\(seconds)", "-f", "lavfi", "-i", "sine=frequency=500:sample_rate=44100:duration=\(seconds)",
                          "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", media.appendingPathComponent("clip.mp4").path])
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=orange:s=64x64,format=rgba", "-frames:v", "1", media.appendingPathComponent("logo.png").path])
        let path = media.appendingPathComponent("comp.json").path
        try """
            {"formatVersion": 1,
             "assets": {"clip": {"url": "clip.mp4"}, "logo": {"url": "logo.png"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]},
                        {"id": 2, "mediaType": "audio", "segments": [{"asset": "clip", "at": 0}]}],
             "videoComposition": {"overlays": [{"image": "logo", "frame": {"x": 10, "y": 10, "width": 48, "height": 48},
                "animations": [{"property": "rotation", "from": 0, "to": 6.283185, "duration": 2, "repeat": true}]}]},
             "export": {"preset": "\(preset)", "video": {"x264Preset": "veryfast"}}}
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A `.cube` LUT through the farm: the coordinator stores assets under their content hash,
    /// with no name, so it must tell the LUT from media by its content when it plans (it did by
    /// name only, and refused the job). The farm's video packets equal an in-process render's,
    /// and the grade (an inverting 2³ LUT) shows: each frame's mean luma and the source's add
    /// up to 16 + 235. S3FarmTests runs it with the storage in S3.
    static func checkLUTJob(_ farm: LocalFarm) throws {
        let dir = farm.dir.appendingPathComponent("lut")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=2", "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p",
                          dir.appendingPathComponent("clip.mp4").path])
        var cube = ["TITLE \"invert\"", "LUT_3D_SIZE 2"]
        for b in 0...1 { for g in 0...1 { for r in 0...1 { cube.append("\(1 - r).0 \(1 - g).0 \(1 - b).0") } } }
        try cube.joined(separator: "\n").write(to: dir.appendingPathComponent("grade.cube"), atomically: true, encoding: .utf8)
        let composition = dir.appendingPathComponent("comp.json").path
        try """
            {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}, "grade": {"url": "grade.cube"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]}],
             "videoComposition": {"filters": [{"type": "lut", "asset": "grade"}]},
             "export": {"preset": "highest", "video": {"x264Preset": "veryfast"}}}
            """.write(toFile: composition, atomically: true, encoding: .utf8)
        let output = dir.appendingPathComponent("farm.mp4").path, reference = dir.appendingPathComponent("local.mp4").path
        let submitted = try farm.reel(["submit", composition, "--chunk-seconds", "1", "--wait", "-o", output, "--quiet"], allowFailure: true)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let local = try Media.run(Media.reel, ["render", composition, "--in-process", "--chunk-seconds", "1", "-o", reference, "--quiet"],
                                  allowFailure: true)
        #expect(local.status == 0, "\(local.stderr)")
        let packets = try ReuseTests.videoPackets(output), referencePackets = try ReuseTests.videoPackets(reference)
        #expect(packets.count == 50 && ReuseTests.firstDifference(packets, referencePackets) == nil)
        func meanLuma(_ path: String, filter: String = "format=gray") throws -> Double {
            let y = try Media.run("ffmpeg", ["-v", "error", "-i", path, "-frames:v", "1", "-vf", filter, "-f", "rawvideo", "-"]).stdout
            return Double(y.reduce(0) { $0 + Int($1) }) / Double(max(1, y.count))
        }
        // The 160×120 source is read as BT.601 and graded in the output's BT.709: its luma as BT.709 codes it.
        let sum = try meanLuma(output) + meanLuma(dir.appendingPathComponent("clip.mp4").path, filter: Media.bt601ToBT709 + ",format=gray")
        #expect(abs(sum - 251) < 4, "the inverted picture's mean luma and the source's add up to \(sum), not 251")
    }

    @Test func aLUTFilterRendersOnTheFarmAsInProcess() throws {
        try Self.checkLUTJob(try LocalFarm(agents: 2))
    }

    /// The reported reproduction, through the farm: a slideshow whose stills are longer than a
    /// chunk gives identical chunks, stored once by content hash; the job must still finish
    /// with every frame (it failed with "chunk [300, 600) holds 0 frames").
    @Test func aSlideshowOfStillsLongerThanAChunkFinishes() throws {
        let farm = try LocalFarm(agents: 2)
        var stills: [String] = []
        for (i, source) in ["testsrc2=s=320x180", "smptebars=s=320x180"].enumerated() {
            let path = farm.dir.appendingPathComponent("still\(i).png").path
            try Media.ffmpeg(["-f", "lavfi", "-i", source, "-frames:v", "1", path])
            stills.append(path)
        }
        let music = farm.dir.appendingPathComponent("music.wav").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=20", music])
        let printed = try Media.run(Media.reel, ["slideshow"] + stills + ["--seconds", "6", "--audio", music, "--print-composition"])
        let composition = farm.dir.appendingPathComponent("s.json").path
        try printed.stdout.write(to: URL(fileURLWithPath: composition))
        let output = farm.dir.appendingPathComponent("s.mp4").path
        let r = try farm.reel(["submit", composition, "--chunk-seconds", "2", "--wait", "-o", output, "--quiet"], allowFailure: true)
        #expect(r.status == 0, "\(r.stderr)")
        let frames = try Media.framePTS(output)
        #expect(frames.count == 360, "12 s at 30 fps")
        #expect(try Media.decodeErrors(output).isEmpty)
    }

    /// `submit -o OUT.mov` makes a QuickTime file when the composition names no
    /// container, and `fetch -o` refuses a name whose extension says otherwise.
    @Test func submitAndFetchFollowTheOutputName() throws {
        let farm = try LocalFarm(agents: 1)
        let composition = try Self.makeComposition(in: farm.dir, size: "160x120", seconds: 2)
        let mov = farm.dir.appendingPathComponent("out.mov").path
        let submitted = try farm.reel(["submit", composition, "--wait", "-o", mov, "--quiet"])
        let job = submitted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let brand = ((try Media.probe(mov)["format"] as? [String: Any])?["tags"] as? [String: Any])?["major_brand"] as? String
        #expect(brand == "qt  ", "\(String(describing: brand))")
        let wrong = try farm.reel(["fetch", job, "-o", farm.dir.appendingPathComponent("again.mp4").path], allowFailure: true)
        #expect(wrong.status == 1 && wrong.stderr.contains("job \(job)'s output is a QuickTime .mov file"), "\(wrong.stderr)")
        #expect(!FileManager.default.fileExists(atPath: farm.dir.appendingPathComponent("again.mp4").path))
        let again = farm.dir.appendingPathComponent("again.mov").path
        try farm.reel(["fetch", job, "-o", again, "--quiet"])
        #expect(FileManager.default.contentsEqual(atPath: mov, andPath: again))
        let mkv = try farm.reel(["submit", composition, "--wait", "-o", farm.dir.appendingPathComponent("x.mkv").path], allowFailure: true)
        #expect(mkv.status == 1 && mkv.stderr.contains("ends in .mkv"), "\(mkv.stderr)")
    }

    /// Editors' timelines through the farm: `reel submit` takes an OpenTimelineIO cut and an EDL as they
    /// are, and the farm's chunked output has exactly the packets of `reel render --in-process`
    /// of the same timeline (whose frames TimelineRenderTests checks against the sources).
    @Test func editorsTimelinesAreSubmittedAsTheyAre() throws {
        let media = try TimelineRenderTests.workspace()
        let farm = try LocalFarm(agents: 2)
        for (timeline, extra) in [("cut.otio", [String]()), ("single.edl", ["--fps", "24"])] {
            let input = media.appendingPathComponent(timeline).path
            let farmOut = farm.dir.appendingPathComponent("farm-\(timeline).mp4").path
            let submitted = try farm.reel(["submit", input, "--chunk-seconds", "1", "--wait", "-o", farmOut, "--quiet"] + extra, allowFailure: true)
            #expect(submitted.status == 0, "\(submitted.stderr)")
            let local = media.appendingPathComponent("local-\(timeline).mp4").path
            try Media.run(Media.reel, ["render", input, "-o", local, "--in-process", "--chunk-seconds", "1", "--quiet"] + extra)
            #expect(try Media.framePTS(farmOut).count == 84, "\(timeline): 3.5 s at 24 fps")
            #expect(try TimelineRenderTests.packets(farmOut, stream: "v") == TimelineRenderTests.packets(local, stream: "v"), "\(timeline)")
            if timeline == "cut.otio" { // the EDL's cut is V1 alone
                #expect(try TimelineRenderTests.packets(farmOut, stream: "a") == TimelineRenderTests.packets(local, stream: "a"))
            }
        }
        // The timeline's problems are reported by submit before anything is uploaded.
        let refused = try farm.reel(["submit", media.appendingPathComponent("single.edl").path], allowFailure: true)
        #expect(refused.status == 1 && refused.stderr.contains("an EDL does not say its frame rate: give it with --fps"), "\(refused.stderr)")
    }

    @Test func threeAgentsRenderWithoutTheSubmittersMedia() throws {
        let farm = try LocalFarm(agents: 3)
        let composition = try Self.makeComposition(in: farm.dir, size: "320x240", seconds: 6)
        let submitted = try farm.reel(["submit", composition, "--chunk-seconds", "2", "--quiet"])
        let job = submitted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(Int(job) != nil, "submit prints the job id: \(submitted.stdout) \(submitted.stderr)")
        // The assets are uploaded; the agents must not need the submitter's files.
        try FileManager.default.removeItem(at: farm.dir.appendingPathComponent("media"))

        let status = try farm.waitForJob(job)
        #expect(status["state"] as? String == "done", "job ended as \(status); coordinator log: \(farm.coordinator.output)")
        let output = farm.dir.appendingPathComponent("out.mp4").path
        try farm.reel(["fetch", job, "-o", output])

        let frames = try Media.lumaFrames(output, width: 320, height: 240)
        #expect(frames.count == 150)
        let probe = try Media.probe(output)
        let audio = try #require(Media.stream(probe, type: "audio"))
        #expect(abs((Double(audio["duration"] as? String ?? "") ?? 0) - 6) <= 1024.0 / 48000 + 1e-6)
        #expect(Media.rms(try Media.audioSamples(output)[48000..<96000]) > 0.05, "the clip's tone is in the output")
        #expect(try Media.decodeErrors(output).isEmpty)
        // Work was spread: every agent rendered something (3 video chunks + audio, ≥ 3 agents).
        let busy = farm.agents.values.filter { $0.output.contains("result accepted") }.count
        #expect(busy >= 2, "at least two agents should have rendered tasks")
    }

    @Test func anAgentKilledMidChunkIsReplacedAndTheOutputIsUnchanged() throws {
        let farm = try LocalFarm(agents: 2, leaseSeconds: 3)
        let composition = try Self.makeComposition(in: farm.dir, size: "960x540", seconds: 8)
        let job = try farm.reel(["submit", composition, "--chunk-seconds", "2", "--quiet"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)

        var killed: String?
        let status = try farm.waitForJob(job) { _ in
            guard killed == nil else { return }
            // Kill the first agent seen holding a chunk, with SIGKILL: no goodbye, no release.
            // The agents are stopped while the test looks, so the one seen holding a chunk still
            // holds it when it is killed.
            try farm.withAgentsStopped {
                for agent in try farm.agentsReport() {
                    if let name = agent["name"] as? String, let task = agent["currentTask"] as? String, task.contains("frames"),
                       let process = farm.agents[name] {
                        process.stop(SIGKILL)
                        killed = name
                        return
                    }
                }
            }
        }
        #expect(killed != nil, "no agent was caught holding a chunk")
        #expect(status["state"] as? String == "done", "job ended as \(status)")
        #expect(farm.coordinator.output.contains("expired") || farm.coordinator.output.contains("expir"),
                "the killed agent's lease should have expired")

        let output = farm.dir.appendingPathComponent("out.mp4").path
        try farm.reel(["fetch", job, "-o", output])
        // A fault-free render of the same plan (2 agents' worth of chunks, same settings).
        let reference = farm.dir.appendingPathComponent("reference.mp4").path
        try Media.run(Media.reel, ["render", composition, "-o", reference, "--in-process", "--agents", "2", "--chunk-seconds", "2", "--quiet"])
        func videoMD5(_ p: String) throws -> String {
            String(decoding: try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", p, "-map", "0:v", "-c", "copy", "-f", "md5", "-"]).stdout, as: UTF8.self)
        }
        #expect(try videoMD5(output) == videoMD5(reference), "the re-rendered chunk must change nothing")
        #expect(try Media.decodeErrors(output).isEmpty)
    }

    /// The `status --json` document of one job.
    static func jobStatus(_ farm: LocalFarm, _ job: String) throws -> [String: Any] {
        let json = try JSONSerialization.jsonObject(with: Data(try farm.reel(["status", job, "--json"]).stdout.utf8)) as? [String: Any]
        let jobs = (json?["status"] as? [String: Any])?["jobs"] as? [[String: Any]] ?? []
        return try #require(jobs.first, "status \(job) --json lists the job: \(String(describing: json))")
    }

    /// `reel status --watch JOB` ends when the job does — 0 when it is done, 1 (with
    /// the reason) when it was cancelled — after drawing the job's final state.
    @Test func statusWatchOfOneJobEndsWhenTheJobEnds() throws {
        let farm = try LocalFarm(agents: 1)
        let short = try Self.makeComposition(in: farm.dir, size: "160x120", seconds: 2)
        let done = try farm.reel(["submit", short, "--quiet"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let watchDone = try farm.reelInBackground(["status", done, "--watch"], name: "watch-done")
        #expect(watchDone.waitForExit(timeout: 300), "status --watch \(done) kept running after the job ended:\n\(watchDone.output)")
        #expect(watchDone.exitStatus == 0, "\(String(describing: watchDone.exitStatus)): \(watchDone.output)")
        let drawn = try String(contentsOfFile: farm.dir.appendingPathComponent("watch-done.out").path, encoding: .utf8)
        let lastTable = drawn.components(separatedBy: "JOB ").last ?? ""
        #expect(lastTable.split(separator: "\n").contains { $0.contains("comp.json") && $0.contains(" done ") && $0.contains("100%") },
                "the final drawing shows the job done: \(lastTable)")

        // A long job, paused so it cannot finish on its own, then cancelled while watched.
        let longDir = farm.dir.appendingPathComponent("long")
        try FileManager.default.createDirectory(at: longDir, withIntermediateDirectories: true)
        let long = try Self.makeComposition(in: longDir, size: "320x240", seconds: 60)
        let cancelled = try farm.reel(["submit", long, "--chunk-seconds", "2", "--quiet"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try farm.reel(["pause", cancelled])
        let watchCancelled = try farm.reelInBackground(["status", cancelled, "--watch"], name: "watch-cancelled")
        let out = farm.dir.appendingPathComponent("watch-cancelled.out").path
        let deadline = Date().addingTimeInterval(60)
        while ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").isEmpty {
            #expect(!watchCancelled.hasExited, "status --watch of a paused job ended: \(watchCancelled.output)")
            if watchCancelled.hasExited || Date() > deadline { break }
            usleep(100_000)
        }
        #expect(!watchCancelled.hasExited, "a paused job is not an ended job: \(watchCancelled.output)")
        try farm.reel(["cancel", cancelled])
        #expect(watchCancelled.waitForExit(timeout: 60), "status --watch \(cancelled) kept running after the cancel")
        #expect(watchCancelled.exitStatus == 1, "\(String(describing: watchCancelled.exitStatus)): \(watchCancelled.output)")
        #expect(watchCancelled.output.contains("job \(cancelled) was cancelled"), "\(watchCancelled.output)")
        let last = (try String(contentsOfFile: out, encoding: .utf8)).components(separatedBy: "JOB ").last ?? ""
        #expect(last.contains("cancelled"), "the final drawing shows the job cancelled: \(last)")
    }

    /// After `retry` the progress starts from the chunks already done, not from 0 %:
    /// STATUS counts done chunks from the job's counters, which a retry keeps.
    @Test func progressAfterARetryStartsFromTheChunksAlreadyDone() throws {
        let farm = try LocalFarm(agents: 1)
        let composition = try Self.makeComposition(in: farm.dir, size: "320x240", seconds: 30)
        let job = try farm.reel(["submit", composition, "--chunk-seconds", "2", "--quiet"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        // Some chunks done, then the job ends unfinished (cancelled: retry takes failed and
        // cancelled jobs alike, through the same requeue). The agent is stopped while the test
        // looks, so a job seen unfinished is still unfinished when cancelled.
        let deadline = Date().addingTimeInterval(300)
        while true {
            let cancelled = try farm.withAgentsStopped { () throws -> Bool in
                let status = try Self.jobStatus(farm, job)
                #expect(status["state"] as? String != "done", "the job finished before it could be cancelled")
                guard ((status["tasks"] as? [String: Any])?["done"] as? Int ?? 0) >= 2 else { return false }
                try farm.reel(["cancel", job])
                return true
            }
            if cancelled { break }
            if Date() > deadline { Issue.record("no two chunks done within 300 s"); return }
            usleep(200_000)
        }
        let ended = try Self.jobStatus(farm, job)
        #expect(ended["state"] as? String == "cancelled")
        let doneFrames = ended["framesDone"] as? Int ?? 0
        let total = ended["frameCount"] as? Int ?? 0
        #expect(doneFrames > 0 && doneFrames < total, "\(ended)")

        try farm.reel(["retry", job])
        let retried = try Self.jobStatus(farm, job)
        #expect(retried["state"] as? String != "cancelled", "\(retried)")
        #expect((retried["framesDone"] as? Int ?? 0) >= doneFrames, "frames done before the retry still count: \(retried)")
        #expect((retried["progress"] as? Double ?? 0) > 0, "progress right after retry: \(retried)")
        // The table and the progress line read the same numbers.
        let table = try farm.reel(["status", job]).stdout
        #expect(table.range(of: #"\s[1-9]\d?%"#, options: .regularExpression) != nil, "the table shows the progress kept: \(table)")
        // Followed to the end, the retried job completes.
        let watch = try farm.reelInBackground(["status", job, "--watch"], name: "watch-retried")
        #expect(watch.waitForExit(timeout: 300) && watch.exitStatus == 0, "\(watch.output)")
        let first = (try String(contentsOfFile: farm.dir.appendingPathComponent("watch-retried.out").path, encoding: .utf8))
            .components(separatedBy: "JOB ").dropFirst().first ?? ""
        #expect(!first.contains(" 0% "), "the first drawing after the retry is not at 0 %: \(first)")
    }
}
