import Foundation
import ReelKernels
import ReelThreadTesting
import Testing
@testable import ReelMedia

/// `RenditionLanes`: each lane sees every submitted frame once, in order, with the pixels it had
/// when submitted, however unevenly the lanes run; a lane's error reaches the caller; a chunk
/// that fails stops its lanes.
@Suite(.blocking) struct RenditionLanesTests {
    struct Failure: Error, Equatable { let frame: Int }

    /// A 64x32 picture whose luma is `value` everywhere.
    static func picture(_ value: UInt8, into image: YUVImage) -> YUVImage {
        image.fill(y: value, u: 128, v: 128)
        return image
    }

    @Test func everyLaneSeesEveryFrameInOrderWithItsOwnPixels() throws {
        let frames = 40
        let seen = (0..<3).map { _ in Shared<[[UInt8]]>([]) }
        // Lane 0 is fast, lane 1 slow, lane 2 slow on every fifth frame: the ring is reused
        // while the slow lanes lag, so a frame overwritten too early would show.
        let lanes = RenditionLanes((0..<3).map { lane in
            { image, frame in
                if lane == 1 || (lane == 2 && frame % 5 == 0) { usleep(2_000) }
                let values = [image.y.row(0)[0], image.y.row(31)[63], image.u.row(0)[0]]
                seen[lane].update { $0.append(values + [UInt8(frame)]) }
            }
        }, depth: 3)
        // The caller draws into one canvas, as FrameRenderer does, changing it every frame.
        let canvas = YUVImage(width: 64, height: 32)
        for k in 0..<frames { try lanes.submit(Self.picture(UInt8(k * 5), into: canvas)) }
        try lanes.finish()
        let expected = (0..<frames).map { [UInt8($0 * 5), UInt8($0 * 5), 128, UInt8($0)] }
        for lane in 0..<3 { #expect(seen[lane].current == expected, "lane \(lane)") }
    }

    @Test func aLaneThatFailsStopsTheOthersAndItsErrorReachesTheCaller() throws {
        let processed = Shared(0)
        let lanes = RenditionLanes([
            { _, frame in if frame == 7 { throw Failure(frame: frame) } },
            { _, _ in processed.update { $0 += 1 } },
        ], depth: 2)
        let canvas = YUVImage(width: 16, height: 16)
        var thrown: Error?
        for k in 0..<1_000 {
            do { try lanes.submit(Self.picture(UInt8(k % 256), into: canvas)) } catch { thrown = error; break }
        }
        // The error comes from a submit (the failed lane stops taking frames, so the ring fills)
        // or, at the latest, from finish.
        var failure = thrown
        if failure == nil { do { try lanes.finish() } catch { failure = error } }
        #expect(failure as? Failure == Failure(frame: 7))
        #expect(processed.current < 1_000, "the other lane stopped too")
        #expect(throws: Failure(frame: 7)) { try lanes.finish() }
    }

    @Test func cancellingWithFramesQueuedReturnsAndLaterCallsFail() throws {
        let started = Shared(0)
        let lanes = RenditionLanes([{ _, _ in started.update { $0 += 1 }; usleep(1_000) }], depth: 4)
        let canvas = YUVImage(width: 16, height: 16)
        for k in 0..<4 { try lanes.submit(Self.picture(UInt8(k), into: canvas)) }
        lanes.cancel()  // returns once the lane's thread has exited, whatever was queued
        #expect(started.current <= 4)
        #expect(throws: CancellationError.self) { try lanes.submit(canvas) }
        lanes.cancel()  // harmless twice
    }
}
