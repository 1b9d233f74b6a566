import Foundation

/// What `ReconnectingClient` needs of a connection (an `OperatorClient`, or a test double).
protocol CoordinatorConnection: AnyObject {
    /// Whether the connection has closed (a new one is needed).
    var isClosed: Bool { get }
    func close() async
}

/// A connection to the coordinator that outlives coordinator and database restarts, for the
/// commands that follow a job over minutes (`submit --wait`, `status --watch`, `fetch`).
///
/// `perform` runs one idempotent request (a `STATUS`, one `OUTPUT` range); when it fails for
/// the coordinator's reasons (`UserError.transient`: connection lost or refused, reply timeout,
/// `ERR internal`, `ERR shutting_down`) it waits per `RetrySchedule`, reconnects if the
/// connection is gone, and runs it again, until the policy's window since the outage began is
/// spent. Every other error (not found, invalid composition, a refused secret) is thrown at once.
/// Says once per outage on stderr that it is reconnecting. Used from one task at a time.
final class ReconnectingClient<Connection: CoordinatorConnection> {
    private var connection: Connection?
    private let connect: () async throws -> Connection
    private var schedule: RetrySchedule
    private let sleep: (Duration) async throws -> Void
    private let now: () -> ContinuousClock.Instant
    private let announce: (String) -> Void
    private let coordinator: String
    /// Appended to the error when it gives up (what the user can still do).
    var giveUpHint: String?

    /// - Parameters:
    ///   - initial: an already-connected connection (the first connect is the caller's, so a
    ///     wrong address or secret fails at once instead of being retried for minutes).
    ///   - connect: makes a new connection; its transient failures (refused while the
    ///     coordinator restarts) are retried like a request's.
    ///   - sleep, now: injected so tests run the schedule without waiting.
    init(initial: Connection?, coordinator: String, policy: RetryPolicy = .standard,
         connect: @escaping () async throws -> Connection,
         sleep: @escaping (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
         now: @escaping () -> ContinuousClock.Instant = { ContinuousClock.now },
         announce: @escaping (String) -> Void = announceReconnectingOnStderr) {
        self.connection = initial
        self.coordinator = coordinator
        self.connect = connect
        self.schedule = RetrySchedule(policy: policy)
        self.sleep = sleep
        self.now = now
        self.announce = announce
    }

    /// Runs `request` on a live connection, retrying it through transient failures.
    func perform<T>(_ request: (Connection) async throws -> T) async throws -> T {
        while true {
            do {
                let live = try await current()
                let value = try await request(live)
                schedule.succeeded()
                return value
            } catch let error as UserError where error.transient != nil {
                if error.transient == .connectionLost || connection?.isClosed == true { await dropConnection() }
                let firstFailure = !schedule.inOutage
                guard let delay = schedule.failed(at: now()) else {
                    throw UserError("gave up after \(window) of waiting for the coordinator at \(coordinator): \(error.description)"
                                    + (giveUpHint.map { "; \($0)" } ?? ""))
                }
                if firstFailure { announce("\(error.description); reconnecting for up to \(window)…") }
                try await sleep(delay)
            }
        }
    }

    /// The window as people say it: `5 min`, `90 s`.
    private var window: String {
        let seconds = schedule.policy.window.components.seconds
        return seconds % 60 == 0 ? "\(seconds / 60) min" : "\(seconds) s"
    }

    /// The live connection, connecting first if there is none.
    private func current() async throws -> Connection {
        if let connection, !connection.isClosed { return connection }
        await dropConnection()
        let fresh = try await connect()
        connection = fresh
        return fresh
    }

    private func dropConnection() async {
        if let old = connection { connection = nil; await old.close() }
    }

    /// Best-effort `QUIT` and close.
    func close() async { await dropConnection() }
}

/// One line on stderr; on a terminal it first clears a progress line being redrawn in place.
func announceReconnectingOnStderr(_ message: String) {
    Terminal.error((Terminal.stderrIsTTY ? "\r\u{1B}[K" : "") + message)
}

extension ReconnectingClient where Connection == OperatorClient {
    /// Wraps `client` (already connected with `options`), reconnecting with the same options.
    convenience init(_ client: OperatorClient, options: ConnectionOptions) {
        self.init(initial: client, coordinator: (try? options.endpoints())?.map(\.description).joined(separator: ",") ?? client.endpoint.description, connect: { try await OperatorClient.connect(options) })
    }
}
