import Foundation
import Testing
import ReelCore
import ReelMedia
import ReelThreadTesting

/// A music bed ducked under a voice (`audioMix[].duck`), rendered to WAV and
/// measured on ffmpeg's decode of the file: the bed's 220 Hz tone, found by correlation over
/// whole periods (the voice's 1 kHz is orthogonal to it there), is 12 ± 1.5 dB quieter while the
/// voice speaks than in the same render without ducking, and within 0.5 dB of it before the
/// voice and once the release is over.
@Suite(.blocking) struct DuckingTests {
    static let rate = 48_000
    /// 0.1 s: 22 periods of 220 Hz and 100 of 1 kHz.
    static let window = 4_800

    static func composition(bed: String, voice: String, duck: String?) -> String {
        let mix = duck.map { #", "audioMix": [{"track": 1, "duck": \#($0)}]"# } ?? ""
        return """
        {"formatVersion": 1, "assets": {"bed": {"url": "\(bed)"}, "voice": {"url": "\(voice)"}},
         "tracks": [{"id": 1, "mediaType": "audio", "segments": [{"asset": "bed", "at": 0}]},
                    {"id": 2, "mediaType": "audio", "segments": [{"asset": "voice", "at": 2}]}],
         "export": {"fileType": "wav", "audio": {"channels": 1}}\(mix)}
        """
    }

    static func samples(_ path: String) throws -> [Float] {
        let r = try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "f32le", "-ac", "1", "-ar", "48000", "-"])
        return r.stdout.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// The amplitude of the `hertz` tone in `window` samples from `start`.
    static func amplitude(_ x: [Float], _ hertz: Double = 220, from start: Int) -> Double {
        var c = 0.0, s = 0.0
        for n in start..<(start + window) {
            let phase = 2 * Double.pi * hertz * Double(n) / Double(rate)
            c += Double(x[n]) * cos(phase); s += Double(x[n]) * sin(phase)
        }
        return 2 * (c * c + s * s).squareRoot() / Double(window)
    }

    @Test func theBedDipsByTheAmountWhileTheVoiceSpeaksAndComesBack() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bed = dir.appendingPathComponent("bed.wav").path, voice = dir.appendingPathComponent("voice.wav").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=0.1*sin(2*PI*220*t):s=48000:d=6", "-c:a", "pcm_f32le", bed])
        try Media.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=0.3*sin(2*PI*1000*t):s=48000:d=2", "-c:a", "pcm_f32le", voice])

        let duck = #"{"under": [2], "amount": 12, "threshold": -40, "attack": 0.05, "release": 0.3}"#
        let (ducked, plan) = try Fixtures.render(Self.composition(bed: bed, voice: voice, duck: duck), in: dir, name: "ducked.wav")
        let (plain, _) = try Fixtures.render(Self.composition(bed: bed, voice: voice, duck: nil), in: dir, name: "plain.wav")
        let d = try Self.samples(ducked), p = try Self.samples(plain)
        #expect(d.count == 6 * Self.rate && p.count == 6 * Self.rate, "\(d.count), \(p.count) samples")
        guard d.count >= 6 * Self.rate, p.count >= 6 * Self.rate else { return }

        func dip(at seconds: Double) -> Double {
            let start = Int(seconds * Double(Self.rate))
            return 20 * log10(Self.amplitude(d, from: start) / Self.amplitude(p, from: start))
        }
        // Before the voice (the dip may start at most one 10 ms window early).
        for t in stride(from: 0.1, through: 1.8, by: 0.1) { #expect(abs(dip(at: t)) <= 0.5, "at \(t) s: \(dip(at: t)) dB") }
        // While it speaks, after the 50 ms attack.
        for t in stride(from: 2.1, through: 3.8, by: 0.1) { #expect(abs(dip(at: t) + 12) <= 1.5, "at \(t) s: \(dip(at: t)) dB") }
        // Once the 300 ms release after 4 s is over.
        for t in stride(from: 4.35, through: 5.85, by: 0.1) { #expect(abs(dip(at: t)) <= 0.5, "at \(t) s: \(dip(at: t)) dB") }
        // The voice itself is untouched: its 1 kHz tone is as loud in both renders.
        let voiceDucked = Self.amplitude(d, 1000, from: 3 * Self.rate), voicePlain = Self.amplitude(p, 1000, from: 3 * Self.rate)
        #expect(voicePlain > 0.25 && abs(20 * log10(voiceDucked / voicePlain)) < 0.05, "voice \(voiceDucked) against \(voicePlain)")

        // Any block split of the mix gives the same samples (chunking cannot change the envelope).
        let whole = try Self.mix(plan, blocks: [Int(AudioMixer(plan: plan).sampleCount)])
        let pieces = try Self.mix(plan, blocks: Array(repeating: 1_237, count: 6 * Self.rate / 1_237) + [6 * Self.rate % 1_237])
        #expect(whole == pieces, "a split mix differs from the whole one")
    }

    /// The mix's sample bits, mixed in consecutive blocks of the given sizes by one mixer.
    static func mix(_ plan: RenderPlan, blocks: [Int]) throws -> [UInt32] {
        let mixer = AudioMixer(plan: plan)
        var out: [UInt32] = []
        var start: Int64 = 0
        for count in blocks where count > 0 {
            let buffers = (0..<mixer.channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: count) }
            defer { buffers.forEach { $0.deallocate() } }
            try mixer.mix(start: start, count: count, into: buffers)
            out += UnsafeBufferPointer(start: buffers[0], count: count).map(\.bitPattern)
            start += Int64(count)
        }
        return out
    }
}
