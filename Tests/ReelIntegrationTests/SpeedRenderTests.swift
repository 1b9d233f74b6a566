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
}
