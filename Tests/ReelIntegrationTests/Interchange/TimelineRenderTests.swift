import Foundation
import Testing
@testable import ReelCore
import ReelThreadTesting

/// Editors' timelines rendered end to end (docs/interchange.md): timelines written by
/// OpenTimelineIO's own Python library and adapters (make_timelines.py), rendered by `reel
/// render --in-process`, and every output frame compared with the source frame the timeline
/// says, as ffmpeg extracts it.
@Suite(.blocking) struct TimelineRenderTests {
    static let width = 160, height = 90

    /// Three 3 s, 24 fps sources whose every frame differs from its neighbours (lavfi test
    /// patterns with a running counter), each with its own tone: a 440 Hz, b 880 Hz, c 1320 Hz.
    static func makeMedia(in dir: URL) throws {
        let pictures = ["a": "testsrc2=s=160x90:r=24:d=3", "b": "testsrc=s=160x90:r=24:d=3", "c": "testsrc2=s=160x90:r=24:d=3,negate"]
        let tones = ["a": 440, "b": 880, "c": 1320]
        for name in ["a", "b", "c"] {
            try Media.ffmpeg(["-f", "lavfi", "-i", pictures[name]!, "-f", "lavfi", "-i", "sine=frequency=\(tones[name]!):sample_rate=48000:duration=3",
                              "-c:v", "libx264", "-qp", "0", "-g", "12", "-bf", "2", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest",
                              dir.appendingPathComponent("\(name).mp4").path])
        }
    }

    /// Media, then the timelines OTIO writes for it.
    static func workspace() throws -> URL {
        let dir = try Media.tempDirectory()
        try makeMedia(in: dir)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("make_timelines.py").path
        try Media.run("/usr/bin/env", ["python3", script, dir.path])
        return dir
    }

    static func render(_ input: String, in dir: URL, _ output: String, _ extra: [String] = []) throws -> String {
        let out = dir.appendingPathComponent(output).path
        try Media.run(Media.reel, ["render", dir.appendingPathComponent(input).path, "-o", out, "--in-process", "--quiet"] + extra)
        return out
    }

    /// What one output frame must show: a source frame, a dissolve of two, or black.
    enum Shown {
        case frame(String, Int)
        case mix(String, Int, String, Int, Double)
        case black
    }

    /// The cut's picture track V1, as make_timelines.py builds it: A from frame 12 (30 frames),
    /// a 6+6 frame dissolve into B from frame 24 (24 frames), 12 frames of gap, C from 0 (18).
    static func v1(_ k: Int, dissolve: Bool = true) -> Shown {
        if !dissolve {
            switch k {
            case ..<30: return .frame("a", 12 + k)
            case ..<54: return .frame("b", 24 + k - 30)
            case ..<66: return .black
            default: return .frame("c", k - 66)
            }
        }
        switch k {
        case ..<24: return .frame("a", 12 + k)
        case ..<36: return .mix("a", 12 + k, "b", 18 + k - 24, Double(k - 24) / 12)
        case ..<54: return .frame("b", 24 + k - 30)
        case ..<66: return .black
        default: return .frame("c", k - 66)
        }
    }

    /// Checks every frame of `output` against `expected`. A single source frame must match its
    /// own frame better than either neighbour, so an off-by-one frame cannot pass.
    static func expectFrames(_ output: String, count: Int, dir: URL, _ expected: (Int) -> Shown) throws {
        let frames = try Media.rgbFrames(output, width: width, height: height)
        #expect(frames.count == count, "\(output): \(frames.count) frames, expected \(count)")
        var sources: [String: [[UInt8]]] = [:]
        for name in ["a", "b", "c"] {  // 160×90: read as BT.601, shown in the output's BT.709
            sources[name] = try Media.rgbFrames(dir.appendingPathComponent("\(name).mp4").path, width: width, height: height,
                                                filter: Media.sdSourceAsBT709RGB)
        }
        let black = [UInt8](repeating: 0, count: width * height * 3)
        for (k, frame) in frames.enumerated().prefix(count) {
            switch expected(k) {
            case .black:
                #expect(Media.psnr(frame, black) >= 40, "frame \(k) should be black")
            case .frame(let name, let n):
                let source = sources[name]!
                let own = Media.psnr(frame, source[n])
                #expect(own >= 30, "frame \(k): \(own) dB against \(name) frame \(n)")
                // Compared where the two source frames differ (by more than 4 of 255): testsrc's
                // neighbouring frames differ in about 1,900 of its 43,200 samples, by at most 15,
                // so over the whole picture the encoder's noise hides which one is shown (a 0.7 dB
                // gap at default quality); where they differ, the shown one is 1.8 dB nearer or more.
                for m in [n - 1, n + 1] where source.indices.contains(m) {
                    let differing = source[n].indices.filter { abs(Int(source[n][$0]) - Int(source[m][$0])) > 4 }
                    guard differing.count >= 100 else { continue }  // identical frames: nothing to tell apart
                    let shown = differing.map { frame[$0] }
                    let ownHere = Media.psnr(shown, differing.map { source[n][$0] }), other = Media.psnr(shown, differing.map { source[m][$0] })
                    #expect(ownHere > other + 1,
                            "frame \(k) matches \(name) frame \(m) (\(other) dB) as well as frame \(n) (\(ownHere) dB) where they differ (\(differing.count) samples)")
                }
            case .mix(let a, let m, let b, let n, let alpha):
                let x = sources[a]![m], y = sources[b]![n]
                let mixed = zip(x, y).map { UInt8((Double($0) * (1 - alpha) + Double($1) * alpha).rounded()) }
                let psnr = Media.psnr(frame, mixed)
                #expect(psnr >= 30, "frame \(k): \(psnr) dB against \(1 - alpha)·\(a)[\(m)] + \(alpha)·\(b)[\(n)]")
            }
        }
    }

    /// The dominant frequency of channel 0 over `[from, to)` seconds, from zero crossings.
    static func frequency(_ samples: [Float], from: Double, to: Double) -> Double {
        let start = Int(from * 48000) * 2, end = Int(to * 48000) * 2
        var crossings = 0
        var i = start
        while i + 2 < end {
            if (samples[i] < 0) != (samples[i + 2] < 0) { crossings += 1 }
            i += 2
        }
        return Double(crossings) / 2 / (to - from)
    }

    @Test func anOTIOCutRendersTheFramesAndSoundItSays() throws {
        let dir = try Self.workspace()
        let out = try Self.render("cut.otio", in: dir, "cut.mp4")
        // V2 (above V1) shows A from frame 50 over frames 40…49.
        try Self.expectFrames(out, count: 84, dir: dir) { k in (40..<50).contains(k) ? .frame("a", 50 + k - 40) : Self.v1(k) }
        let samples = try Media.audioSamples(out)
        #expect(abs(Double(samples.count / 2) / 48000 - 3.5) <= 1024.0 / 48000)
        #expect(abs(Self.frequency(samples, from: 0.1, to: 1.1) - 440) < 10)     // A's sound (frames 0…29)
        #expect(abs(Self.frequency(samples, from: 1.4, to: 2.2) - 880) < 10)     // B's sound (frames 30…53)
        #expect(Media.rms(samples[(Int(2.4 * 48000) * 2)..<(Int(3.4 * 48000) * 2)]) < 1e-3) // nothing after 2.25 s
        #expect(try Media.decodeErrors(out).isEmpty)
    }

    @Test func validateListsMarkersAsIgnored() throws {
        let dir = try Self.workspace()
        let r = try Media.run(Media.reel, ["validate", dir.appendingPathComponent("cut.otio").path])
        #expect(String(decoding: r.stdout, as: UTF8.self).hasPrefix("ok: 160x90, 84 frames of 0.041667 s (1/24)"))
        #expect(r.stderr.contains(#"warning: tracks.children[0].children[0].markers[0]: marker "check focus""#))
    }

    @Test func anImportedCompositionRendersLikeTheTimeline() throws {
        let dir = try Self.workspace()
        let json = dir.appendingPathComponent("cut.json").path
        try Media.run(Media.reel, ["import", dir.appendingPathComponent("cut.otio").path, "-o", json])
        let composition = try Composition.parse(Array(try Data(contentsOf: URL(fileURLWithPath: json))))
        #expect(composition.tracks.map(\.mediaType) == [.video, .video, .video, .audio])
        let direct = try Self.render("cut.otio", in: dir, "direct.mp4")
        let imported = try Self.render("cut.json", in: dir, "imported.mp4")
        #expect(try Self.packets(direct, stream: "v") == Self.packets(imported, stream: "v"))
        #expect(try Self.packets(direct, stream: "a") == Self.packets(imported, stream: "a"))
    }

    /// warp.otio: A's frames 0…11, then B from frame 0 at twice its speed for 24 frames.
    @Test func aLinearTimeWarpClipRendersAtItsSpeed() throws {
        let dir = try Self.workspace()
        let out = try Self.render("warp.otio", in: dir, "warp.mp4", ["--chunk-seconds", "0.5"])
        try Self.expectFrames(out, count: 36, dir: dir) { k in k < 12 ? .frame("a", k) : .frame("b", 2 * (k - 12)) }
        #expect(try Media.framePTS(out).count == 36)
        #expect(try Media.decodeErrors(out).isEmpty)
    }

    /// An EDL's M2 lines: 48 fps over the list's 24 is 2×, 12 fps is 0.5×.
    @Test func anEDLM2EventRendersAtItsSpeed() throws {
        let dir = try Self.workspace()
        let edl = """
            TITLE: speed
            FCM: NON-DROP FRAME

            001  a        V     C        00:00:00:00 00:00:00:12 00:00:00:00 00:00:00:12
            * FROM CLIP NAME:  a.mp4
            002  b        V     C        00:00:00:06 00:00:01:06 00:00:00:12 00:00:01:00
            M2   b        048.0                00:00:00:06
            * FROM CLIP NAME:  b.mp4
            003  c        V     C        00:00:00:10 00:00:00:16 00:00:01:00 00:00:01:12
            M2   c        012.0                00:00:00:10
            * FROM CLIP NAME:  c.mp4

            """
        try edl.write(to: dir.appendingPathComponent("speed.edl"), atomically: true, encoding: .utf8)
        let out = try Self.render("speed.edl", in: dir, "speed.mp4", ["--fps", "24", "--chunk-seconds", "0.5"])
        try Self.expectFrames(out, count: 36, dir: dir) { k in
            switch k {
            case ..<12: return .frame("a", k)
            case ..<24: return .frame("b", 6 + 2 * (k - 12))
            default: return .frame("c", 10 + (k - 24) / 2)
            }
        }
        #expect(try Media.decodeErrors(out).isEmpty)
    }

    @Test func anEDLFromOTIOsAdapterRendersTheSamePacketsAsTheOTIO() throws {
        let dir = try Self.workspace()
        let fromOTIO = try Self.render("single.otio", in: dir, "single-otio.mp4")
        let fromEDL = try Self.render("single.edl", in: dir, "single-edl.mp4", ["--fps", "24"])
        try Self.expectFrames(fromEDL, count: 84, dir: dir) { Self.v1($0) }
        #expect(try Self.packets(fromEDL, stream: "v") == Self.packets(fromOTIO, stream: "v"))
        // Without --fps the list's rate is unknown.
        let r = try Media.run(Media.reel, ["validate", dir.appendingPathComponent("single.edl").path], allowFailure: true)
        #expect(r.status == 1 && r.stderr.contains("an EDL does not say its frame rate: give it with --fps"))
    }

    /// Final Cut Pro X XML reaches Reel through OTIO's adapter: FCPXML (written by OTIO from a
    /// timeline) → `otioconvert` → `.otio` → `reel render`.
    @Test func fcpxmlRendersThroughOtioconvert() throws {
        let dir = try Self.workspace()
        let converted = dir.appendingPathComponent("fcpx.otio").path
        try Media.run("/usr/bin/env", ["otioconvert", "-i", dir.appendingPathComponent("fcpx.fcpxml").path, "-o", converted])
        let out = try Self.render("fcpx.otio", in: dir, "fcpx.mp4")
        try Self.expectFrames(out, count: 84, dir: dir) { Self.v1($0, dissolve: false) }
    }

    /// Each packet's checksum and timestamps, as ffmpeg's framemd5 lists them.
    static func packets(_ path: String, stream: String) throws -> [String] {
        let r = try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:\(stream):0", "-c", "copy", "-f", "framemd5", "-"])
        return String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }
}
