import Foundation
import Testing
import ReelCore
import ReelMedia
import ReelThreadTesting

/// docs/output-guarantees.md 1: N = ceil(duration / frameDuration), frame k shows time k·frameDuration, CFR.
@Suite(.blocking) struct FrameAccuracyTests {
    @Test func everyFrameShowsTheSourceFrameAtItsTime() throws {
        let dir = try Media.tempDirectory()
        let clip = try Fixtures.numberedClip(in: dir)
        // 29.97 output over a 25 fps source that starts at 0.5 s into the timeline, trimmed from 0.3 s.
        let (out, plan) = try Fixtures.render("""
            {"formatVersion": 1,
             "assets": {"n": {"url": "\(clip)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [
                {"asset": "n", "sourceRange": {"start": 0.3, "duration": 1.2}, "at": 0.5}]}],
             "videoComposition": {"renderSize": {"width": 64, "height": 48}, "frameDuration": "1001/30000",
                "instructions": [{"timeRange": {"start": 0, "duration": 1.7}, "layerInstructions": [{"track": 1}]}]},
             "export": {"preset": "highest", "video": {"crf": 8}}}
            """, in: dir)
        let fd = Rational(1001, 30000)
        let expectedCount = Int((Rational(17, 10) / fd).ceil)
        #expect(plan.frameCount == expectedCount)
        let frames = try Media.lumaFrames(out, width: 64, height: 48)
        #expect(frames.count == expectedCount)
        for (k, frame) in frames.enumerated() {
            let t = fd * k
            let expected: Double
            if t < Rational(1, 2) {
                expected = 16   // before the segment: black background
            } else {
                let sourceTime = Rational(3, 10) + (t - Rational(1, 2))
                expected = Fixtures.numberedLuma((sourceTime * Rational(25)).floor)
            }
            let got = Media.mean(frame, width: 64, x: 8, y: 8, w: 48, h: 32)
            #expect(abs(got - expected) <= 2.5, "frame \(k) at \(t) s: luma \(got), expected \(expected)")
        }
        // Constant frame rate, strictly increasing timestamps.
        let pts = try Media.framePTS(out)
        #expect(pts.count == expectedCount)
        for i in 1..<pts.count { #expect(abs((pts[i] - pts[i - 1]) - fd.seconds) < 1e-4) }
        #expect(try Media.decodeErrors(out).isEmpty)
    }

    @Test func backwardAndRepeatedUseOfOneSourceIsExact() throws {
        let dir = try Media.tempDirectory()
        let clip = try Fixtures.numberedClip(in: dir)
        // The same asset twice on one track, the second time from an earlier point (forces a seek back).
        let (out, _) = try Fixtures.render("""
            {"formatVersion": 1,
             "assets": {"n": {"url": "\(clip)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [
                {"asset": "n", "sourceRange": {"start": 1.2, "duration": 0.4}, "at": 0},
                {"asset": "n", "sourceRange": {"start": "1/5", "duration": 0.4}, "at": 0.4}]}],
             "export": {"preset": "highest", "video": {"crf": 8}}}
            """, in: dir)
        let frames = try Media.lumaFrames(out, width: 64, height: 48)
        #expect(frames.count == 20)   // 0.8 s at the source's own 25 fps (the default frame rate)
        for (k, frame) in frames.enumerated() {
            let n: Int64 = k < 10 ? 30 + Int64(k) : 5 + Int64(k - 10)
            let got = Media.mean(frame, width: 64, x: 8, y: 8, w: 48, h: 32)
            #expect(abs(got - Fixtures.numberedLuma(n)) <= 2.5, "frame \(k): luma \(got), expected source frame \(n)")
        }
    }
}
