import Foundation
import Testing
import ReelCore
import ReelMedia
import ReelThreadTesting

/// Speed changes (`scaleTimeRange`) as rendered: every output frame is the source frame ffmpeg
/// decodes at the source time the speed gives, and each part has the frames its composition
/// duration gives.
@Suite(.blocking) struct SpeedRenderTests {
    /// Source: the numbered clip (frame n has luma 16 + 4n), 25 fps, 2 s. Timeline at 25 fps:
    /// [0, 0.8) plays source 0.2…1.8 at 2×, [0.8, 1.6) plays source 0…0.4 at 0.5×, then
    /// [1.6, 2) plays source 1…1.4 at 1×.
    @Test func doubleSpeedHalvesAndHalfSpeedDoublesTheFramesEachTheRightSourceFrame() throws {
        let dir = try Media.tempDirectory()
        let clip = try Fixtures.numberedClip(in: dir)
        let json = """
            {"formatVersion": 1, "assets": {"n": {"url": "\(clip)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [
                {"asset": "n", "at": 0, "sourceRange": {"start": 0.2, "duration": 1.6}, "duration": 0.8},
                {"asset": "n", "at": 0.8, "sourceRange": {"start": 0, "duration": 0.4}, "duration": 0.8},
                {"asset": "n", "at": 1.6, "sourceRange": {"start": 1, "duration": 0.4}}]}],
             "videoComposition": {"frameDuration": "1/25"},
             "export": {"preset": "highest", "video": {"crf": 4, "gopDuration": 0.4}}}
            """
        let (out, plan) = try Fixtures.render(json, in: dir, workers: 2, chunkSeconds: Rational(2, 5))
        #expect(plan.frameCount == 50)
        let frames = try Media.lumaFrames(out, width: 64, height: 48)
        #expect(frames.count == 50)
        let source = try Media.lumaFrames(clip, width: 64, height: 48)
        #expect(source.count == 50)

        // The source frame each output frame must show: the last one at or before
        // start + (t − at)·speed, computed here in integers of 1/25 s.
        func expectedSourceFrame(_ k: Int) -> Int {
            switch k {
            case 0..<20: return 5 + 2 * k                 // 0.2 s + 2·k/25
            case 20..<40: return (k - 20) / 2             // (k − 20)/50 s
            default: return 25 + (k - 40)                 // 1 s + (k − 40)/25
            }
        }
        var shown: [Int] = []
        for (k, frame) in frames.enumerated() {
            let want = expectedSourceFrame(k)
            let psnr = Media.psnr(frame, source[want])
            #expect(psnr >= 40, "output frame \(k): PSNR \(psnr) dB against source frame \(want)")
            // The picture also names its own frame: luma 16 + 4n.
            let n = Int(((Media.mean(frame, width: 64, x: 0, y: 0, w: 64, h: 48) - 16) / 4).rounded())
            shown.append(n)
        }
        // 2×: 20 output frames show every second source frame of 40; 0.5×: 10 source frames twice each.
        #expect(Array(shown[0..<20]) == Array(stride(from: 5, to: 45, by: 2)))
        #expect(Array(shown[20..<40]) == (0..<10).flatMap { [$0, $0] })
        #expect(Array(shown[40..<50]) == Array(25..<35))
        #expect(try Media.decodeErrors(out).isEmpty)
    }

    /// The sound of a 2× segment: `"spectral"` keeps a 440 Hz tone at 440 Hz, `"varispeed"`
    /// raises it to 880 Hz; either way the segment lasts exactly its duration. Frequencies are
    /// counted from zero crossings of the samples ffmpeg decodes from the output.
    @Test(arguments: [("spectral", 440.0), ("varispeed", 880.0), (nil, 440.0)] as [(String?, Double)])
    func doubleSpeedAudioKeepsOrRaisesThePitch(algorithm: String?, hertz: Double) throws {
        let dir = try Media.tempDirectory()
        let clip = try Fixtures.numberedClip(in: dir, seconds: 2)
        let tone = dir.appendingPathComponent("tone.wav").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=5", "-ac", "2", "-c:a", "pcm_s16le", tone])
        let mix = algorithm.map { #", "audioMix": [{"track": 2, "audioTimePitchAlgorithm": "\#($0)"}]"# } ?? ""
        // 4 s of tone from 0.5 s played in 2 s, as the last 2 s of a 2.5 s composition.
        let json = """
            {"formatVersion": 1, "assets": {"n": {"url": "\(clip)"}, "t": {"url": "\(tone)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [
                  {"asset": "n", "at": 0, "sourceRange": {"start": 0, "duration": 2}},
                  {"asset": "n", "at": 2, "sourceRange": {"start": 0, "duration": 0.5}}]},
                {"id": 2, "mediaType": "audio", "segments": [
                  {"asset": "t", "at": 0.5, "sourceRange": {"start": 0.5, "duration": 4}, "duration": 2}]}]\(mix),
             "videoComposition": {"frameDuration": "1/25"}}
            """
        let (out, plan) = try Fixtures.render(json, in: dir, workers: 2, chunkSeconds: Rational(1, 2))
        #expect(plan.audioTracks[0].segments[0].speed == Rational(2))

        // The mixer gives exactly the segment's samples, the same whatever the block size.
        let whole = try Self.mixed(plan, block: 120_000)
        #expect(whole[0].count == 120_000)
        #expect(try Self.mixed(plan, block: 1_000) == whole)
        #expect(Media.rms(whole[0][0..<24_000]) == 0)                          // silent before 0.5 s
        #expect(Media.rms(whole[0][24_100..<119_900]) > 0.06)                  // the tone (amplitude 1/8) through 2.5 s
        #expect(abs(Self.frequency(whole[0][24_000 + 4_800 ..< 120_000 - 4_800]) - hertz) <= hertz * 0.02)

        // As decoded from the file: 2.5 s of sound (± one AAC frame) at the pitch.
        let samples = try Media.audioSamples(out, channels: 1)
        let seconds = Double(samples.count) / 48000
        #expect(abs(seconds - 2.5) <= 0.0214, "audio lasts \(seconds) s")
        let measured = Self.frequency(samples[Int(0.7 * 48000) ..< Int(2.3 * 48000)])
        #expect(abs(measured - hertz) <= hertz * 0.02, "\(algorithm ?? "default"): \(measured) Hz, expected \(hertz) Hz")
        #expect(Media.rms(samples[0 ..< Int(0.45 * 48000)]) < 1e-3)
    }

    /// Channel planes of the whole mix, mixed in blocks of `block` samples.
    static func mixed(_ plan: RenderPlan, block: Int) throws -> [[Float]] {
        let mixer = AudioMixer(plan: plan)
        let buffers = (0..<mixer.channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: block) }
        defer { buffers.forEach { $0.deallocate() } }
        var out = Array(repeating: [Float](), count: mixer.channels)
        var start: Int64 = 0
        while start < mixer.sampleCount {
            let n = Int(min(Int64(block), mixer.sampleCount - start))
            try mixer.mix(start: start, count: n, into: buffers)
            for ch in 0..<mixer.channels { out[ch].append(contentsOf: UnsafeBufferPointer(start: buffers[ch], count: n)) }
            start += Int64(n)
        }
        return out
    }

    /// A tone's frequency from its zero crossings, located to a fraction of a sample by linear
    /// interpolation: (crossings between the first and the last) / 2 / the time between them.
    static func frequency(_ samples: ArraySlice<Float>) -> Double {
        var crossings: [Double] = []
        var i = samples.startIndex
        while i + 1 < samples.endIndex {
            let a = Double(samples[i]), b = Double(samples[i + 1])
            if (a < 0) != (b < 0) { crossings.append(Double(i) + a / (a - b)) }
            i += 1
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 2 else { return 0 }
        return Double(crossings.count - 1) / 2 / ((last - first) / 48000)
    }
}
