import Foundation
import Testing
import ReelCore
import ReelMedia
import ReelThreadTesting

/// `reel concat --transition`: the wipe, slide and fade it builds, checked on the pixels of
/// chosen frames against where each clip's picture must be, and its sound cross-fade.
@Suite(.blocking) struct TransitionTests {
    /// A: 2 s, its left half red and its right half green, with a 440 Hz tone. B: 2 s of blue
    /// with a 660 Hz tone. 160×120 at 25 fps, so with a 1 s transition the result lasts 3 s and
    /// the transition is frames 25…49: at frame 25 + k it is k/25 of the way.
    static func clips(in dir: URL) throws -> (a: String, b: String) {
        let a = dir.appendingPathComponent("a.mp4").path, b = dir.appendingPathComponent("b.mp4").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=red:s=160x120:r=25:d=2,drawbox=x=80:y=0:w=80:h=120:color=lime:t=fill",
                          "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2",
                          "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", a])
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=blue:s=160x120:r=25:d=2",
                          "-f", "lavfi", "-i", "sine=frequency=660:sample_rate=48000:duration=2",
                          "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", b])
        return (a, b)
    }

    enum Colour: CustomStringConvertible {
        case red, green, blue
        var rgb: (Double, Double, Double) {
            switch self { case .red: (255, 0, 0); case .green: (0, 255, 0); case .blue: (0, 0, 255) }
        }
        var description: String { "\(rgb)" }
    }

    /// The mean RGB of the columns `x0..<x1` over the middle rows of a 160×120 RGB frame.
    static func mean(_ frame: [UInt8], _ x0: Int, _ x1: Int) -> (Double, Double, Double) {
        var sum = (0.0, 0.0, 0.0), n = 0.0
        for y in 20..<100 {
            for x in x0..<x1 {
                let i = (y * 160 + x) * 3
                sum.0 += Double(frame[i]); sum.1 += Double(frame[i + 1]); sum.2 += Double(frame[i + 2]); n += 1
            }
        }
        return (sum.0 / n, sum.1 / n, sum.2 / n)
    }

    static func close(_ a: (Double, Double, Double), _ b: (Double, Double, Double), within tolerance: Double = 20) -> Bool {
        abs(a.0 - b.0) <= tolerance && abs(a.1 - b.1) <= tolerance && abs(a.2 - b.2) <= tolerance
    }

    /// Renders `reel concat a b --transition kind` and returns its RGB frames.
    static func render(_ kind: String, in dir: URL, extra: [String] = []) throws -> (frames: [[UInt8]], path: String) {
        let (a, b) = try clips(in: dir)
        let out = dir.appendingPathComponent("\(kind).mp4").path
        try Media.run(Media.reel, ["concat", a, b, "--transition", kind, "--transition-seconds", "1", "--preset", "highest", "-o", out, "--quiet"] + extra)
        let frames = try Media.rgbFrames(out, width: 160, height: 120)
        #expect(frames.count == 75)
        #expect(try Media.decodeErrors(out).isEmpty)
        return (frames, out)
    }

    /// Checks the spans of frame `k` (each span: columns and the clip colour expected there,
    /// kept 3 px away from any edge).
    static func expect(_ frames: [[UInt8]], _ k: Int, _ spans: [(Int, Int, Colour)], _ what: String) {
        for (x0, x1, colour) in spans {
            let got = mean(frames[k], x0 + 3, x1 - 3)
            #expect(close(got, colour.rgb), "\(what) frame \(k), columns \(x0)..<\(x1): \(got), expected \(colour)")
        }
    }

    @Test func wipeRevealsTheNextClipFromTheLeft() throws {
        let (frames, _) = try Self.render("wipe", in: try Media.tempDirectory())
        Self.expect(frames, 10, [(0, 80, .red), (80, 160, .green)], "before")
        // k/25 of the way the edge is at 6.4·k px: B to its left, A (where it was) to its right.
        Self.expect(frames, 30, [(0, 32, .blue), (32, 80, .red), (80, 160, .green)], "wipe")
        Self.expect(frames, 35, [(0, 64, .blue), (64, 80, .red), (80, 160, .green)], "wipe")
        Self.expect(frames, 45, [(0, 128, .blue), (128, 160, .green)], "wipe")
        Self.expect(frames, 60, [(0, 160, .blue)], "after")
    }

    @Test func slidePushesThePreviousClipOutToTheLeft() throws {
        let (frames, _) = try Self.render("slide", in: try Media.tempDirectory())
        // k/25 of the way both pictures have moved 6.4·k px left: A's column x + 6.4k is on
        // screen at x, and B's left edge is at 160 − 6.4k.
        Self.expect(frames, 30, [(0, 48, .red), (48, 128, .green), (128, 160, .blue)], "slide")
        Self.expect(frames, 35, [(0, 16, .red), (16, 96, .green), (96, 160, .blue)], "slide")
        Self.expect(frames, 45, [(0, 32, .green), (32, 160, .blue)], "slide")
        Self.expect(frames, 60, [(0, 160, .blue)], "after")
    }

    @Test func fadeMixesTheTwoAndTheSoundCrossFades() throws {
        let (frames, out) = try Self.render("fade", in: try Media.tempDirectory())
        // k/25 of the way A's opacity is 1 − k/25 over B.
        for k in [5, 10, 20] {
            let a = 1 - Double(k) / 25
            // A over blue (0, 0, 255) at opacity a.
            func mix(_ c: Colour) -> (Double, Double, Double) {
                let (r, g, b): (Double, Double, Double) = c.rgb
                let under: Double = (1 - a) * 255
                return (a * r, a * g, a * b + under)
            }
            let left = Self.mean(frames[25 + k], 3, 77), right = Self.mean(frames[25 + k], 83, 157)
            #expect(Self.close(left, mix(.red)), "frame \(25 + k): \(left) vs \(mix(.red))")
            #expect(Self.close(right, mix(.green)), "frame \(25 + k): \(right) vs \(mix(.green))")
        }
        // The sound: A's tone alone, then both during the transition, then B's alone.
        let samples = try Media.audioSamples(out, channels: 1)
        let seconds: Double = Double(samples.count) / 48000
        #expect(abs(seconds - 3) <= 0.0214, "audio lasts \(seconds) s")   // ± one AAC frame
        func level(_ hz: Double, at seconds: Double) -> Double {
            let start = Int(seconds * 48000), n = 4800
            var re = 0.0, im = 0.0
            for i in 0..<n {
                let phase: Double = 2 * Double.pi * hz * Double(i) / 48000
                let x = Double(samples[start + i])
                re += x * cos(phase)
                im += x * sin(phase)
            }
            let magnitude: Double = (re * re + im * im).squareRoot()
            return magnitude * 2 / Double(n)
        }
        #expect(level(440, at: 0.4) > 10 * level(660, at: 0.4))
        #expect(level(660, at: 2.5) > 10 * level(440, at: 2.5))
        // Half-way through, each at about half its level (volume ramps 1 → 0 and 0 → 1).
        let outgoing: Double = level(440, at: 1.45) / level(440, at: 0.4)
        let incoming: Double = level(660, at: 1.45) / level(660, at: 2.5)
        #expect(abs(outgoing - 0.5) < 0.1, "outgoing level half-way: \(outgoing)")
        #expect(abs(incoming - 0.5) < 0.1, "incoming level half-way: \(incoming)")
    }

    @Test func transitionsNeedClipsLongEnoughAndPrintTheirComposition() throws {
        let dir = try Media.tempDirectory()
        let (a, b) = try Self.clips(in: dir)
        let short = try Media.run(Media.reel, ["concat", a, b, a, "--transition", "wipe", "--transition-seconds", "1.5", "--print-composition"], allowFailure: true)
        #expect(short.status == 1)
        #expect(short.stderr.contains("shorter than its transitions (3 s)"), "\(short.stderr)")
        let lonely = try Media.run(Media.reel, ["concat", a, "--transition-seconds", "1", "--print-composition"], allowFailure: true)
        #expect(lonely.status != 0 && lonely.stderr.contains("--transition-seconds needs --transition"), "\(lonely.stderr)")

        let printed = try Media.run(Media.reel, ["concat", a, b, a, "--transition", "slide", "--transition-seconds", "0.5", "--print-composition"])
        let json = dir.appendingPathComponent("printed.json").path
        try printed.stdout.write(to: URL(fileURLWithPath: json))
        let validated = try Media.run(Media.reel, ["validate", json])
        #expect(String(decoding: validated.stdout, as: UTF8.self).contains("ok: 160x120, 125 frames"), "\(validated)")
    }
}
