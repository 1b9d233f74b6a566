import Foundation
import Testing
import ReelCore
import ReelMedia
import ReelThreadTesting

/// Keyframe animations as rendered: the overlay is found in the decoded frames (the luma
/// centroid of a white square on black) and its position compared with Core Animation's
/// timing worked out here, independently of Reel's animation code.
@Suite(.blocking) struct AnimationRenderTests {
    static let size = 16.0

    /// A 16×16 white square, opaque.
    static func square(in dir: URL) throws -> String {
        let path = dir.appendingPathComponent("square.png").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=white:s=16x16:d=1", "-frames:v", "1", path])
        return path
    }

    /// The top-left corner of the bright square in a 320×240 luma frame: the luma-weighted
    /// centroid of the picture (background Y' = 16) minus half the square.
    static func squareOrigin(_ luma: [UInt8], width: Int = 320) -> Point? {
        var sum = 0.0, sx = 0.0, sy = 0.0
        for (i, y) in luma.enumerated() where y > 20 {
            let w = Double(Int(y) - 16)
            sum += w; sx += w * (Double(i % width) + 0.5); sy += w * (Double(i / width) + 0.5)
        }
        guard sum > 0 else { return nil }
        return Point(x: sx / sum - size / 2, y: sy / sum - size / 2)
    }

    static func composition(square: String, seconds: Int, animation: String) -> String {
        """
        {"formatVersion": 1, "assets": {"sq": {"url": "\(square)"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"empty": {"start": 0, "duration": \(seconds)}}]}],
         "videoComposition": {"renderSize": {"width": 320, "height": 240}, "frameDuration": "1/25",
           "overlays": [{"image": "sq", "frame": {"x": 152, "y": 112, "width": 16, "height": 16},
                         "animations": [\(animation)]}]},
         "export": {"preset": "highest", "video": {"crf": 4, "gopDuration": 1}}}
        """
    }

    /// The watermark demo's CAKeyframeAnimation (four positions, autoreverses, repeatCount
    /// HUGE_VALF), in a 320×240 frame: the mouse starts centred and visits (+60, +40), (+120, 0)
    /// twice in Core Animation's y-up coordinates, i.e. (+60, −40) in Reel's y-down ones.
    @Test func watermarkDemoPathVisitsEachKeyAtItsKeyTimeInAChunkedRender() throws {
        let dir = try Media.tempDirectory()
        let json = Self.composition(square: try Self.square(in: dir), seconds: 12, animation: #"""
            {"property": "position", "duration": 3, "autoreverses": true, "repeat": true,
             "values": [{"x": 152, "y": 112}, {"x": 212, "y": 72}, {"x": 272, "y": 112}, {"x": 272, "y": 112}]}
            """#)
        let (out, plan) = try Fixtures.render(json, in: dir, name: "chunked.mp4", workers: 2, chunkSeconds: 2)
        #expect(LocalRender.chunks(for: plan, options: .init(workers: 2, chunkSeconds: 2)).count == 6)
        let frames = try Media.lumaFrames(out, width: 320, height: 240)
        #expect(frames.count == 300)

        // Core Animation: 3 s per pass, keys evenly spaced (0, 1, 2, 3 s), then back (3 → 6 s), for ever.
        let keys = [Point(x: 152, y: 112), Point(x: 212, y: 72), Point(x: 272, y: 112), Point(x: 272, y: 112)]
        func expected(_ t: Double) -> Point {
            let local = t.truncatingRemainder(dividingBy: 6)
            let x = local <= 3 ? local : 6 - local          // seconds into the forward pass
            let i = min(Int(x), 2), f = x - Double(i)
            return Point(x: keys[i].x + (keys[i + 1].x - keys[i].x) * f, y: keys[i].y + (keys[i + 1].y - keys[i].y) * f)
        }
        var worst = 0.0
        for (k, frame) in frames.enumerated() {
            let found = try #require(Self.squareOrigin(frame), "frame \(k): no square")
            let want = expected(Double(k) / 25)
            worst = max(worst, abs(found.x - want.x), abs(found.y - want.y))
            #expect(abs(found.x - want.x) < 0.15 && abs(found.y - want.y) < 0.15, "frame \(k): square at \(found), expected \(want)")
        }
        // At each key time, forward and back, in both cycles: exactly the key.
        for (frame, key) in [(0, 0), (25, 1), (50, 2), (75, 3), (100, 2), (125, 1), (150, 0), (175, 1), (225, 3), (275, 1)] {
            let found = try #require(Self.squareOrigin(frames[frame]))
            #expect(abs(found.x - keys[key].x) < 0.1 && abs(found.y - keys[key].y) < 0.1, "frame \(frame): \(found) is not key \(key)")
        }
        print("watermark path: worst position error \(worst) px over \(frames.count) frames")

        // The chunked render equals a one-chunk render (the animation depends on time only).
        let (single, _) = try Fixtures.render(json, in: dir, name: "single.mp4", workers: 1, chunkSeconds: 100)
        let reference = try Media.lumaFrames(single, width: 320, height: 240)
        #expect(reference.count == 300)
        for k in 0..<min(reference.count, frames.count) {
            let psnr = Media.psnr(reference[k], frames[k])
            #expect(psnr >= 38, "frame \(k): PSNR \(psnr) dB between chunked and one-chunk renders")
        }
        #expect(try Media.decodeErrors(out).isEmpty)
    }

    /// An eased path with uneven key times and a fractional repeat count: the square moves as
    /// the cubic Bézier says (solved here by bisection), and stops part-way through its last pass.
    @Test func easedKeyframesFollowTheBezierAndStopAfterAFractionalCount() throws {
        let dir = try Media.tempDirectory()
        let json = Self.composition(square: try Self.square(in: dir), seconds: 6, animation: #"""
            {"property": "position", "duration": 2, "begin": 0.4, "timingFunction": "easeInEaseOut", "repeat": 2.5, "keyTimes": [0, 0.25, 1],
             "values": [{"x": 20, "y": 112}, {"x": 200, "y": 40}, {"x": 280, "y": 200}]}
            """#)
        let (out, _) = try Fixtures.render(json, in: dir, workers: 2, chunkSeconds: 2)
        let frames = try Media.lumaFrames(out, width: 320, height: 240)
        #expect(frames.count == 150)

        func bezierY(_ x: Double) -> Double {
            func b(_ s: Double, _ p1: Double, _ p2: Double) -> Double { 3 * (1 - s) * (1 - s) * s * p1 + 3 * (1 - s) * s * s * p2 + s * s * s }
            var lo = 0.0, hi = 1.0
            for _ in 0..<100 { let m = (lo + hi) / 2; if b(m, 0.42, 0.58) < x { lo = m } else { hi = m } }
            return b((lo + hi) / 2, 0, 1)
        }
        let keys = [(0.0, Point(x: 20, y: 112)), (0.25, Point(x: 200, y: 40)), (1.0, Point(x: 280, y: 200))]
        func expected(_ t: Double) -> Point {
            guard t >= 0.4 else { return Point(x: 152, y: 112) }              // before begin: the frame's own origin
            let elapsed = min(t - 0.4, 5)                                      // 2.5 passes of 2 s end at 5.4 s
            let x = elapsed == 5 ? 0.5 : elapsed.truncatingRemainder(dividingBy: 2) / 2
            let y = bezierY(x)
            let i = y < 0.25 ? 0 : 1
            let f = (y - keys[i].0) / (keys[i + 1].0 - keys[i].0)
            return Point(x: keys[i].1.x + (keys[i + 1].1.x - keys[i].1.x) * f, y: keys[i].1.y + (keys[i + 1].1.y - keys[i].1.y) * f)
        }
        for (k, frame) in frames.enumerated() {
            let found = try #require(Self.squareOrigin(frame), "frame \(k): no square")
            let want = expected(Double(k) / 25)
            #expect(abs(found.x - want.x) < 0.15 && abs(found.y - want.y) < 0.15, "frame \(k): square at \(found), expected \(want)")
        }
    }
}
