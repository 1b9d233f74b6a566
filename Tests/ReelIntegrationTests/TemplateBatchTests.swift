import Foundation
import Testing
import ReelThreadTesting

/// `reel batch`: one template, one job per row on the farm started once, validated first,
/// failures isolated, a manifest written as rows finish, and resumed by running it again.
/// Needs `REEL_TEST_DATABASE_URL` (each batch gets a database of its own).
@Suite(.database, .blocking, .serialized) struct TemplateBatchTests {
    /// 2 s of 160x90 at 25 fps with 1 s GOPs: a shared 1 s intro (the same in every row), then
    /// the row's photo in the top-left corner over its background colour `bg`, and its name.
    static let template = #"""
    {"formatVersion": 1,
     "variables": {"name": {"type": "text", "maxLength": 20}, "bg": {"type": "color"}, "photo": {"type": "asset"}},
     "assets": {"intro": {"url": "../media/intro.mp4"}, "photo": {"url": "{{photo}}"}},
     "tracks": [{"id": 1, "mediaType": "video", "segments": [
       {"asset": "intro", "at": 0, "sourceRange": {"start": 0, "duration": 1}},
       {"asset": "photo", "at": 1, "duration": 1}]}],
     "videoComposition": {"renderSize": {"width": 160, "height": 90}, "frameDuration": "1/25",
       "instructions": [{"timeRange": {"start": 0, "duration": 1}, "layerInstructions": [{"track": 1}]},
                        {"timeRange": {"start": 1, "duration": 1}, "backgroundColor": "{{bg}}", "layerInstructions": [{"track": 1}]}],
       "overlays": [{"text": "{{name}}", "fontSize": 16, "color": "#FFFFFF", "frame": {"x": 8, "y": 64, "width": 100, "height": 22},
                     "timeRange": {"start": 1, "duration": 1}}]},
     "export": {"video": {"gopDuration": 1, "x264Preset": "ultrafast"}}}
    """#

    /// Row 2's colour is wrong (invalid), row 3's photo does not exist (it fails alone).
    static let rows = """
        id,name,bg,photo
        ada,Ada,#C00000,logo.png
        bob,Bob,gold,logo.png
        cy,Cy,#00A000,missing.png
        dee,Dee,#0000C0,logo.png
        eve,Eve,#C0C000,logo.png
        """ + "\n"

    /// The expected colour of each row that renders, by its id.
    static let colours: [String: [Double]] = ["ada": [192, 0, 0], "dee": [0, 0, 192], "eve": [192, 192, 0]]

    /// `templates/card.json`, `data/rows.csv` with `data/logo.png` (a 32x24 white picture,
    /// named relative to the rows file), and `media/intro.mp4` (a 1 s test pattern).
    static func fixture() throws -> URL {
        let dir = try Media.tempDirectory()
        for folder in ["templates", "data", "media"] {
            try FileManager.default.createDirectory(at: dir.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=1", "-c:v", "libx264", "-preset", "ultrafast",
                          "-pix_fmt", "yuv420p", dir.appendingPathComponent("media/intro.mp4").path])
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=white:size=32x24", "-frames:v", "1", dir.appendingPathComponent("data/logo.png").path])
        try template.write(to: dir.appendingPathComponent("templates/card.json"), atomically: true, encoding: .utf8)
        try rows.write(to: dir.appendingPathComponent("data/rows.csv"), atomically: true, encoding: .utf8)
        return dir
    }

    /// A batch in `dir` against `database`, with the data home `dir/data-home` (kept between runs,
    /// as a person's is).
    static func batch(_ dir: URL, database: String, _ extra: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let r = try Media.run(Media.reel, ["batch", "templates/card.json", "data/rows.csv", "-o", "out/{{id}}.mp4", "--agents", "1", "--jobs", "2",
                                           "--chunk-seconds", "1", "--encoder-threads", "1", "--database", database, "--quiet"] + extra,
                              allowFailure: true, currentDirectory: dir,
                              environment: ["REEL_DATA_HOME": dir.appendingPathComponent("data-home").path])
        return (r.status, String(decoding: r.stdout, as: UTF8.self), r.stderr)
    }

    static func manifest(_ dir: URL) throws -> [[String: Any]] {
        let data = try Data(contentsOf: dir.appendingPathComponent("out/manifest.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try #require(json["entries"] as? [[String: Any]])
    }

    static func jobCount(_ database: String) throws -> Int {
        Int(String(decoding: try Media.run("psql", [database, "-tAc", "SELECT count(*) FROM jobs"]).stdout, as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// Mean red, green and blue of the 16x16 square at (128, 40) — background, away from the
    /// photo and the name — in the frame at 1.5 s of `path`.
    static func background(_ path: String) throws -> [Double] {
        let frames = try Media.rgbFrames(path, width: 160, height: 90)
        guard frames.count == 50 else { return [] }
        return TemplateRenderTests.colour(frames[37], width: 160, x: 128, y: 40)
    }

    static func expectColour(_ got: [Double], _ expected: [Double], _ comment: Comment) {
        #expect(got.count == 3 && zip(got, expected).allSatisfy { abs($0 - $1) < 14 }, "\(comment): \(got), expected \(expected)")
    }

    @Test func anInvalidRowStopsAFarmBatchBeforeAnythingIsSubmitted() throws {
        let dir = try Self.fixture()
        // No coordinator listens there: the rows are checked before anything connects.
        let r = try Media.run(Media.reel, ["submit", "--batch", "data/rows.csv", "templates/card.json", "-o", "out/{{id}}.mp4",
                                           "--coordinator", "127.0.0.1:9", "--secret-file", "/nonexistent"],
                              allowFailure: true, currentDirectory: dir,
                              environment: ["REEL_DATA_HOME": dir.appendingPathComponent("data-home").path])
        #expect(r.status == 1)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first == ##"row 2 (data/rows.csv line 3), column bg: must be a colour "#RRGGBB" or "#RRGGBBAA", like "#FF8800", not "gold""##,
                "\(r.stderr)")
        #expect(lines.contains("error: 1 of 5 rows are invalid, so nothing was submitted: fix them, or give --skip-invalid to submit the other 4"),
                "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out").path), "no output, no manifest")
    }

    @Test func anInvalidRowStopsTheBatchBeforeAnythingRenders() throws {
        let dir = try Self.fixture()
        let database = try FreshDatabase.url(prefix: "batch")
        let r = try Self.batch(dir, database: database, [])
        #expect(r.status == 1)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first == ##"row 2 (data/rows.csv line 3), column bg: must be a colour "#RRGGBB" or "#RRGGBBAA", like "#FF8800", not "gold""##,
                "\(r.stderr)")
        #expect(lines.contains("error: 1 of 5 rows are invalid, so nothing was rendered: fix them, or give --skip-invalid to render the other 4"),
                "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out").path), "no output, no manifest")
        // The farm never started: its database has no table yet.
        let tables = try Media.run("psql", [database, "-tAc", "SELECT count(*) FROM pg_tables WHERE tablename = 'jobs'"]).stdout
        #expect(String(decoding: tables, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }

    @Test func everyValidRowRendersSharesItsIntroAndResumesWhereItStopped() throws {
        let dir = try Self.fixture()
        let database = try FreshDatabase.url(prefix: "batch")
        let first = try Self.batch(dir, database: database, ["--skip-invalid"])
        #expect(first.status == 1, "a failed and an invalid row: \(first.stderr)")
        #expect(first.stdout.contains("5 rows: 3 done, 1 failed, 1 invalid; manifest: out/manifest.json"), "\(first.stdout)")
        #expect(first.stderr.contains("row 3 failed"), "\(first.stderr)")

        let entries = try Self.manifest(dir)
        try #require(entries.count == 5)
        #expect(entries.map { $0["row"] as? Int } == [1, 2, 3, 4, 5])
        #expect(entries.map { $0["line"] as? Int } == [2, 3, 4, 5, 6])
        #expect(entries.map { $0["status"] as? String } == ["done", "invalid", "failed", "done", "done"])
        #expect(entries.map { $0["output"] as? String } == ["out/ada.mp4", "out/bob.mp4", "out/cy.mp4", "out/dee.mp4", "out/eve.mp4"])
        #expect((entries[1]["error"] as? String)?.hasPrefix(##"column bg: must be a colour "#RRGGBB""##) == true, "\(entries[1])")
        let missing = dir.appendingPathComponent("data/missing.png").path
        #expect((entries[2]["error"] as? String)?.contains("no such file (\(missing)) (from {{photo}})") == true, "\(entries[2])")
        #expect(entries[1]["valuesSHA256"] is NSNull && (entries[2]["valuesSHA256"] as? String)?.count == 64)
        for id in ["bob", "cy"] {
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out/\(id).mp4").path), "\(id) has no output")
        }

        // The outputs: 2 s (50 frames), the row's colour, the intro the same in every row.
        var intros: [[UInt8]] = []
        for (index, id) in [(0, "ada"), (3, "dee"), (4, "eve")] {
            let path = dir.appendingPathComponent("out/\(id).mp4").path
            let entry = entries[index]
            let format = try #require(try Media.probe(path)["format"] as? [String: Any])
            let seconds = Double(format["duration"] as? String ?? "") ?? 0
            #expect(abs(seconds - 2) < 0.05, "\(id): ffprobe says \(seconds) s")
            #expect(entry["durationSeconds"] as? Double == 2, "\(id): \(entry)")
            #expect((entry["bytes"] as? Int).map(Int64.init) == regularSize(path), "\(id): \(entry)")
            #expect(entry["valuesSHA256"] as? String != nil && entry["job"] as? Int != nil)
            Self.expectColour(try Self.background(path), Self.colours[id]!, "\(id)")
            let frames = try Media.rgbFrames(path, width: 160, height: 90)
            #expect(frames.count == 50, "\(id): \(frames.count) frames")
            intros.append(frames.prefix(25).flatMap { $0 })
        }
        #expect(intros.count == 3 && intros[0] == intros[1] && intros[1] == intros[2], "the intro is the same picture in every row")

        // The first row rendered everything; the later ones took its intro instead of rendering it.
        let chunks = entries.map { $0["chunks"] as? Int ?? 0 }, reused = entries.map { $0["reusedChunks"] as? Int ?? -1 }
        #expect(reused[0] == 0 && chunks[0] >= 2, "\(entries[0])")
        for index in [3, 4] {
            #expect(reused[index] >= 1 && reused[index] < chunks[index], "row \(index + 1): \(reused[index]) of \(chunks[index]) reused")
            #expect((entries[index]["agentSeconds"] as? Double ?? 0) > 0, "\(entries[index])")
        }
        #expect((entries[0]["agentSeconds"] as? Double ?? 0) > 0, "\(entries[0])")
        let csv = try String(contentsOf: dir.appendingPathComponent("out/manifest.csv"), encoding: .utf8)
        #expect(csv.hasPrefix("row,line,values_sha256,output,status,duration_seconds,bytes,agent_seconds,reused_chunks,chunks,job,error\r\n"))
        #expect(csv.split(separator: "\r\n").count == 6)

        // Resume: dee's output is gone and eve's colour changed; the rest is not rendered again.
        let jobsBefore = try Self.jobCount(database)
        try FileManager.default.removeItem(at: dir.appendingPathComponent("out/dee.mp4"))
        try Self.rows.replacingOccurrences(of: "eve,Eve,#C0C000", with: "eve,Eve,#00C0C0")
            .write(to: dir.appendingPathComponent("data/rows.csv"), atomically: true, encoding: .utf8)
        let adaBefore = try Data(contentsOf: dir.appendingPathComponent("out/ada.mp4"))
        let second = try Self.batch(dir, database: database, ["--skip-invalid"])
        #expect(second.status == 1, "\(second.stderr)")
        #expect(second.stderr.contains("1 row(s) done before, with their outputs in place: not rendered again"), "\(second.stderr)")
        let again = try Self.manifest(dir)
        #expect(again.map { $0["status"] as? String } == ["done", "invalid", "failed", "done", "done"])
        #expect(try Self.jobCount(database) == jobsBefore + 2, "one job for dee, one for eve (cy fails before it is submitted)")
        #expect(again[0]["job"] as? Int == entries[0]["job"] as? Int, "ada is kept as it was")
        #expect(try Data(contentsOf: dir.appendingPathComponent("out/ada.mp4")) == adaBefore)
        #expect(again[3]["job"] as? Int != entries[3]["job"] as? Int && again[4]["job"] as? Int != entries[4]["job"] as? Int)
        // Dee's composition was rendered before: every chunk is reused; agents only joined them.
        #expect(again[3]["reusedChunks"] as? Int == again[3]["chunks"] as? Int, "\(again[3])")
        let deeJob = again[3]["job"] as? Int ?? -1
        let rendered = try Media.run("psql", [database, "-tAc", "SELECT count(*) FROM tasks WHERE job_id = \(deeJob) AND kind <> 'finalise' AND NOT reused"])
        #expect(String(decoding: rendered.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        #expect((again[3]["agentSeconds"] as? Double ?? -1) >= 0)
        #expect(again[4]["valuesSHA256"] as? String != entries[4]["valuesSHA256"] as? String)
        Self.expectColour(try Self.background(dir.appendingPathComponent("out/dee.mp4").path), Self.colours["dee"]!, "dee again")
        Self.expectColour(try Self.background(dir.appendingPathComponent("out/eve.mp4").path), [0, 192, 192], "eve's new colour")
    }

    /// `kill -9` halfway: the manifest holds every row finished until then, and the same
    /// command renders only the others.
    @Test func aBatchKilledHalfwayResumesWithTheRowsNotDone() throws {
        let dir = try Self.fixture()
        let database = try FreshDatabase.url(prefix: "batch")
        let count = 12
        let rows = (1...count).map { i in "r\(i),Row \(i),#\(String(format: "%02X", 10 * i))4080,logo.png" }
        try (["id,name,bg,photo"] + rows).joined(separator: "\n").appending("\n")
            .write(to: dir.appendingPathComponent("data/rows.csv"), atomically: true, encoding: .utf8)
        let arguments = ["batch", dir.appendingPathComponent("templates/card.json").path, dir.appendingPathComponent("data/rows.csv").path,
                         "-o", dir.appendingPathComponent("out").path + "/{{id}}.mp4", "--agents", "1", "--jobs", "1", "--chunk-seconds", "1",
                         "--encoder-threads", "1", "--database", database, "--quiet"]
        let environment = ["REEL_DATA_HOME": dir.appendingPathComponent("data-home").path]
        let process = try BackgroundProcess([Media.reel] + arguments, log: dir.appendingPathComponent("batch.log").path, environment: environment)
        // Until two rows are done (the manifest is rewritten whole as each finishes).
        let manifest = dir.appendingPathComponent("out/manifest.json")
        func statuses() -> [String] {
            guard let data = try? Data(contentsOf: manifest), let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let entries = json["entries"] as? [[String: Any]] else { return [] }
            return entries.map { $0["status"] as? String ?? "?" }
        }
        let deadline = Date().addingTimeInterval(120)
        while statuses().filter({ $0 == "done" }).count < 2 && !process.hasExited && Date() < deadline { usleep(20_000) }
        process.stop(SIGKILL)
        let killed = statuses()
        let done = killed.filter { $0 == "done" }.count
        #expect(killed.count == count && done >= 2 && done < count, "the batch was killed with \(killed) (log: \(process.log))")
        let before = try Self.manifest(dir)
        let jobsBefore = try Self.jobCount(database)

        let again = try Media.run(Media.reel, arguments, allowFailure: true, environment: environment)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("\(done) row(s) done before, with their outputs in place: not rendered again"), "\(again.stderr)")
        let after = try Self.manifest(dir)
        #expect(after.map { $0["status"] as? String } == Array(repeating: "done", count: count))
        #expect(try Self.jobCount(database) == jobsBefore + count - done, "one new job per row not done")
        for (old, new) in zip(before, after) where old["status"] as? String == "done" {
            #expect(old["job"] as? Int == new["job"] as? Int, "a row done before the kill is kept: \(new)")
        }
        for i in [1, count] {
            let expected = [Double(10 * i), 64, 128]
            Self.expectColour(try Self.background(dir.appendingPathComponent("out/r\(i).mp4").path), expected, "r\(i)")
        }
    }

    /// `reel submit --batch … --wait` against a running farm (a coordinator and two agents, as
    /// docs/templates.md's "Batches on a farm" runs it), then `reel status bID` as an operator
    /// follows it: `--json`, `--rows` and `--watch`, which ends by itself once the batch has.
    @Test func aFarmBatchIsSubmittedFollowedAndDownloaded() throws {
        let dir = try Self.fixture()
        let farm = try FarmTests.LocalFarm(agents: 2, leaseSeconds: 30)
        let environment = ["REEL_DATA_HOME": dir.appendingPathComponent("data-home").path]
        let connection = ["--coordinator", farm.coordinatorList, "--secret-file", farm.secret]
        func reel(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
            let r = try Media.run(Media.reel, arguments + connection, allowFailure: true, currentDirectory: dir, environment: environment)
            return (r.status, String(decoding: r.stdout, as: UTF8.self), r.stderr)
        }
        let submitted = try reel(["submit", "--batch", "data/rows.csv", "templates/card.json", "-o", "out/{{id}}.mp4",
                                  "--skip-invalid", "--wait", "--chunk-seconds", "1", "--quiet"])
        #expect(submitted.status == 1, "cy's photo is missing: that row failed (\(submitted.stderr))")
        let batch = try #require(submitted.stdout.split(separator: "\n").first { $0.hasPrefix("b") && Int64($0.dropFirst()) != nil },
                                 "the batch on stdout: \(submitted.stdout) (stderr: \(submitted.stderr))")

        // The manifest and outputs, as `reel batch` leaves them.
        let entries = try Self.manifest(dir)
        #expect(entries.map { $0["status"] as? String } == ["done", "invalid", "failed", "done", "done"], "\(entries)")
        var intros: [[UInt8]] = []
        for (index, id) in [(0, "ada"), (3, "dee"), (4, "eve")] {
            let path = dir.appendingPathComponent("out/\(id).mp4").path
            Self.expectColour(try Self.background(path), Self.colours[id]!, "\(id)")
            let frames = try Media.rgbFrames(path, width: 160, height: 90)
            #expect(frames.count == 50, "\(id): \(frames.count) frames")
            intros.append(frames.prefix(25).flatMap { $0 })
            #expect(entries[index]["job"] as? Int != nil && (entries[index]["bytes"] as? Int).map(Int64.init) == regularSize(path))
        }
        #expect(intros.count == 3 && intros[0] == intros[1] && intros[1] == intros[2], "the intro is the same picture in every row")

        // The batch as the coordinator keeps it: the three rows that were submitted, all done,
        // the later rows reusing the first row's intro.
        let json = try reel(["status", String(batch), "--json", "--rows"])
        #expect(json.status == 0, "\(json.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stdout)")
        #expect(report["state"] as? String == "done" && report["rows"] as? Int == 3, "\(report)")
        let rows = try #require(report["rowStatuses"] as? [[String: Any]], "\(report)")
        #expect(rows.map { $0["job"] as? Int } == [0, 3, 4].map { entries[$0]["job"] as? Int })
        #expect(rows.map { $0["state"] as? String } == ["done", "done", "done"])
        let reused = rows.map { $0["reusedChunks"] as? Int ?? -1 }
        #expect(reused[0] == 0 && reused[1] >= 1 && reused[2] >= 1, "rows 2 and 3 reuse the intro: \(rows)")

        // --watch of a batch that has ended prints it once and ends, with status 0.
        let watched = try reel(["status", String(batch), "--watch"])
        #expect(watched.status == 0, "\(watched.stderr)")
        #expect(watched.stdout.contains("\(batch) card.json × 3 rows: done"), "\(watched.stdout)")
        #expect(watched.stdout.contains("rows: 3 — 0 queued, 0 running, 3 done, 0 failed"), "\(watched.stdout)")
    }

    @Test func failFastStopsAtTheFirstFailure() throws {
        let dir = try Self.fixture()
        let database = try FreshDatabase.url(prefix: "batch")
        // Cy first: it fails, and nothing else starts.
        try "id,name,bg,photo\ncy,Cy,#00A000,missing.png\nada,Ada,#C00000,logo.png\ndee,Dee,#0000C0,logo.png\n"
            .write(to: dir.appendingPathComponent("data/rows.csv"), atomically: true, encoding: .utf8)
        let r = try Self.batch(dir, database: database, ["--fail-fast"])
        #expect(r.status == 1)
        #expect(r.stdout.contains("3 rows: 0 done, 1 failed, 0 invalid, 2 not rendered (stopped at the first failure: --fail-fast)"), "\(r.stdout)")
        #expect(try Self.manifest(dir).map { $0["status"] as? String } == ["failed", "pending", "pending"])
        #expect(try Self.jobCount(database) == 0)
    }
}

private func regularSize(_ path: String) -> Int64? {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
}
