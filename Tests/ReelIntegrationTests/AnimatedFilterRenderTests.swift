import Foundation
import Testing
import ReelCore
import ReelMedia
import ReelThreadTesting

/// An animated filter parameter as rendered in chunks: every frame of a flat grey clip has the
/// brightness the keyframes give it at that frame's time.
@Suite(.blocking) struct AnimatedFilterRenderTests {
    @Test func animatedBrightnessChangesEveryFrameAsTheKeyframesSay() throws {
        let dir = try Media.tempDirectory()
        let grey = dir.appendingPathComponent("grey.mp4").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=0x808080:s=64x48:r=25:d=3", "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p", grey])
        // −0.4 before 0.2 s, up to +0.4 at 0.7 s, back to 0 at 2.2 s, 0 after.
        let json = """
            {"formatVersion": 1, "assets": {"g": {"url": "\(grey)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "g", "at": 0, "sourceRange": {"start": 0, "duration": 2.4}}]}],
             "videoComposition": {"frameDuration": "1/25", "instructions": [{"timeRange": {"start": 0, "duration": 2.4}, "layerInstructions": [
                {"track": 1, "filters": [{"type": "brightness", "brightness":
                   {"values": [-0.4, 0.4, 0], "keyTimes": [0, 0.25, 1], "duration": 2, "begin": 0.2}}]}]}]},
             "export": {"preset": "highest", "video": {"crf": 4, "gopDuration": 0.4}}}
            """
        let (out, plan) = try Fixtures.render(json, in: dir, workers: 2, chunkSeconds: Rational(2, 5))
        #expect(plan.frameCount == 60)
        let frames = try Media.lumaFrames(out, width: 64, height: 48)
        #expect(frames.count == 60)
        let source = try Media.lumaFrames(grey, width: 64, height: 48)
        let base = Media.mean(source[0], width: 64, x: 0, y: 0, w: 64, h: 48)
        // The brightness formula (rgb + b) on a grey, as limited-range luma: + 219·b.
        func brightness(_ t: Double) -> Double {
            switch t {
            case ..<0.2: return -0.4
            case ..<0.7: return -0.4 + 0.8 * (t - 0.2) / 0.5
            case ..<2.2: return 0.4 - 0.4 * (t - 0.7) / 1.5
            default: return 0
            }
        }
        for (k, frame) in frames.enumerated() {
            let expected = base + 219 * brightness(Double(k) / 25)
            let measured = Media.mean(frame, width: 64, x: 0, y: 0, w: 64, h: 48)
            #expect(abs(measured - expected) <= 1.5, "frame \(k): luma \(measured), expected \(expected)")
        }
        #expect(try Media.decodeErrors(out).isEmpty)
    }
}
