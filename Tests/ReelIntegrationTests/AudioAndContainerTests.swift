import Foundation
import Testing
import ReelCore
import ReelMedia
import ReelThreadTesting

/// docs/output-guarantees.md 2–3: audio length, start, format, volume ramps; clean decode; index first.
@Suite(.blocking) struct AudioAndContainerTests {
    @Test func volumeRampHalvesTheLevelHalfWayAndAudioSpansTheComposition() throws {
        let dir = try Media.tempDirectory()
        let tone = dir.appendingPathComponent("tone.m4a").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=44100:duration=5", "-c:a", "aac", "-b:a", "192k", tone])
        let video = dir.appendingPathComponent("v.mp4").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=gray:s=64x48:r=25:d=4", "-c:v", "libx264", "-pix_fmt", "yuv420p", video])

        let (out, plan) = try Fixtures.render("""
            {"formatVersion": 1,
             "assets": {"v": {"url": "\(video)"}, "tone": {"url": "\(tone)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "v", "at": 0}]},
                        {"id": 2, "mediaType": "audio", "segments": [{"asset": "tone", "sourceRange": {"start": 0.5, "duration": 4}, "at": 0}]}],
             "audioMix": [{"track": 2, "volume": 1, "volumeRamps": [{"from": 1, "to": 0, "timeRange": {"start": 1, "duration": 2}}]}],
             "export": {"preset": "medium", "optimizeForNetworkUse": true}}
            """, in: dir)
        #expect(plan.duration == Rational(4))

        let probe = try Media.probe(out)
        let audio = try #require(Media.stream(probe, type: "audio"))
        #expect(audio["sample_rate"] as? String == "48000")
        #expect(audio["channels"] as? Int == 2)
        #expect(Double(audio["start_time"] as? String ?? "") == 0)
        let duration = Double(audio["duration"] as? String ?? "") ?? 0
        #expect(abs(duration - 4) <= 1024.0 / 48000 + 1e-6, "audio lasts \(duration) s, composition 4 s")

        let samples = try Media.audioSamples(out)   // interleaved stereo, 48 kHz
        func level(_ from: Double, _ to: Double) -> Double {
            Media.rms(samples[(Int(from * 48000) * 2)..<(Int(to * 48000) * 2)])
        }
        let full = level(0.2, 0.8)
        #expect(full > 0.05, "the tone should be audible before the ramp")
        let half = level(1.98, 2.02)
        #expect(abs(half / full - 0.5) < 0.05, "level half-way through the ramp is \(half / full) of full")
        #expect(abs(level(1.48, 1.52) / full - 0.75) < 0.05)
        #expect(level(3.1, 3.9) < full * 0.01, "after the ramp the volume holds at 0")
        #expect(try Media.decodeErrors(out).isEmpty)

        // optimizeForNetworkUse: the index (moov) precedes the media data (mdat).
        let boxes = try Fixtures.topLevelBoxes(out)
        let moov = try #require(boxes.first { $0.type == "moov" }?.offset)
        let mdat = try #require(boxes.first { $0.type == "mdat" }?.offset)
        #expect(moov < mdat)
    }

    @Test func gapsInAudioAreSilenceAndSurroundSourcesAreDownmixed() throws {
        let dir = try Media.tempDirectory()
        let surround = dir.appendingPathComponent("surround.mp4").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=blue:s=64x48:r=30:d=2", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=2",
                          "-filter_complex", "[1]pan=5.1|FL=c0|FR=c0|FC=c0|LFE=0*c0|BL=c0|BR=c0[a]", "-map", "0:v", "-map", "[a]",
                          "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", surround])
        let (out, plan) = try Fixtures.render("""
            {"formatVersion": 1,
             "assets": {"s": {"url": "\(surround)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "s", "at": 0}]},
                        {"id": 2, "mediaType": "audio", "segments": [{"asset": "s", "sourceRange": {"start": 0, "duration": 1}, "at": 1}]}],
             "export": {"preset": "low", "fileType": "mov"}}
            """, in: dir)
        #expect(plan.frameDuration == Rational(1, 30))
        let samples = try Media.audioSamples(out)
        let silent = Media.rms(samples[0..<(Int(0.9 * 48000) * 2)])
        let tone = Media.rms(samples[(Int(1.1 * 48000) * 2)..<(Int(1.9 * 48000) * 2)])
        #expect(silent < 0.001, "the gap before the segment must be silence")
        #expect(tone > 0.05, "the 5.1 source must be heard in stereo")
        let left = stride(from: Int(1.1 * 48000) * 2, to: Int(1.9 * 48000) * 2, by: 2).map { samples[$0] }
        let right = stride(from: Int(1.1 * 48000) * 2 + 1, to: Int(1.9 * 48000) * 2, by: 2).map { samples[$0] }
        #expect(abs(Media.rms(left[...]) - Media.rms(right[...])) < 0.01, "symmetric 5.1 content gives balanced stereo")
        #expect(samples.allSatisfy { abs($0) <= 1.0 })
        #expect(try Media.decodeErrors(out).isEmpty)
    }
}
