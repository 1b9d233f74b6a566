import Foundation
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import ReelCore
import ReelProtocol

/// What `GET /api/v1/stream` pushes: the jobs table and the agents table, whole.
public struct ConsoleSnapshot: Codable, Sendable, Hashable {
    public var atMillis: Int64
    /// The recent jobs, newest first (as `GET /api/v1/jobs`).
    public var jobs: [JobStatus]
    /// As `GET /api/v1/agents`.
    public var agents: [AgentStatus]
}

/// The live stream (server-sent events). One poller for all clients: while anyone listens, it
/// reads the cheap job summaries and the agents every `interval` (500 ms) and pushes a
/// `snapshot` event when something changed — or every `refresh` anyway, so heartbeat ages,
/// speeds and ETAs move and a dead client is noticed. A new client gets the latest snapshot
/// at once. Nobody listening: no polling.
final class ConsoleFeed: Sendable {
    private struct State {
        var subscribers: [UInt64: AsyncStream<ByteBuffer>.Continuation] = [:]
        var nextID: UInt64 = 0
        var latest: ByteBuffer?
        var signature: ConsoleSnapshot?
        var lastSent = ContinuousClock.now
        var poller: Task<Void, Never>?
        var closed = false
        var lastWarning: ContinuousClock.Instant?
    }

    private let backend: any ConsoleBackend
    private let interval: Duration
    private let refresh: Duration
    private let logger: Logger
    private let state = NIOLockedValueBox(State())

    init(backend: any ConsoleBackend, interval: Duration = .milliseconds(500), refresh: Duration = .seconds(5), logger: Logger) {
        self.backend = backend; self.interval = interval; self.refresh = refresh; self.logger = logger
    }

    /// The SSE response of one client.
    func response() -> Response {
        Response(status: .ok,
                 headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-cache"],
                 body: ResponseBody { writer in
                     let stream = self.subscribe()
                     try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
                     for await event in stream {
                         try await writer.write(event)
                     }
                     try await writer.finish(nil)
                 })
    }

    /// A stream of encoded events, starting with the latest snapshot (if any yet).
    func subscribe() -> AsyncStream<ByteBuffer> {
        let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingNewest(8))
        let id = state.withLockedValue { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        // Before it is registered, so a client gone at once is still removed.
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        let open = state.withLockedValue { state in
            guard !state.closed else { return false }
            state.subscribers[id] = continuation
            if let latest = state.latest { continuation.yield(latest) }
            if state.poller == nil {
                state.poller = Task { [weak self] in await self?.pollLoop() }
            }
            return true
        }
        if !open { continuation.finish() }
        return stream
    }

    private func unsubscribe(_ id: UInt64) {
        let poller: Task<Void, Never>? = state.withLockedValue { state in
            state.subscribers[id] = nil
            guard state.subscribers.isEmpty else { return nil }
            defer { state.poller = nil; state.latest = nil; state.signature = nil }
            return state.poller
        }
        poller?.cancel()
    }

    /// Ends every stream (the server is stopping) and refuses new ones.
    func close() {
        let (subscribers, poller) = state.withLockedValue { state in
            state.closed = true
            defer { state.subscribers = [:]; state.poller = nil }
            return (Array(state.subscribers.values), state.poller)
        }
        poller?.cancel()
        for subscriber in subscribers { subscriber.finish() }
    }

    private func pollLoop() async {
        await PeriodicLoop(every: interval).run { await pollOnce() }
    }

    private func pollOnce() async {
        do {
            async let jobs = backend.jobs(limit: 50)
            async let agents = backend.agents()
            let snapshot = ConsoleSnapshot(atMillis: Int64(Date().timeIntervalSince1970 * 1000), jobs: try await jobs, agents: try await agents)
            let signature = Self.signature(of: snapshot)
            let now = ContinuousClock.now
            let send = state.withLockedValue { state -> Bool in
                state.signature != signature || now - state.lastSent >= refresh
            }
            guard send else { return }
            var event = ByteBuffer(string: "event: snapshot\ndata: ")
            var body = try ConsoleResponses.encode(snapshot)
            event.writeBuffer(&body)
            event.writeString("\n\n")
            let subscribers = state.withLockedValue { state in
                state.signature = signature
                state.lastSent = now
                state.latest = event
                return Array(state.subscribers.values)
            }
            for subscriber in subscribers { subscriber.yield(event) }
        } catch {
            // At most one warning every 30 s while the database is away, not one per poll.
            let now = ContinuousClock.now
            let warn = state.withLockedValue { state -> Bool in
                guard state.lastWarning.map({ now - $0 >= .seconds(30) }) ?? true else { return false }
                state.lastWarning = now
                return true
            }
            if warn { logger.warning("console stream: cannot read the farm's state", metadata: ["error": "\(error)"]) }
        }
    }

    /// The snapshot without what moves by itself (clock-driven ages, speeds and ETAs): a
    /// change in it is a change of the farm.
    static func signature(of snapshot: ConsoleSnapshot) -> ConsoleSnapshot {
        var copy = snapshot
        copy.atMillis = 0
        for index in copy.jobs.indices {
            copy.jobs[index].framesPerSecond = nil
            copy.jobs[index].etaSeconds = nil
        }
        for index in copy.agents.indices { copy.agents[index].heartbeatAgeSeconds = nil }
        return copy
    }
}
