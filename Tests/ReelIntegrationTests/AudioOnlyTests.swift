import Foundation
import Testing
import ReelCore
import ReelMedia
import ReelThreadTesting

/// Sound-only outputs. Two audio files merged into one M4A or WAV, checked sample by
/// sample against the sources as ffmpeg decodes them: exact length, no gap, no click at the join.
@Suite(.blocking) struct AudioOnlyTests {
    static let rate = 48_000
    /// The sources' lengths in samples: 1.5 s of 500 Hz and 1.75 s of 750 Hz, each a whole
    /// number of periods, so the joined signal is continuous (a jump at the join would be Reel's).
    static let first = 72_000, second = 84_000
    static var total: Int { first + second }

    /// Two mono 16-bit WAV sine files at 48 kHz.
    static func sources(in dir: URL) throws -> (a: String, b: String) {
        let a = dir.appendingPathComponent("a.wav").path, b = dir.appendingPathComponent("b.wav").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=500:sample_rate=48000:duration=1.5", "-c:a", "pcm_s16le", a])
        try Media.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=750:sample_rate=48000:duration=1.75", "-c:a", "pcm_s16le", b])
        return (a, b)
    }

    /// One audio track: `a` whole at 0, `b` whole right after it; mono output at 48 kHz.
    static func composition(_ a: String, _ b: String, export: String = "{}") -> String {
        """
        {"formatVersion": 1, "assets": {"a": {"url": "\(a)"}, "b": {"url": "\(b)"}},
         "tracks": [{"id": 1, "mediaType": "audio", "segments": [{"asset": "a", "at": 0}, {"asset": "b", "at": 1.5}]}],
         "export": \(export)}
        """
    }

    /// 16-bit samples of the first audio stream as ffmpeg decodes it (mono, 48 kHz, no resampling
    /// of 48 kHz sources).
    static func samples(_ path: String) throws -> [Int16] {
        let r = try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-f", "s16le", "-ac", "1", "-ar", "48000", "-"])
        return r.stdout.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// What the merge must sound like: the two sources back to back.
    static func reference(_ a: String, _ b: String) throws -> [Int16] {
        let joined = try samples(a) + samples(b)
        #expect(joined.count == total, "the sources have \(joined.count) samples")
        return joined
    }

    static func streams(_ path: String) throws -> [[String: Any]] {
        try Media.probe(path)["streams"] as? [[String: Any]] ?? []
    }

    /// The largest step between neighbouring samples within `radius` of the join, against the
    /// largest step of the 750 Hz tone well after it: a click is a step far above the tone's.
    static func joinStep(_ s: [Int16], radius: Int = 2048) -> (atJoin: Int, tone: Int) {
        func steps(_ range: Range<Int>) -> Int { range.dropLast().map { abs(Int(s[$0 + 1]) - Int(s[$0])) }.max() ?? 0 }
        return (steps((first - radius)..<(first + radius)), steps((first + 20_000)..<(first + 40_000)))
    }

    @Test func twoMergedAudioFilesMakeAnM4AOfTheExactLengthWithASeamlessJoin() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (a, b) = try Self.sources(in: dir)
        let reference = try Self.reference(a, b)
        // No video track, no container named: sound only, M4A, AAC; no render size needed.
        let (out, plan) = try Fixtures.render(Self.composition(a, b, export: #"{"audio": {"channels": 1}}"#), in: dir, name: "merged.m4a")
        #expect(!plan.hasPicture && plan.export.fileType == .m4a && plan.export.audio.codec == "aac")

        let streams = try Self.streams(out)
        #expect(streams.count == 1 && streams.first?["codec_type"] as? String == "audio" && streams.first?["codec_name"] as? String == "aac",
                "\(streams)")
        let audio = try #require(streams.first)
        // Exactly 3.25 s: the edit list hides AAC's priming and the last frame's padding.
        #expect(audio["duration_ts"] as? Int == Self.total && Double(audio["start_time"] as? String ?? "") == 0, "\(audio)")
        let format = try Media.probe(out)["format"] as? [String: Any]
        #expect((format?["tags"] as? [String: Any])?["major_brand"] as? String == "M4A ", "an M4A, as AVFoundation writes: \(String(describing: format))")
        #expect(try Media.decodeErrors(out).isEmpty)

        // ffmpeg's decoder honours the priming edit but keeps the last frame's padding.
        let decoded = try Self.samples(out)
        #expect(decoded.count >= Self.total && decoded.count < Self.total + 1024, "\(decoded.count) samples")
        // Sample for sample against the sources, in 512-sample blocks: AAC at 192 kbit/s is
        // close everywhere (a gap or a shift would put the two out of phase: errors near full
        // amplitude), and the blocks at the join are no worse than a typical block.
        let blocks = stride(from: 0, to: Self.total - 512, by: 512).map { start in
            (start, Media.rms(ArraySlice((start..<(start + 512)).map { Float(Int(decoded[$0]) - Int(reference[$0])) / 32768 })))
        }
        let signal = Media.rms(ArraySlice(reference.map { Float($0) / 32768 }))
        let worst = blocks.max { $0.1 < $1.1 }!
        let median = blocks.map(\.1).sorted()[blocks.count / 2]
        let atJoin = blocks.filter { abs($0.0 + 256 - Self.first) <= 768 }.map(\.1).max()!
        print("merged.m4a: signal RMS \(signal); error per 512-sample block: median \(median), at the join \(atJoin), "
              + "worst \(worst.1) at sample \(worst.0)")
        #expect(worst.1 < signal / 20, "block at \(worst.0) differs by \(worst.1) (signal \(signal))")
        #expect(atJoin < 2 * median, "the join's blocks differ by \(atJoin), a typical block by \(median)")
        let step = Self.joinStep(decoded)
        #expect(Double(step.atJoin) <= Double(step.tone) * 1.2, "a step of \(step.atJoin) at the join; the tone's largest is \(step.tone)")
    }

    @Test func renderToWAVIsTheSourcesSampleForSample() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (a, b) = try Self.sources(in: dir)
        let reference = try Self.reference(a, b)
        let json = dir.appendingPathComponent("merge.json").path
        try Self.composition(a, b, export: #"{"audio": {"channels": 1}}"#).write(toFile: json, atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent("merged.wav").path
        let r = try Media.run(Media.reel, ["render", json, "-o", out, "--in-process", "--quiet"])
        #expect(String(decoding: r.stdout, as: UTF8.self).contains("sound only (WAV, pcm)"), "\(String(decoding: r.stdout, as: UTF8.self))")

        let streams = try Self.streams(out)
        #expect(streams.count == 1 && streams.first?["codec_name"] as? String == "pcm_s16le", "\(streams)")
        #expect(try Media.decodeErrors(out).isEmpty)
        // 16-bit in, gain 1, 16-bit out: nothing may change, not one sample.
        let decoded = try Self.samples(out)
        #expect(decoded.count == Self.total)
        #expect(decoded == reference, "the WAV differs from the sources at \(zip(decoded, reference).enumerated().first { $0.1.0 != $0.1.1 }?.offset ?? -1)")
    }

    @Test func concatJoinsAudioFilesAndAVideoNameEndingM4AKeepsOnlyTheSound() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (a, b) = try Self.sources(in: dir)
        let joined = dir.appendingPathComponent("joined.m4a").path
        let r = try Media.run(Media.reel, ["concat", a, b, "-o", joined, "--quiet"])
        #expect(r.status == 0)
        let streams = try Self.streams(joined)
        #expect(streams.count == 1 && streams.first?["codec_name"] as? String == "aac" && streams.first?["duration_ts"] as? Int == Self.total,
                "\(streams)")
        // Both sources are mono: concat's stereo output carries the tone in both channels.
        let step = Self.joinStep(try Self.samples(joined))
        #expect(Double(step.atJoin) <= Double(step.tone) * 1.2, "a step of \(step.atJoin) at the join; the tone's largest is \(step.tone)")

        // A clip and an audio file: concat says which it joins.
        let clip = try Fixtures.numberedClip(in: dir)
        let mixed = try Media.run(Media.reel, ["concat", clip, a, "-o", dir.appendingPathComponent("mixed.mp4").path], allowFailure: true)
        #expect(mixed.status == 1 && mixed.stderr.contains("has no video track: concat joins either clips or audio files, not both"), "\(mixed.stderr)")

        // A video composition rendered to a .m4a name: its sound alone, no picture, no chunks.
        let movie = dir.appendingPathComponent("movie.mp4").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=2", "-f", "lavfi", "-i", "sine=frequency=500:sample_rate=48000:duration=2",
                          "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", movie])
        let json = dir.appendingPathComponent("movie.json").path
        try """
            {"formatVersion": 1, "assets": {"m": {"url": "\(movie)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "m", "at": 0}]},
                        {"id": 2, "mediaType": "audio", "segments": [{"asset": "m", "at": 0}]}]}
            """.write(toFile: json, atomically: true, encoding: .utf8)
        let sound = dir.appendingPathComponent("sound.m4a").path
        try Media.run(Media.reel, ["render", json, "-o", sound, "--in-process", "--quiet"])
        let soundStreams = try Self.streams(sound)
        #expect(soundStreams.map { $0["codec_type"] as? String } == ["audio"], "\(soundStreams)")
        #expect(try Media.decodeErrors(sound).isEmpty)
        // And a composition without sound cannot become an M4A.
        let silent = dir.appendingPathComponent("silent.json").path
        try """
            {"formatVersion": 1, "assets": {"m": {"url": "\(movie)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "m", "at": 0}]}]}
            """.write(toFile: silent, atomically: true, encoding: .utf8)
        let refused = try Media.run(Media.reel, ["render", silent, "-o", dir.appendingPathComponent("silent.m4a").path, "--in-process"], allowFailure: true)
        #expect(refused.status == 1 && refused.stderr.contains("tracks: an M4A output holds sound only, but no track is an audio track"), "\(refused.stderr)")
    }
}
