import Testing

/// Waits, polling every 5 ms, until `condition` holds; after `seconds` (generous: a condition
/// that holds returns at once) records an issue naming `what` and throws.
public func waitUntil(_ what: String, seconds: Int64 = 120, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting until \(what)")
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}
