import Foundation
import Testing

/// HLS ladders through the farm: an HLS/DASH ladder rendered by a coordinator and two agents
/// (each video chunk's result a ladder archive of its renditions, proto/PROTOCOL.md §4.6),
/// fetched as a folder, and checked with ffprobe and ffmpeg as LadderRenderTests checks the
/// in-process render: exact frame counts, IDRs at the same times in every rendition, clean
/// decodes of the master playlist and the DASH manifest — and every segment byte for byte the
/// in-process render's. Then incremental re-rendering per rendition: the same job again reuses
/// every chunk; one rendition changed, or one added, encodes only that rendition of each chunk
/// and leaves the other renditions' segments as they were; one removed renders nothing. Short
/// and small: 6 s, three renditions of at most 320x180.
extension FarmTests {
    static let ladderSeconds = 6, ladderRate = 25
    static let ladderRenditions = [("top", 320, 180, 600_000), ("mid", 256, 144, 350_000), ("low", 160, 90, 150_000)]

    /// `renditions`: the ladder's (`ladderRenditions`, or another list: renditions added,
    /// removed); "low" takes `lowBitRate`.
    static func ladderComposition(source: String, lowBitRate: Int = 150_000,
                                  renditions: [(String, Int, Int, Int)] = ladderRenditions) -> String {
        let rungs = renditions.map { name, w, h, rate in
            let bits = name == "low" ? lowBitRate : rate
            return #"{"name": "\#(name)", "renderSize": {"width": \#(w), "height": \#(h)}, "video": {"bitRate": \#(bits), "maxBitRate": \#(bits * 3 / 2)}}"#
        }
        return """
            {"formatVersion": 1, "assets": {"src": {"url": "\(source)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "src", "at": 0}]},
                        {"id": 2, "mediaType": "audio", "segments": [{"asset": "src", "at": 0}]}],
             "export": {"fileType": "hls", "segmentDuration": 2, "video": {"x264Preset": "veryfast"},
                        "renditions": [\(rungs.joined(separator: ", "))]}}
            """
    }

    /// Every file of an HLS folder (relative name → bytes), playlists included.
    static func folderFiles(_ master: String) throws -> [String: Data] {
        let folder = URL(fileURLWithPath: master).deletingLastPathComponent()
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: folder.path)
        while let name = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let path = folder.appendingPathComponent(name).path
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[name] = try Data(contentsOf: URL(fileURLWithPath: path))
            }
        }
        return files
    }

    /// The media segments (`*.m4s`) and init segments of `rendition`, by name.
    static func segments(_ files: [String: Data], rendition: String) -> [String: Data] {
        files.filter { $0.key.hasPrefix("\(rendition)/") && ($0.key.hasSuffix(".m4s") || $0.key.hasSuffix("init.mp4")) }
    }

    /// The ladder of `ladderComposition` over a generated source, rendered in this process
    /// (the reference, one chunk per segment) and submitted to `farm` with `--wait`: the
    /// composition, the two master playlists and the job's id.
    static func renderLadderBothWays(_ farm: LocalFarm) throws -> (composition: String, reference: String, master: String, job: String) {
        let source = farm.dir.appendingPathComponent("src.mov").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=320x180:r=\(Self.ladderRate):d=\(Self.ladderSeconds)",
                          "-f", "lavfi", "-i", "sine=frequency=500:sample_rate=48000:duration=\(Self.ladderSeconds)",
                          "-c:v", "libx264", "-qp", "0", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "pcm_s16le", source])
        let composition = farm.dir.appendingPathComponent("ladder.json").path
        try Self.ladderComposition(source: source).write(toFile: composition, atomically: true, encoding: .utf8)

        let reference = farm.dir.appendingPathComponent("in-process/master.m3u8").path
        let local = try Media.run(Media.reel, ["render", composition, "--in-process", "--agents", "2", "--chunk-seconds", "2",
                                               "--encoder-threads", "2", "-o", reference, "--quiet"], allowFailure: true)
        #expect(local.status == 0, "\(local.stderr)")

        let (master, job) = try Self.submitLadder(farm, composition, folder: "farm")
        return (composition, reference, master, job)
    }

    /// `reel submit COMPOSITION --wait -o FARM/FOLDER/master.m3u8` in 2 s chunks with 2 encoder
    /// threads, expected to succeed: the master playlist's path and the job's id.
    static func submitLadder(_ farm: LocalFarm, _ composition: String, folder: String) throws -> (master: String, job: String) {
        let master = farm.dir.appendingPathComponent("\(folder)/master.m3u8").path
        let submitted = try farm.reel(["submit", composition, "--chunk-seconds", "2", "--encoder-threads", "2",
                                       "--wait", "-o", master, "--quiet"], allowFailure: true)
        #expect(submitted.status == 0, "\(submitted.stderr); coordinator log: \(farm.coordinator.output)")
        return (master, submitted.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func anHLSLadderRendersThroughTheFarmAsItDoesInProcess() throws {
        let farm = try LocalFarm(agents: 2)
        let (composition, reference, master, job) = try Self.renderLadderBothWays(farm)
        let source = farm.dir.appendingPathComponent("src.mov").path
        let kinds = try farm.query("SELECT kind, count(*) FROM tasks WHERE job_id = \(job) GROUP BY kind ORDER BY kind").map { $0.joined(separator: "=") }
        #expect(kinds == ["audio=1", "finalise=1", "video_chunk=3"], "one chunk task per 2 s segment, all renditions in each: \(kinds)")

        // As a player reads it: every rendition's frames, aligned IDRs, clean decodes.
        var keyframeTimes: [[Double]] = []
        for (name, width, height, _) in Self.ladderRenditions {
            let playlist = URL(fileURLWithPath: master).deletingLastPathComponent().appendingPathComponent("\(name)/index.m3u8").path
            let counted = try Media.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                                    "-show_entries", "stream=nb_read_frames,width,height", "-of", "csv=p=0", playlist])
            let first = String(decoding: counted.stdout, as: UTF8.self).split(separator: "\n").first ?? ""
            #expect(first.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
                    == ["\(width)", "\(height)", "\(Self.ladderSeconds * Self.ladderRate)"], "\(name): width, height, frames")
            let packets = try Media.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time,flags",
                                                    "-of", "csv=p=0", playlist])
            keyframeTimes.append(String(decoding: packets.stdout, as: UTF8.self).split(separator: "\n").filter { $0.contains(",K") }
                .compactMap { Double($0.split(separator: ",")[0]) }.sorted())
        }
        #expect(keyframeTimes[0].count == Self.ladderSeconds / 2, "one IDR per 2 s segment: \(keyframeTimes[0])")
        #expect(keyframeTimes.allSatisfy { $0 == keyframeTimes[0] }, "the IDR times differ between renditions: \(keyframeTimes)")
        let manifest = URL(fileURLWithPath: master).deletingLastPathComponent().appendingPathComponent("manifest.mpd").path
        for input in [master, manifest] {
            let r = try Media.run("ffmpeg", ["-v", "error", "-i", input, "-map", "0", "-f", "null", "-"], allowFailure: true)
            #expect(r.status == 0 && r.stderr.isEmpty, "\(input): \(r.stderr)")
        }

        // Byte for byte the in-process render: segments, init segments and playlists alike.
        let farmFiles = try Self.folderFiles(master), localFiles = try Self.folderFiles(reference)
        #expect(farmFiles.keys.sorted() == localFiles.keys.sorted())
        #expect(farmFiles.count >= 3 * (Self.ladderSeconds / 2 + 2) + 2, "\(farmFiles.keys.sorted())")
        for (name, bytes) in localFiles { #expect(farmFiles[name] == bytes, "\(name) differs from the in-process render's") }

        // The console's poster: agents send one with every ladder chunk, as with any chunk (its
        // last frame). It shows the picture: one of the chunks' last frames, by 32x18 luma of
        // R'G'B' (the JPEG's Y'CbCr is BT.601 full range, the video's BT.709: their Y differ).
        func luma(_ input: String, _ filter: String) throws -> [UInt8] {
            [UInt8](try Media.run("ffmpeg", ["-v", "error", "-i", input, "-vf", filter + "format=rgb24,scale=32:18:flags=area,format=gray",
                                            "-fps_mode", "passthrough", "-f", "rawvideo", "-"]).stdout)
        }
        let poster = try luma(farm.dir.appendingPathComponent("storage/posters/\(job).jpg").path, "")
        let chunkEnds = try luma(URL(fileURLWithPath: reference).deletingLastPathComponent().appendingPathComponent("top/index.m3u8").path,
                                 "select='eq(n\\,49)+eq(n\\,99)+eq(n\\,149)',")
        #expect(poster.count == 32 * 18 && chunkEnds.count == 3 * 32 * 18)
        let posterPSNR = poster.count != 32 * 18 || chunkEnds.count != 3 * 32 * 18 ? 0 : stride(from: 0, to: chunkEnds.count, by: 32 * 18).map { Media.psnr(poster, Array(chunkEnds[$0..<$0 + 32 * 18])) }.max() ?? 0
        #expect(posterPSNR >= 25, "the poster is a chunk's last frame: \(posterPSNR) dB")

        // fetch writes the same folder, under the master playlist name it is given.
        let fetched = farm.dir.appendingPathComponent("fetched/stream.m3u8").path
        let fetch = try farm.reel(["fetch", job, "-o", fetched, "--quiet"], allowFailure: true)
        #expect(fetch.status == 0, "\(fetch.stderr)")
        var fetchedFiles = try Self.folderFiles(fetched)
        fetchedFiles["master.m3u8"] = fetchedFiles.removeValue(forKey: "stream.m3u8")
        #expect(fetchedFiles == farmFiles)
        let wrong = try farm.reel(["fetch", job, "-o", farm.dir.appendingPathComponent("ladder.mp4").path], allowFailure: true)
        #expect(wrong.status == 1 && wrong.stderr.contains("job \(job)'s output is an HLS folder (-o DIR/master.m3u8)"), "\(wrong.stderr)")
        let hidden = try FileManager.default.contentsOfDirectory(atPath: URL(fileURLWithPath: fetched).deletingLastPathComponent().path)
            .filter { $0.hasPrefix(".") }
        #expect(hidden.isEmpty, "nothing left behind: \(hidden)")

        // The same job again: every chunk and the audio reused, the same folder.
        let (again, job2) = try Self.submitLadder(farm, composition, folder: "again")
        let reused = try farm.query("SELECT kind, reused FROM tasks WHERE job_id = \(job2) AND kind <> 'finalise' ORDER BY kind, ordinal")
        #expect(reused.allSatisfy { $0[1] == "t" } && reused.count == 4, "\(reused)")
        #expect(try Self.folderFiles(again) == farmFiles)

        // One rendition changed: the chunks render again, encoding only that rendition (the
        // others are reused from the first job's archives, found by rendition key), the audio
        // is reused, and the renditions that did not change come out byte for byte as before.
        try Self.ladderComposition(source: source, lowBitRate: 120_000).write(toFile: composition, atomically: true, encoding: .utf8)
        let (changed, job3) = try Self.submitLadder(farm, composition, folder: "changed")
        let reused3 = try farm.query("SELECT kind, reused FROM tasks WHERE job_id = \(job3) AND kind <> 'finalise' ORDER BY kind, ordinal")
        #expect(reused3.map { $0.joined(separator: "=") } == ["audio=t", "video_chunk=f", "video_chunk=f", "video_chunk=f"], "\(reused3)")
        let changedFiles = try Self.folderFiles(changed)
        for name in ["top", "mid"] {
            #expect(Self.segments(changedFiles, rendition: name) == Self.segments(farmFiles, rendition: name), "\(name) changed")
        }
        #expect(Self.segments(changedFiles, rendition: "low") != Self.segments(farmFiles, rendition: "low"), "low was re-encoded")
        #expect(Self.segments(changedFiles, rendition: "low").count == Self.ladderSeconds / 2 + 1)
        try Self.expectOnlyEncoded(["low"], job: job3, reusedFrom: job, farm: farm)
        try Self.expectPlays(changed, renditions: Self.ladderRenditions)

        // A fourth rendition added: only it is encoded; the other three come from the first and
        // the third job's archives, byte for byte.
        let withTiny = Self.ladderRenditions + [("tiny", 128, 72, 100_000)]
        try Self.ladderComposition(source: source, lowBitRate: 120_000, renditions: withTiny)
            .write(toFile: composition, atomically: true, encoding: .utf8)
        let (added, job4) = try Self.submitLadder(farm, composition, folder: "added")
        try Self.expectOnlyEncoded(["tiny"], job: job4, reusedFrom: job, farm: farm)
        let addedFiles = try Self.folderFiles(added)
        for name in ["top", "mid", "low"] {
            #expect(Self.segments(addedFiles, rendition: name) == Self.segments(changedFiles, rendition: name), "\(name) changed")
        }
        try Self.expectPlays(added, renditions: withTiny)
        let events = try farm.query("SELECT message FROM events WHERE job_id = \(job4) AND kind = 'renditions'").map { $0[0] }
        #expect(events == ["renditions reused: top, mid, low; rendered: tiny"], "\(events)")

        // A rendition removed: every chunk's renditions are all stored, so nothing renders.
        try Self.ladderComposition(source: source, lowBitRate: 120_000, renditions: Array(Self.ladderRenditions.prefix(2)))
            .write(toFile: composition, atomically: true, encoding: .utf8)
        let (removed, job5) = try Self.submitLadder(farm, composition, folder: "removed")
        let reused5 = try farm.query("SELECT kind, reused FROM tasks WHERE job_id = \(job5) AND kind <> 'finalise' ORDER BY kind, ordinal")
        #expect(reused5.allSatisfy { $0[1] == "t" } && reused5.count == 4, "\(reused5)")
        let removedFiles = try Self.folderFiles(removed)
        for name in ["top", "mid"] {
            #expect(Self.segments(removedFiles, rendition: name) == Self.segments(farmFiles, rendition: name), "\(name) changed")
        }
        #expect(Self.segments(removedFiles, rendition: "low").isEmpty)
        try Self.expectPlays(removed, renditions: Array(Self.ladderRenditions.prefix(2)))
    }

    /// Job `job`'s chunk tasks encoded exactly `encoded` (their rendition rows name no other
    /// archive for them, and their results are archives of just those members), and took every
    /// other rendition from a stored archive, those of `reusedFrom` among them.
    static func expectOnlyEncoded(_ encoded: [String], job: String, reusedFrom: String, farm: LocalFarm) throws {
        let rows = try farm.query("""
            SELECT t.ordinal, string_agg(r.name, ',' ORDER BY r.position) FILTER (WHERE r.source_sha256 IS NULL),
                   string_agg(r.name, ',' ORDER BY r.position) FILTER (WHERE r.source_sha256 IS NOT NULL), t.reused, t.result_sha256
            FROM tasks t JOIN task_renditions r ON r.task_id = t.id WHERE t.job_id = \(job) GROUP BY t.id ORDER BY t.ordinal
            """)
        #expect(rows.count == ladderSeconds / 2 && rows.allSatisfy { $0[1] == encoded.joined(separator: ",") && $0[3] == "f" }, "\(rows)")
        for row in rows {
            let listing = try Media.run("tar", ["-tf", farm.dir.appendingPathComponent("storage/results/sha256/\(row[4].prefix(2))/\(row[4])").path])
            #expect(String(decoding: listing.stdout, as: UTF8.self).split(separator: "\n") == encoded.map { "\($0).mp4"[...] },
                    "chunk \(row[0]) of job \(job) holds only what it encoded")
        }
        let firstArchives = Set(try farm.query("SELECT result_sha256 FROM tasks WHERE job_id = \(reusedFrom) AND kind = 'video_chunk'").map { $0[0] })
        let sources = Set(try farm.query("""
            SELECT r.source_sha256 FROM task_renditions r JOIN tasks t ON t.id = r.task_id
            WHERE t.job_id = \(job) AND r.source_sha256 IS NOT NULL
            """).map { $0[0] })
        #expect(!sources.isEmpty && !sources.isDisjoint(with: firstArchives), "reused from job \(reusedFrom)'s archives: \(sources)")
    }

    /// Every rendition of the folder at `master` has its size and every frame, and the master
    /// playlist decodes cleanly.
    static func expectPlays(_ master: String, renditions: [(String, Int, Int, Int)]) throws {
        for (name, width, height, _) in renditions {
            let playlist = URL(fileURLWithPath: master).deletingLastPathComponent().appendingPathComponent("\(name)/index.m3u8").path
            let counted = try Media.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                                    "-show_entries", "stream=nb_read_frames,width,height", "-of", "csv=p=0", playlist])
            let first = String(decoding: counted.stdout, as: UTF8.self).split(separator: "\n").first ?? ""
            #expect(first.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
                    == ["\(width)", "\(height)", "\(ladderSeconds * ladderRate)"], "\(name): width, height, frames")
        }
        let r = try Media.run("ffmpeg", ["-v", "error", "-i", master, "-map", "0", "-f", "null", "-"], allowFailure: true)
        #expect(r.status == 0 && r.stderr.isEmpty, "\(master): \(r.stderr)")
    }

    /// `reel render` all in one (a private coordinator and agents on a database of its own)
    /// renders a ladder too, into a folder.
    @Test func reelRenderAllInOneRendersALadder() throws {
        let url = try FreshDatabase.url()
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("src.mov").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=320x180:r=\(Self.ladderRate):d=4", "-f", "lavfi", "-i",
                          "sine=frequency=500:sample_rate=48000:duration=4", "-c:v", "libx264", "-qp", "0", "-preset", "ultrafast",
                          "-pix_fmt", "yuv420p", "-c:a", "pcm_s16le", source])
        let composition = dir.appendingPathComponent("ladder.json").path
        try Self.ladderComposition(source: source).write(toFile: composition, atomically: true, encoding: .utf8)
        let master = dir.appendingPathComponent("out/master.m3u8").path
        let render = try Media.run(Media.reel, ["render", composition, "-o", master, "--database", url, "--agents", "2",
                                                "--chunk-seconds", "2", "--quiet"],
                                   allowFailure: true)
        #expect(render.status == 0, "\(render.stderr)")
        for (name, _, _, _) in Self.ladderRenditions {
            let playlist = dir.appendingPathComponent("out/\(name)/index.m3u8").path
            let counted = try Media.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                                    "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", playlist])
            #expect(String(decoding: counted.stdout, as: UTF8.self).split(separator: "\n").first.map(String.init) == "\(4 * Self.ladderRate)", "\(name)")
        }
        let r = try Media.run("ffmpeg", ["-v", "error", "-i", master, "-map", "0", "-f", "null", "-"], allowFailure: true)
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
    }
}
