import Foundation
import ReelKernels

/// Runs each rendition of a ladder chunk on a thread of its own ("lane"), fed from a small ring
/// of copies of the drawn frames: while the caller draws frame k + 1, the lanes scale and
/// encode frame k, each rendition at its own pace.
///
/// Why: a chunk used to draw a frame and then encode it for every rendition, one after the
/// other, on one thread. On a farm whose agents outnumber the chunks still to render (always
/// the case at a job's tail, and the whole job for a short one) the other cores idled while the
/// chunk's largest rendition encoded. With lanes, one chunk uses up to 1 + renditions cores.
/// The bytes do not change: each lane feeds its encoder the same frames, in the same order, from
/// one thread at a time, and every encoder keeps its configured thread count.
///
/// Each lane's `work` gets the frame's image (valid only during the call: the ring slot is
/// reused) and its index in the chunk. A lane that throws stops every lane; the error is
/// rethrown by the next `submit` or by `finish`.
final class RenditionLanes: @unchecked Sendable {
    typealias Work = (_ image: YUVImage, _ frame: Int) throws -> Void

    private let works: [Work]
    private let depth: Int
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var ring: [YUVImage] = []
    private var submitted = 0         // frames copied into the ring
    private var done: [Int]           // frames each lane has finished
    private var closed = false        // no more frames will come
    private var failure: Error?
    private var running: Int          // lanes whose thread has not exited

    /// Starts one thread per work item. `depth`: frames drawn ahead of the slowest lane.
    init(_ works: [Work], depth: Int = 3) {
        precondition(!works.isEmpty && depth > 0)
        self.works = works
        done = Array(repeating: 0, count: works.count)
        running = works.count
        self.depth = depth
        for index in works.indices {
            let thread = Thread { [self] in lane(index) }
            thread.name = "reel-rendition-\(index)"
            thread.stackSize = 16 << 20  // encoders use deep stacks
            thread.start()
        }
    }

    /// Hands the lanes a copy of `image` as the next frame. Blocks while the slowest lane is
    /// `depth` frames behind; throws the error of a lane that failed.
    func submit(_ image: YUVImage) throws {
        condition.lock()
        while failure == nil, submitted - done.min()! >= depth { condition.wait() }
        if let failure { condition.unlock(); throw failure }
        let slot = submitted % depth
        if ring.count <= slot { ring.append(YUVImage(width: image.width, height: image.height, hasAlpha: image.hasAlpha)) }
        let copy = ring[slot]
        condition.unlock()
        // No lane reads this slot until `submitted` moves past it, and every lane is done with
        // its previous frame (checked above), so the copy needs no lock.
        copy.copy(from: image)
        condition.lock()
        submitted += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until every lane has finished every submitted frame and its thread has exited;
    /// rethrows the first lane error. After it the lanes' encoders and writers are the caller's
    /// again.
    func finish() throws {
        if let failure = stop(failing: nil) { throw failure }
    }

    /// Stops the lanes without waiting for the frames still queued (the chunk failed), and
    /// waits for their threads to exit. Harmless after `finish`.
    func cancel() {
        stop(failing: CancellationError())
    }

    /// Closes the ring, fails the lanes with `error` unless one already failed (nil: let them
    /// drain), waits for every lane's thread to exit, and returns the failure that stopped them.
    @discardableResult
    private func stop(failing error: Error?) -> Error? {
        condition.lock()
        defer { condition.unlock() }
        if failure == nil { failure = error }
        closed = true
        condition.broadcast()
        while running > 0 { condition.wait() }
        return failure
    }

    private func lane(_ index: Int) {
        condition.lock()
        defer {
            running -= 1
            condition.broadcast()
            condition.unlock()
        }
        while true {
            while failure == nil, done[index] == submitted, !closed { condition.wait() }
            if failure != nil || done[index] == submitted { return }
            let frame = done[index]
            let image = ring[frame % depth]
            condition.unlock()
            do {
                try works[index](image, frame)
                condition.lock()
                done[index] += 1
                condition.broadcast()
            } catch {
                condition.lock()
                if failure == nil { failure = error }
                condition.broadcast()
                return
            }
        }
    }
}
