import Dispatch

/// Runs blocking work (file I/O, probing, finalising) on a global queue, not the cooperative pool.
func offload<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}
