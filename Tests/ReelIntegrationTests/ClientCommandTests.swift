import Foundation
import NIOSSL
import ReelCore
import ReelProtocol
import Testing
import ReelThreadTesting

/// The operator commands (`submit`, `status`, `cancel`, `fetch`, …) as a user runs them: the
/// built `reel` binary against an in-process fake coordinator speaking the real protocol.
@Suite(.blocking, .serialized) struct ClientCommandTests {
    /// A composition with a video clip, a 60 s WAV (≈ 11 MB: more than one 8 MiB range) and a logo.
    static func makeComposition(in dir: URL) throws -> (path: String, clip: String, music: String, logo: String) {
        let clip = dir.appendingPathComponent("clip.mp4").path
        let music = dir.appendingPathComponent("music.wav").path
        let logo = dir.appendingPathComponent("logo.png").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=1", "-c:v", "libx264", "-pix_fmt", "yuv420p", clip])
        try Media.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=60", "-ac", "2", "-c:a", "pcm_s16le", music])
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=orange:s=32x32", "-frames:v", "1", logo])
        let path = dir.appendingPathComponent("comp.json").path
        try """
            {"formatVersion": 1,
             "assets": {"clip": {"url": "clip.mp4"}, "music": {"url": "music.wav"}, "logo": {"url": "logo.png"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]},
                        {"id": 2, "mediaType": "audio", "segments": [{"asset": "music", "sourceRange": {"start": 0, "duration": 1}, "at": 0}]}],
             "videoComposition": {"renderSize": {"width": 160, "height": 120}, "frameDuration": "1/25",
               "overlays": [{"image": "logo", "frame": {"x": 0, "y": 0, "width": 32, "height": 32}}]}}
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return (path, clip, music, logo)
    }

    static func sha(_ path: String) throws -> (hash: String, size: Int64) {
        let d = try FileDigest.sha256(path: path)
        return (d.hex, Int64(d.byteCount))
    }

    @Test func submitUploadsExactlyTheMissingAssetsInRangesAndPrintsTheJobID() async throws {
        let dir = try Media.tempDirectory()
        let comp = try Self.makeComposition(in: dir)
        let clip = try Self.sha(comp.clip), music = try Self.sha(comp.music), logo = try Self.sha(comp.logo)
        let range: Int64 = 8 << 20
        #expect(music.size > range, "the WAV must need more than one range")
        // The coordinator already holds the clip: only the music and the logo may be uploaded.
        let farm = try await FakeFarm.start(FakeCoordinator(held: [clip.hash]), in: dir)
        let r = await ReelRun.run(["submit", comp.path, "--chunk-seconds", "2", "--encoder-threads", "2"] + farm.connectionArguments)
        await farm.stop()

        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "42\n", "stdout must be the job id alone: \(r.stdout)")
        let submission = try #require(farm.handler.submits.first)
        #expect(farm.handler.submits.count == 1)
        let text = try String(contentsOfFile: comp.path, encoding: .utf8)
        #expect(submission.composition == text)
        #expect(submission.assets == ["clip": AssetManifestEntry(sha256: clip.hash, size: clip.size),
                                      "music": AssetManifestEntry(sha256: music.hash, size: music.size),
                                      "logo": AssetManifestEntry(sha256: logo.hash, size: logo.size)])
        #expect(submission.settings.chunkSeconds?.seconds == 2)
        #expect(submission.settings.encoderThreads == 2)
        #expect(submission.settings.name == "comp.json")

        let puts = farm.handler.puts
        #expect(!puts.contains { $0.sha256 == clip.hash }, "an asset the coordinator holds was uploaded")
        let musicPuts = puts.filter { $0.sha256 == music.hash }
        #expect(musicPuts.map(\.offset) == [0, range])
        #expect(musicPuts.map(\.count) == [Int(range), Int(music.size - range)])
        #expect(musicPuts.allSatisfy { $0.total == music.size && Int64($0.count) <= range })
        #expect(puts.filter { $0.sha256 == logo.hash }.map(\.count) == [Int(logo.size)])
        let musicBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: comp.music)))
        #expect(farm.handler.stored(music.hash) == musicBytes)
        #expect(farm.handler.stored(logo.hash) != nil)
        // One ASSETPARTS learns that this coordinator hands out no presigned URLs (no_direct).
        #expect(farm.handler.requests == ["SUBMIT", "ASSETPARTS", "PUT", "PUT", "PUT"])
    }

    @Test func anOverLargeCompositionIsRefusedInPlainWordsBeforeAnythingIsSent() async throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let comp = try Self.makeComposition(in: dir)
        // The same valid composition, padded with whitespace to 70 MB.
        let big = dir.appendingPathComponent("COMP.json").path
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: comp.path)))
        bytes += [UInt8](repeating: UInt8(ascii: " "), count: 70_000_000 - bytes.count)
        try Data(bytes).write(to: URL(fileURLWithPath: big))
        let farm = try await FakeFarm.start(FakeCoordinator(), in: dir)
        let r = await ReelRun.run(["submit", big] + farm.connectionArguments)
        await farm.stop()
        #expect(r.status == 1)
        #expect(r.stderr.contains("\(big) is 70.0 MB; a composition can be at most 64 MiB — move large data (e.g. embedded images) into asset files"),
                "\(r.stderr)")
        #expect(farm.handler.requests.isEmpty, "nothing may be sent")
    }

    @Test func submitListsEveryProblemAndNeverContactsTheCoordinator() async throws {
        let dir = try Media.tempDirectory()
        let bad = dir.appendingPathComponent("bad.json").path
        try """
            {"formatVersion": 1, "assets": {"a": {"url": "missing.mp4"}, "b": {"url": "also-missing.png"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": 0}]}]}
            """.write(toFile: bad, atomically: true, encoding: .utf8)
        let farm = try await FakeFarm.start(FakeCoordinator(), in: dir)
        let r = await ReelRun.run(["submit", bad] + farm.connectionArguments)
        await farm.stop()
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("assets.a.url") && r.stderr.contains("assets.b.url"), "\(r.stderr)")
        #expect(farm.handler.requests.isEmpty)
    }

    @Test func submitWaitFollowsTheJobAndDownloadsTheOutput() async throws {
        let dir = try Media.tempDirectory()
        let comp = try Self.makeComposition(in: dir)
        let output = (0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let farm = try await FakeFarm.start(FakeCoordinator(outcome: ("done", nil, output)), in: dir)
        let out = dir.appendingPathComponent("out.mp4").path
        let r = await ReelRun.run(["submit", comp.path, "--wait", "-o", out] + farm.connectionArguments)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "42\n")
        let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        #expect(written == output)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(files.allSatisfy { !$0.contains("reel-partial") })
        #expect(farm.handler.requests.filter { $0 == "OUTPUT" }.count == 2, "9 MiB come in two ranges")
        await farm.stop()

        let failing = try await FakeFarm.start(FakeCoordinator(outcome: ("failed", "chunk 3: decoder error", nil)), in: dir)
        let f = await ReelRun.run(["submit", comp.path, "--wait"] + failing.connectionArguments)
        await failing.stop()
        #expect(f.status == 1)
        #expect(f.stdout == "42\n")
        #expect(f.stderr.contains("job 42 failed: chunk 3: decoder error"), "\(f.stderr)")
    }

    /// A job whose stored source went missing before it was split into tasks
    /// goes back to waiting for its assets. `submit --wait` holds the files: it uploads them
    /// again and the job renders; when they keep going missing it exits 1 with the
    /// coordinator's error instead of waiting for ever.
    @Test func submitWaitUploadsAStoredSourceThatWentMissingAgainAndNeverWaitsForEver() async throws {
        let dir = try Media.tempDirectory()
        let comp = try Self.makeComposition(in: dir)
        let clip = try Self.sha(comp.clip)
        let clipBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: comp.clip)))
        let output = Array("the rendered output".utf8)
        let handler = FakeCoordinator(outcome: ("done", nil, output), assetLosses: 1)
        let farm = try await FakeFarm.start(handler, in: dir)
        let out = dir.appendingPathComponent("out.mp4").path
        let r = await ReelRun.run(["submit", comp.path, "--wait", "-o", out] + farm.connectionArguments, timeout: 60)
        await farm.stop()
        #expect(r.status == 0, "\(r.stderr)")
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: out))) == output)
        #expect(r.stderr.contains("job 42 waits for its assets again") && r.stderr.contains("missing"), "\(r.stderr)")
        let uploads = handler.puts.filter { $0.sha256 == clip.hash && $0.offset == 0 }
        #expect(uploads.count == 2, "uploaded, lost, uploaded again: \(handler.puts)")
        #expect(handler.stored(clip.hash) == clipBytes)

        // A coordinator that keeps losing it: the client gives up, with the coordinator's words.
        let losing = FakeCoordinator(outcome: ("done", nil, output), assetLosses: 1_000)
        let lost = try await FakeFarm.start(losing, in: dir)
        let started = ContinuousClock.now
        let f = await ReelRun.run(["submit", comp.path, "--wait"] + lost.connectionArguments, timeout: 60)
        await lost.stop()
        #expect(f.status == 1, "\(f.stderr)")
        #expect(f.stdout == "42\n")
        #expect(f.stderr.contains("job 42 waits for its assets: stored asset clip") && f.stderr.contains("submit the job again"), "\(f.stderr)")
        #expect(losing.puts.filter { $0.sha256 == clip.hash && $0.offset == 0 }.count == 1 + 3, "three uploads again, then it stops")
        #expect(ContinuousClock.now - started < .seconds(55), "it ended on its own")
    }

    @Test func submitWaitRidesOutCoordinatorTroubleAndResumesTheDownloadWhereItWas() async throws {
        let dir = try Media.tempDirectory()
        let comp = try Self.makeComposition(in: dir)
        let output = (0..<(9 << 20) + 5).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 11) }
        let handler = FakeCoordinator(outcome: ("done", nil, output))
        // Its database is down for one STATUS, then it goes away (shutting_down closes the
        // connection); later it drops the connection under the second OUTPUT range.
        handler.inject(ReelProtocolError(.internal, "internal error handling STATUS; see the coordinator's log"), at: "STATUS", occurrence: 1)
        handler.inject(ReelProtocolError(.shuttingDown, "the coordinator is shutting down"), at: "STATUS", occurrence: 2)
        handler.inject(ReelProtocolError(.shuttingDown, "the coordinator is shutting down"), at: "OUTPUT", occurrence: 2)
        let farm = try await FakeFarm.start(handler, in: dir)
        let out = dir.appendingPathComponent("out.mp4").path
        let r = await ReelRun.run(["submit", comp.path, "--wait", "-o", out] + farm.connectionArguments)
        await farm.stop()

        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "42\n")
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: out))) == output)
        let range: Int64 = 8 << 20
        #expect(handler.outputOffsets == [0, range, range], "the download resumes at the byte it reached, not at 0")
        let requests = handler.requests, connections = handler.requestConnections
        let outputConnections = zip(requests, connections).filter { $0.0 == "OUTPUT" }.map(\.1)
        #expect(outputConnections.count == 3 && outputConnections[0] != outputConnections[2], "a new connection after the drop")
        let statusConnections = zip(requests, connections).filter { $0.0 == "STATUS" }.map(\.1)
        #expect(statusConnections.count >= 3 && statusConnections[0] == statusConnections[1] && statusConnections[1] != statusConnections[2],
                "ERR internal keeps the connection, shutting_down does not: \(statusConnections)")
        // Said once per outage (STATUS ×2, then OUTPUT), not once per attempt.
        let notices = r.stderr.components(separatedBy: "\n").filter { $0.contains("reconnecting for up to 5 min") }
        #expect(notices.count == 2, "\(r.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(files.allSatisfy { !$0.contains("reel-partial") })
        #expect(handler.submits.count == 1, "SUBMIT is never repeated")
    }

    @Test func fetchRetriesTheCoordinatorsTroubleButNotTheUsersMistakes() async throws {
        let dir = try Media.tempDirectory()
        let bytes = (0..<(8 << 20) + 100).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let handler = FakeCoordinator(jobs: Self.sampleJobs, outputs: [6: bytes])
        handler.inject(ReelProtocolError(.internal, "internal error handling OUTPUT"), at: "OUTPUT", occurrence: 2)
        let farm = try await FakeFarm.start(handler, in: dir)
        let out = dir.appendingPathComponent("teaser.mp4").path
        let ok = await ReelRun.run(["fetch", "6", "-o", out] + farm.connectionArguments)
        let unknown = await ReelRun.run(["fetch", "99", "-o", dir.appendingPathComponent("nope.mp4").path] + farm.connectionArguments)
        await farm.stop()
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: out))) == bytes)
        #expect(ok.stderr.contains("reconnecting"), "\(ok.stderr)")
        #expect(handler.outputOffsets.prefix(3) == [0, 8 << 20, 8 << 20])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("job 99 not found") && !unknown.stderr.contains("reconnecting"), "\(unknown.stderr)")
        // fetch asks STATUS first (to check the name's extension against the output's
        // container): the unknown job's not_found comes from it, once, and no OUTPUT follows.
        #expect(handler.outputOffsets.count == 3, "no OUTPUT for an unknown job")
        #expect(handler.requests.filter { $0 == "STATUS" }.count == 2, "not_found is asked once, not retried: \(handler.requests)")
    }

    @Test func statusWatchKeepsWatchingThroughAnInternalError() async throws {
        let dir = try Media.tempDirectory()
        let handler = FakeCoordinator(jobs: Self.sampleJobs, agents: Self.sampleAgents)
        handler.inject(ReelProtocolError(.internal, "internal error handling STATUS"), at: "STATUS", occurrence: 2)
        let farm = try await FakeFarm.start(handler, in: dir)
        // Interrupted (as Ctrl-C would) once it has drawn the farm twice and said it reconnected.
        let r = await ReelRun.run(["status", "--watch"] + farm.connectionArguments) { out, err in
            out.components(separatedBy: "trailer.json").count - 1 >= 2 && err.contains("reconnecting")
        }
        await farm.stop()
        #expect(r.status == -2, "--watch survives ERR internal: \(r.stderr)")
        #expect(r.stdout.components(separatedBy: "trailer.json").count - 1 >= 2, "\(r.stdout)")
        #expect(r.stderr.components(separatedBy: "reconnecting").count - 1 == 1, "\(r.stderr)")
        #expect(handler.requests.filter { $0 == "STATUS" }.count >= 3)
    }

    static let sampleJobs = [
        JobStatus(id: 7, name: "trailer.json", state: "running", tasks: TaskCounts(done: 3, running: 2, queued: 5, failed: 1, total: 11),
                  frameCount: 1000, framesDone: 420, progress: 0.42, framesPerSecond: 61.5, etaSeconds: 94.3,
                  submittedAtMillis: 1_763_780_000_000, updatedAtMillis: 1_763_780_060_000, outputBytes: nil, error: nil),
        JobStatus(id: 6, name: "teaser.json", state: "done", tasks: TaskCounts(done: 4, total: 4),
                  frameCount: 250, framesDone: 250, progress: 1, framesPerSecond: 80, etaSeconds: 0,
                  submittedAtMillis: 1_763_779_000_000, updatedAtMillis: 1_763_779_100_000, outputBytes: 123_456, error: nil),
    ]
    static let sampleAgents = AgentsReport(agents: [
        AgentStatus(name: "render-01", host: "render-01.example.net", state: "busy", threads: 4, heartbeatAgeSeconds: 1.2,
                    currentTask: "job 7 task 19 frames [300, 600)", encoders: ["libx264", "libx265", "aac"]),
        AgentStatus(name: "render-02", host: "render-02.example.net", state: "offline", threads: 2, heartbeatAgeSeconds: 400, currentTask: nil),
    ])

    @Test func statusJSONPrintsBothReportsAndTheTableShowsJobsAndAgents() async throws {
        let dir = try Media.tempDirectory()
        let farm = try await FakeFarm.start(FakeCoordinator(jobs: Self.sampleJobs, agents: Self.sampleAgents), in: dir)
        let json = await ReelRun.run(["status", "--json"] + farm.connectionArguments)
        let table = await ReelRun.run(["status", "7"] + farm.connectionArguments)
        let agents = await ReelRun.run(["agents", "--json"] + farm.connectionArguments)
        await farm.stop()

        struct Both: Decodable { var status: StatusReport; var agents: AgentsReport }
        #expect(json.status == 0, "\(json.stderr)")
        let both = try JSONDecoder().decode(Both.self, from: Data(json.stdout.utf8))
        #expect(both.status.jobs == Self.sampleJobs)
        #expect(both.agents == Self.sampleAgents)

        #expect(table.status == 0, "\(table.stderr)")
        let rows = table.stdout.split(separator: "\n").map(String.init)
        #expect(rows.contains { $0.hasPrefix("  7") && $0.contains("trailer.json") && $0.contains("3/2/5/1 of 11") && $0.contains("42%") && $0.contains("1:34") })
        #expect(!rows.contains { $0.contains("teaser.json") }, "STATUS job=7 shows only job 7")
        #expect(rows.contains { $0.hasPrefix("render-01") && $0.contains("job 7 task 19") })

        #expect(agents.status == 0)
        let decodedAgents = try JSONDecoder().decode(AgentsReport.self, from: Data(agents.stdout.utf8))
        #expect(decodedAgents == Self.sampleAgents)
    }

    @Test func cancelOfAnUnknownJobExitsOneWithTheCoordinatorsMessage() async throws {
        let dir = try Media.tempDirectory()
        let farm = try await FakeFarm.start(FakeCoordinator(jobs: Self.sampleJobs), in: dir)
        let unknown = await ReelRun.run(["cancel", "99"] + farm.connectionArguments)
        let done = await ReelRun.run(["cancel", "6"] + farm.connectionArguments)
        let running = await ReelRun.run(["cancel", "7"] + farm.connectionArguments)
        let retry = await ReelRun.run(["retry", "6"] + farm.connectionArguments)
        await farm.stop()
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("job 99 not found"), "\(unknown.stderr)")
        #expect(done.status == 1)
        #expect(done.stderr.contains("job 6 is already done"), "\(done.stderr)")
        #expect(running.status == 0, "\(running.stderr)")
        #expect(retry.status == 0, "\(retry.stderr)")
        #expect(farm.handler.requests == ["CANCEL", "CANCEL", "CANCEL", "RETRY"])
    }

    @Test func pauseResumePriorityAndEventsSpeakTheProtocolAndSayWhatHappened() async throws {
        let dir = try Media.tempDirectory()
        let handler = FakeCoordinator(jobs: Self.sampleJobs)
        let farm = try await FakeFarm.start(handler, in: dir)
        let pause = await ReelRun.run(["pause", "7"] + farm.connectionArguments)
        let status = await ReelRun.run(["status", "7", "--json"] + farm.connectionArguments)
        let resume = await ReelRun.run(["resume", "7"] + farm.connectionArguments)
        let priority = await ReelRun.run(["priority", "7", "-5"] + farm.connectionArguments)
        let ended = await ReelRun.run(["pause", "6"] + farm.connectionArguments)
        let events = await ReelRun.run(["events", "7"] + farm.connectionArguments)
        let json = await ReelRun.run(["events", "7", "--json"] + farm.connectionArguments)
        let badPriority = await ReelRun.run(["priority", "7", "1001"] + farm.connectionArguments)
        await farm.stop()
        #expect(pause.status == 0 && pause.stdout == "job 7 paused\n", "\(pause.stderr)")
        #expect(status.stdout.contains(#""paused":true"#), "\(status.stdout)")
        #expect(resume.status == 0 && resume.stdout == "job 7 resumed\n")
        #expect(priority.status == 0 && priority.stdout == "job 7 priority -5\n", "\(priority.stderr)")
        #expect(ended.status == 1 && ended.stderr.contains("job 6 is already done"), "\(ended.stderr)")
        #expect(events.status == 0, "\(events.stderr)")
        let lines = events.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 1 + EventsReport.pageSize + 1, "both pages are listed")
        #expect(lines[0].hasPrefix("TIME ") && lines[1].contains("submitted"))
        #expect(lines[2].contains("claimed") && lines[2].contains("chunk 0 frames [0, 10)") && lines[2].contains("render-01"))
        let report = try JSONDecoder().decode(EventsReport.self, from: Data(json.stdout.utf8))
        #expect(report.job == 7 && report.events.count == EventsReport.pageSize + 1)
        #expect(badPriority.status == 1 && badPriority.stderr.contains("-1000…1000"), "\(badPriority.stderr)")
        // status --json also reads AGENTS; each events command reads two pages.
        #expect(handler.requests == ["PAUSE", "STATUS", "AGENTS", "RESUME", "PRIORITY", "PAUSE", "EVENTS", "EVENTS", "EVENTS", "EVENTS"])
    }

    @Test func tokenPrintsASignedJWTWithRoleAndExpiryAndRefusesWhatItCannotDo() async throws {
        let dir = try Media.tempDirectory()
        let secret = dir.appendingPathComponent("secret").path
        try "a farm secret of enough bytes\n".write(toFile: secret, atomically: true, encoding: .utf8)
        chmod(secret, 0o600)
        let before = Date().timeIntervalSince1970
        let operatorToken = await ReelRun.run(["token", "--secret-file", secret, "--subject", "alice"])
        let readOnly = await ReelRun.run(["token", "--read-only", "--expires", "30m"], environment: ["REEL_SECRET_FILE": secret])
        let tooLong = await ReelRun.run(["token", "--secret-file", secret, "--expires", "400d"])
        let noSecret = await ReelRun.run(["token"], environment: ["REEL_SECRET_FILE": ""])
        chmod(secret, 0o644)
        let exposed = await ReelRun.run(["token", "--secret-file", secret])

        func claims(_ token: String) throws -> [String: Any] {
            let parts = token.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".")
            #expect(parts.count == 3, "not a JWT: \(token)")
            var base64 = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.count % 4 != 0 { base64 += "=" }
            let data = try #require(Data(base64Encoded: base64))
            return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        }
        #expect(operatorToken.status == 0, "\(operatorToken.stderr)")
        let op = try claims(operatorToken.stdout)
        #expect(op["role"] as? String == "operator" && op["sub"] as? String == "alice")
        #expect(abs((op["exp"] as? Double ?? 0) - before - 12 * 3600) < 60, "default lifetime 12 h: \(op)")
        #expect(!operatorToken.stdout.contains("farm secret"))
        #expect(readOnly.status == 0, "\(readOnly.stderr)")
        let ro = try claims(readOnly.stdout)
        #expect(ro["role"] as? String == "read-only")
        #expect(abs((ro["exp"] as? Double ?? 0) - before - 1800) < 60)
        #expect(tooLong.status == 1 && tooLong.stderr.contains("366d"), "\(tooLong.stderr)")
        #expect(noSecret.status == 1 && noSecret.stderr.contains("--secret-file"), "\(noSecret.stderr)")
        #expect(exposed.status == 1 && exposed.stderr.contains("chmod 600"), "\(exposed.stderr)")
    }

    @Test func submitSendsThePriority() async throws {
        let dir = try Media.tempDirectory()
        let comp = try Self.makeComposition(in: dir)
        let farm = try await FakeFarm.start(FakeCoordinator(), in: dir)
        let r = await ReelRun.run(["submit", comp.path, "--priority", "12"] + farm.connectionArguments)
        let bad = await ReelRun.run(["submit", comp.path, "--priority", "5000"] + farm.connectionArguments)
        await farm.stop()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(farm.handler.submits.first?.settings.priority == 12)
        #expect(bad.status == 1 && bad.stderr.contains("--priority"), "\(bad.stderr)")
        #expect(farm.handler.submits.count == 1)
    }

    @Test func aWrongSecretExitsOneNamingTheSecretFile() async throws {
        let dir = try Media.tempDirectory()
        let farm = try await FakeFarm.start(FakeCoordinator(jobs: Self.sampleJobs), in: dir)
        let wrong = dir.appendingPathComponent("wrong-secret").path
        try "not the farm's secret, but long enough\n".write(toFile: wrong, atomically: true, encoding: .utf8)
        chmod(wrong, 0o600)
        let r = await ReelRun.run(["status", "--coordinator", farm.address, "--secret-file", wrong])
        // The environment works as well as the flags.
        let viaEnvironment = await ReelRun.run(["agents"], environment: ["REEL_COORDINATOR": farm.address, "REEL_SECRET_FILE": farm.secretFile])
        await farm.stop()
        #expect(r.status == 1)
        #expect(r.stderr.contains("the coordinator refused the secret in \(wrong)"), "\(r.stderr)")
        #expect(farm.handler.requests == ["AGENTS"])
        #expect(viaEnvironment.status == 0, "\(viaEnvironment.stderr)")
    }

    @Test func aSecretFileOthersCanReadExitsOneSayingChmod600() async throws {
        let dir = try Media.tempDirectory()
        let farm = try await FakeFarm.start(FakeCoordinator(jobs: Self.sampleJobs), in: dir)
        let exposed = dir.appendingPathComponent("exposed-secret").path
        try FileManager.default.copyItem(atPath: farm.secretFile, toPath: exposed)
        chmod(exposed, 0o644)
        let flag = await ReelRun.run(["status", "--coordinator", farm.address, "--secret-file", exposed])
        let environment = await ReelRun.run(["agents"], environment: ["REEL_COORDINATOR": farm.address, "REEL_SECRET_FILE": exposed])
        await farm.stop()
        for r in [flag, environment] {
            #expect(r.status == 1)
            #expect(r.stderr.contains("the secret file \(exposed) is accessible to other users (mode 0644)"), "\(r.stderr)")
            #expect(r.stderr.contains("chmod 600 \(exposed)"), "\(r.stderr)")
        }
        #expect(farm.handler.requests.isEmpty, "the client must refuse before connecting")
    }

    @Test func anUnreachableCoordinatorOrAMissingSecretExitsOneSayingWhatToFix() async throws {
        let dir = try Media.tempDirectory()
        // A port that was just free: nothing listens there.
        let probe = try await FakeFarm.start(FakeCoordinator(), in: dir)
        let address = probe.address
        await probe.stop()
        let down = await ReelRun.run(["status", "--coordinator", address, "--secret-file", probe.secretFile])
        #expect(down.status == 1)
        #expect(down.stderr.contains("cannot reach the coordinator at \(address)") && down.stderr.contains("reel coordinator"), "\(down.stderr)")

        let noSecret = await ReelRun.run(["status", "--coordinator", address, "--secret-file", dir.appendingPathComponent("nope").path])
        #expect(noSecret.status == 1)
        #expect(noSecret.stderr.contains("cannot read the secret file"), "\(noSecret.stderr)")
        let noCoordinator = await ReelRun.run(["status", "--secret-file", probe.secretFile])
        #expect(noCoordinator.status == 1)
        #expect(noCoordinator.stderr.contains("REEL_COORDINATOR"), "\(noCoordinator.stderr)")
    }

    @Test func fetchWritesTheWholeOutputOrNothing() async throws {
        let dir = try Media.tempDirectory()
        let bytes = (0..<(3 << 20) + 17).map { UInt8(truncatingIfNeeded: $0 * 31) }
        let farm = try await FakeFarm.start(FakeCoordinator(jobs: Self.sampleJobs, outputs: [6: bytes]), in: dir)
        let out = dir.appendingPathComponent("teaser.mp4").path
        let ok = await ReelRun.run(["fetch", "6", "-o", out] + farm.connectionArguments)
        let notReady = await ReelRun.run(["fetch", "7", "-o", dir.appendingPathComponent("trailer.mp4").path] + farm.connectionArguments)
        await farm.stop()
        #expect(ok.status == 0, "\(ok.stderr)")
        let fetched = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        #expect(fetched == bytes)
        #expect(notReady.status == 1)
        #expect(notReady.stderr.contains("job 7 has no output yet"), "\(notReady.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(files == ["secret", "teaser.mp4"], "no partial download may be left behind")
    }

    @Test func statusWatchRedrawsUntilInterrupted() async throws {
        let dir = try Media.tempDirectory()
        let farm = try await FakeFarm.start(FakeCoordinator(jobs: Self.sampleJobs, agents: Self.sampleAgents), in: dir)
        // Interrupted (as Ctrl-C would) once it has drawn the farm twice; it must not end before.
        let r = await ReelRun.run(["status", "--watch"] + farm.connectionArguments) { out, _ in
            out.components(separatedBy: "trailer.json").count - 1 >= 2
        }
        await farm.stop()
        #expect(r.status == -2, "--watch must keep running until interrupted")
        #expect(r.stdout.components(separatedBy: "trailer.json").count - 1 >= 2, "\(r.stdout)")
        #expect(farm.handler.requests.filter { $0 == "STATUS" }.count >= 2)
    }

    @Test func tlsWithTheCoordinatorsCAConnectsAndPlainTCPDoesNot() async throws {
        let dir = try Media.tempDirectory()
        let key = dir.appendingPathComponent("key.pem").path, cert = dir.appendingPathComponent("cert.pem").path
        try Media.run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                  "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost", "-days", "1",
                                  "-keyout", key, "-out", cert])
        let tls = try NIOSSLContext(configuration: .makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(cert).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))))
        let farm = try await FakeFarm.start(FakeCoordinator(agents: Self.sampleAgents), in: dir, tls: tls)
        let secure = await ReelRun.run(["agents", "--tls-ca", cert, "--tls-server-name", "localhost"] + farm.connectionArguments)
        let plain = await ReelRun.run(["agents"] + farm.connectionArguments)
        let wrongName = await ReelRun.run(["agents", "--tls-ca", cert, "--tls-server-name", "render.example.net"] + farm.connectionArguments)
        // The farm listens on an IP literal: with no name to check the certificate against,
        // the client says what to add (it used to crash on a dropped promise).
        let noName = await ReelRun.run(["agents", "--tls-ca", cert] + farm.connectionArguments)
        await farm.stop()
        #expect(noName.status == 1 && noName.stderr.contains("--tls-server-name"), "\(noName.status) \(noName.stderr)")
        #expect(secure.status == 0, "\(secure.stderr)")
        #expect(secure.stdout.contains("render-01"))
        #expect(plain.status == 1)
        #expect(plain.stderr.contains("cannot reach the coordinator at \(farm.address)") && plain.stderr.contains("TLS"), "\(plain.stderr)")
        #expect(wrongName.status == 1, "\(wrongName.stderr)")
        #expect(farm.handler.requests == ["AGENTS"], "only the TLS client with the right name gets through")
    }
}
