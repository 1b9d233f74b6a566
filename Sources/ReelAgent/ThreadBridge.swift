import Dispatch
import Foundation
import Synchronization

/// Moves work between Swift concurrency and plain threads.
///
/// Rendering is long, CPU-bound and blocking (libav, x264): it must never run on an event loop
/// or on the cooperative pool, whose few threads the connection's I/O and timers need. So a
/// render runs on its own `Thread`, awaited through a continuation; and when that thread needs
/// the network (a `FETCH` for a missing cache block) it blocks on a semaphore while a `Task`
/// does the async request — blocking a dedicated thread is fine, blocking the pool is not.
enum ThreadBridge {
    /// Runs `body` on a new dedicated thread and returns its result when it finishes.
    static func runOnDedicatedThread<T: Sendable>(name: String, _ body: @escaping @Sendable () throws -> T) async -> Result<T, any Error> {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>, Never>) in
            let thread = Thread {
                let result: Result<T, any Error>
                do { result = .success(try body()) } catch { result = .failure(error) }
                continuation.resume(returning: result)
            }
            thread.name = name
            thread.stackSize = 16 << 20  // the compositor and x264 use deep stacks
            thread.start()
        }
    }

    /// Blocks the calling (dedicated, non-pool) thread until `operation` completes.
    /// Must not be called from the cooperative pool or an event loop: it would deadlock them.
    static func blockingWait<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) throws -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            do { box.set(.success(try await operation())) } catch { box.set(.failure(error)) }
            done.signal()
        }
        done.wait()  // bounded: every operation passed here carries its own reply timeout
        return try box.get()
    }
}

/// A one-shot result slot written by one thread and read by another after a semaphore;
/// the mutex makes the hand-over explicit for the checker.
private final class ResultBox<T: Sendable>: Sendable {
    private let slot = Mutex<Result<T, any Error>?>(nil)
    func set(_ value: Result<T, any Error>) { slot.withLock { $0 = value } }
    func get() throws -> T {
        guard let result = slot.withLock({ $0 }) else { throw AgentError.cancelled }
        return try result.get()
    }
}

/// Shared between a render thread and the task supervising it: frames done, and the flag
/// that abandons the render. The renderer checks the flag at every frame and every fetch.
final class RenderControl: Sendable {
    private struct State {
        var frames = 0
        var cancelled = false
    }

    private let state = Mutex(State())

    /// Frames finished so far.
    var framesDone: Int { state.withLock { $0.frames } }
    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Asks the render to stop at its next frame or fetch.
    func cancel() { state.withLock { $0.cancelled = true } }

    /// The renderer's progress callback: records `done` and throws once cancelled.
    func report(framesDone done: Int) throws {
        try state.withLock {
            $0.frames = done
            if $0.cancelled { throw AgentError.cancelled }
        }
    }

    /// Throws if cancelled (called before every network fetch).
    func checkCancelled() throws {
        if isCancelled { throw AgentError.cancelled }
    }
}
