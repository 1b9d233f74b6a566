import Dispatch
import Synchronization

/// Runs blocking work (file I/O, probing, finalising) on a global queue, not the cooperative pool.
func offload<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}

/// Blocks the calling thread — one `offload` runs on, never the cooperative pool — until
/// `operation` completes on the pool: how blocking code (libav probing through a
/// `ByteRangeSource`) reads from the async object store.
func awaitBlocking<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) throws -> T {
    let slot = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let result: Result<T, any Error>
        do { result = .success(try await operation()) } catch { result = .failure(error) }
        slot.withLock { $0 = result }
        done.signal()
    }
    done.wait()  // bounded: the object store's requests carry their own timeouts
    return try slot.withLock { $0! }.get()
}
