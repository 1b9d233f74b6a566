import Foundation
import Testing
import ReelThreadTesting
@testable import ReelCore
@testable import ReelMedia

/// An HLS/DASH ladder rendered in-process — a 30 s composition as three
/// renditions in 2 s chunks of 2 s segments — checked with ffprobe and ffmpeg, which read the
/// playlists, the manifest and the segments as any player would: exact frame counts per
/// rendition, IDR frames at the same times in every rendition, a master `BANDWIDTH` within
/// 10 % of the peak segment bit rate measured here from file sizes and `EXTINF`s, and clean
/// decodes of `master.m3u8` and `manifest.mpd`.
///
/// Small pictures keep the three encodes short on two shared cores.
@Suite(.blocking) struct LadderRenderTests {
    static let seconds = 30, rate = 25
    static let renditions = [("top", 320, 180, 600_000), ("mid", 256, 144, 350_000), ("low", 160, 90, 150_000)]

    static func render() throws -> (dir: URL, master: String, plan: RenderPlan) {
        let dir = try Media.tempDirectory()
        let source = dir.appendingPathComponent("src.mov").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=320x180:r=\(rate):d=\(seconds)",
                          "-f", "lavfi", "-i", "sine=frequency=500:sample_rate=48000:duration=\(seconds)",
                          "-c:v", "libx264", "-qp", "0", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "pcm_s16le", source])
        let rungs = renditions.map { name, w, h, rate in
            #"{"name": "\#(name)", "renderSize": {"width": \#(w), "height": \#(h)}, "video": {"bitRate": \#(rate), "maxBitRate": \#(rate * 3 / 2)}}"#
        }
        let json = """
            {"formatVersion": 1, "assets": {"src": {"url": "\(source)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "src", "at": 0}]},
                        {"id": 2, "mediaType": "audio", "segments": [{"asset": "src", "at": 0}]}],
             "export": {"fileType": "hls", "segmentDuration": 2, "video": {"x264Preset": "veryfast"},
                        "renditions": [\(rungs.joined(separator: ", "))]}}
            """
        let out = dir.appendingPathComponent("ladder")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let compositionPath = dir.appendingPathComponent("ladder.json").path
        try json.write(toFile: compositionPath, atomically: true, encoding: .utf8)
        let plan = try CompositionLoader.load(path: compositionPath, outputFileType: .hls)
        let master = out.appendingPathComponent("master.m3u8").path
        try LocalRender.render(plan, to: master, options: LocalRender.Options(workers: 2, chunkSeconds: 2, encoderThreads: 2))
        return (dir, master, plan)
    }

    static let rendered = Result { try render() }

    static func lines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    /// Each segment of a media playlist: (bytes of its file, EXTINF seconds).
    static func segments(_ playlist: String) throws -> [(bytes: Int, seconds: Double)] {
        let folder = URL(fileURLWithPath: playlist).deletingLastPathComponent()
        let text = try lines(playlist)
        var out: [(Int, Double)] = []
        for (index, line) in text.enumerated() where line.hasPrefix("#EXTINF:") {
            let seconds = Double(line.dropFirst("#EXTINF:".count).split(separator: ",")[0])!
            let size = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(text[index + 1]).path)[.size] as! Int
            out.append((size, seconds))
        }
        return out
    }

    @Test func everyRenditionHasExactlyTheFrames() throws {
        let (dir, _, _) = try Self.rendered.get()
        for (name, width, height, _) in Self.renditions {
            let playlist = dir.appendingPathComponent("ladder/\(name)/index.m3u8").path
            let r = try Media.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                              "-show_entries", "stream=nb_read_frames,width,height", "-of", "csv=p=0", playlist])
            // The HLS demuxer lists the stream under its program too: the first line is enough.
            let first = String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").first ?? ""
            let fields = first.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
            #expect(fields == ["\(width)", "\(height)", "\(Self.seconds * Self.rate)"], "\(name): width, height, frames")
        }
    }

    @Test func idrFramesSitAtTheSameTimesInEveryRendition() throws {
        let (dir, _, _) = try Self.rendered.get()
        var times: [[Double]] = []
        for (name, _, _, _) in Self.renditions {
            let playlist = dir.appendingPathComponent("ladder/\(name)/index.m3u8").path
            let r = try Media.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time,flags",
                                              "-of", "csv=p=0", playlist])
            times.append(String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").filter { $0.contains(",K") }
                .compactMap { Double($0.split(separator: ",")[0]) }.sorted())
        }
        let expected = (0..<(Self.seconds / 2)).map { Double($0 * 2) }
        for (rendition, keyframes) in zip(Self.renditions, times) {
            #expect(keyframes.count == expected.count, "\(rendition.0): one IDR per 2 s GOP")
            let origin = keyframes.first ?? 0
            #expect(zip(keyframes, expected).allSatisfy { abs($0 - origin - $1) < 0.001 }, "\(rendition.0): \(keyframes)")
        }
        #expect(times.allSatisfy { $0 == times[0] }, "the IDR times differ between renditions: \(times)")
    }

    @Test func bandwidthIsThePeakSegmentBitRate() throws {
        let (dir, master, _) = try Self.rendered.get()
        let text = try Self.lines(master)
        #expect(text.prefix(3) == ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"])
        #expect(text.contains { $0.hasPrefix("#EXT-X-MEDIA:TYPE=AUDIO,") && $0.contains(#"URI="audio/index.m3u8""#) })
        let audio = try Self.segments(dir.appendingPathComponent("ladder/audio/index.m3u8").path)
        let audioPeak = audio.map { Double($0.bytes * 8) / $0.seconds }.max()!
        #expect(abs(audio.reduce(0) { $0 + $1.seconds } - Double(Self.seconds)) < 0.05, "the sound lasts the programme")
        for (name, width, height, _) in Self.renditions {
            guard let index = text.firstIndex(of: "\(name)/index.m3u8"), index > 0 else { Issue.record("\(name) is not in the master playlist"); continue }
            let info = text[index - 1]
            let video = try Self.segments(dir.appendingPathComponent("ladder/\(name)/index.m3u8").path)
            #expect(video.count == Self.seconds / 2 && video.allSatisfy { abs($0.seconds - 2) < 1e-6 }, "\(name): 15 segments of 2 s")
            let peak = video.map { Double($0.bytes * 8) / $0.seconds }.max()! + audioPeak
            let bandwidth = Double(info.split(separator: ",").first { $0.hasPrefix("#EXT-X-STREAM-INF:BANDWIDTH=") }!
                .split(separator: "=")[1])!
            #expect(abs(bandwidth - peak) <= 0.1 * peak, "\(name): BANDWIDTH \(bandwidth), measured peak \(peak)")
            #expect(info.contains("AVERAGE-BANDWIDTH=") && info.contains("RESOLUTION=\(width)x\(height)") && info.contains("FRAME-RATE=25.000")
                    && info.contains(#"CODECS="avc1."#) && info.contains(#"mp4a.40.2""#) && info.contains(#"AUDIO="audio""#), "\(info)")
        }
    }

    /// Each rendition against ffmpeg's own bicubic scale of the source, re-coded from the SD
    /// source's BT.601 into the renditions' BT.709: a wrong scaler, size or colour conversion
    /// would cost far more than the encode does at these bit rates.
    @Test func renditionsMatchFFmpegsScaleOfTheSource() throws {
        let (dir, _, _) = try Self.rendered.get()
        let source = dir.appendingPathComponent("src.mov").path
        for (name, width, height, _) in Self.renditions {
            let playlist = dir.appendingPathComponent("ladder/\(name)/index.m3u8").path
            let r = try Media.run("ffmpeg", ["-nostdin", "-i", playlist, "-i", source, "-filter_complex",
                                             "[1:v]scale=\(width):\(height):flags=bicubic,\(Media.bt601ToBT709)[r];[0:v][r]psnr", "-f", "null", "-"])
            let average = r.stderr.components(separatedBy: "average:").last.flatMap { Double($0.prefix { !$0.isWhitespace }) }
            #expect((average ?? 0) >= 32, "\(name): PSNR \(average.map { String($0) } ?? "?") dB against ffmpeg's scale")
        }
    }

    /// A chunk rendered again (after a fault, on another agent) gives the same bytes in every
    /// rendition, so its segments can replace the first render's.
    @Test func aChunkRenderedAgainIsByteIdentical() throws {
        let (dir, _, plan) = try Self.rendered.get()
        let frames = FrameRange(start: 50, end: 100)
        func once(_ tag: String) throws -> [String] {
            let paths = Self.renditions.map { dir.appendingPathComponent("again-\(tag)-\($0.0).mp4").path }
            return try ChunkRenderer.renderLadder(plan, frames: frames, to: paths, encoderThreads: 2).map(\.sha256)
        }
        let first = try once("a"), second = try once("b")
        #expect(first.count == Self.renditions.count && first == second, "\(first) vs \(second)")
    }

    @Test func ffmpegDecodesTheMasterPlaylistAndTheManifest() throws {
        let (dir, master, _) = try Self.rendered.get()
        for input in [master, dir.appendingPathComponent("ladder/manifest.mpd").path] {
            let r = try Media.run("ffmpeg", ["-v", "error", "-i", input, "-map", "0", "-f", "null", "-"], allowFailure: true)
            #expect(r.status == 0 && r.stderr.isEmpty, "\(input): \(r.stderr)")
        }
    }

    /// Scrubbing thumbnails beside the master playlist: a cue per 2 s segment in
    /// `thumbnails.vtt`, each pointing at a tile that is the segment's first frame as ffmpeg
    /// decodes the `low` rendition (160×90, the tile size) — and clearly not the next one's.
    @Test func thumbnailsBesideTheMasterShowEachSegmentsFirstFrame() throws {
        let (dir, _, _) = try Self.rendered.get()
        let folder = dir.appendingPathComponent("ladder")
        let vtt = try Self.lines(folder.appendingPathComponent("thumbnails.vtt").path)
        #expect(vtt.first == "WEBVTT")
        let starts = vtt.filter { $0.contains(" --> ") }.map { String($0.prefix(12)) }
        let targets = vtt.filter { $0.contains("#xywh=") }
        let segments = Self.seconds / 2
        #expect(starts == (0..<segments).map { String(format: "00:00:%02d.000", $0 * 2) })
        try #require(targets.count == segments)

        let (width, height) = (160, 90), frameBytes = 160 * 90 * 3
        let reference = [UInt8](try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", folder.appendingPathComponent("low/index.m3u8").path,
                                                         "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]).stdout)
        try #require(reference.count == Self.seconds * Self.rate * frameBytes)
        var sheets: [String: (width: Int, pixels: [UInt8])] = [:]
        for (index, target) in targets.enumerated() {
            let parts = target.split(separator: "#")
            let name = String(parts[0])
            let xywh = parts[1].dropFirst("xywh=".count).split(separator: ",").compactMap { Int($0) }
            try #require(xywh.count == 4 && xywh[2] == width && xywh[3] == height, "\(target)")
            if sheets[name] == nil {
                let path = folder.appendingPathComponent(name).path
                let probe = try Media.probe(path)
                let sheetWidth = (probe["streams"] as? [[String: Any]])?.first?["width"] as? Int ?? 0
                let pixels = [UInt8](try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]).stdout)
                sheets[name] = (sheetWidth, pixels)
            }
            let sheet = sheets[name]!
            var tile: [UInt8] = []
            for y in 0..<height {
                let row = ((xywh[1] + y) * sheet.width + xywh[0]) * 3
                tile += sheet.pixels[row..<(row + width * 3)]
            }
            // Compared on luma (BT.601 weights): the two RGB conversions upsample 4:2:0 chroma
            // differently, which moves saturated edges' colours by a few levels (about 30 dB in
            // RGB) but not their brightness.
            func luma(_ rgb: some Collection<UInt8>) -> [UInt8] {
                let v = Array(rgb)
                return stride(from: 0, to: v.count, by: 3).map { (i: Int) -> UInt8 in
                    let r = 0.299 * Double(v[i]), g = 0.587 * Double(v[i + 1]), b = 0.114 * Double(v[i + 2])
                    return UInt8((r + g + b).rounded())
                }
            }
            func frame(_ k: Int) -> [UInt8] { luma(reference[(k * frameBytes)..<((k + 1) * frameBytes)]) }
            let first = index * 2 * Self.rate
            let right = Media.psnr(luma(tile), frame(first))
            let wrong = Media.psnr(luma(tile), frame(min(first + 2 * Self.rate, Self.seconds * Self.rate - 1)))
            #expect(right >= 38, "tile \(index) (\(target)): \(right) dB against the segment's first frame")
            if index + 1 < targets.count {
                #expect(right > wrong + 3, "tile \(index): \(right) dB against its frame, \(wrong) dB against the next segment's")
            }
        }
    }
}
