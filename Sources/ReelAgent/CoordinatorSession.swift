import Foundation
import ReelObjectStore
import NIOCore
import ReelProtocol
import Synchronization

/// One authenticated agent connection to the coordinator, with a typed method per agent verb.
///
/// Requests are serialised by `ReelClient`, so the claim loop, the heartbeat/progress
/// supervisor and the render thread's fetches may all call it concurrently. Every request
/// has a reply timeout (a timeout closes the connection, as `ReelClient` documents).
/// `isClosed` tells a dead connection (reconnect) from an `ERR` reply (the connection lives).
final class CoordinatorSession: Sendable {
    let client: ReelClient
    private let closed: ClosedFlag
    let requestTimeout: TimeAmount
    /// Direct transfers with the object store on this connection (`DirectTransfers.swift`).
    let direct = DirectTransferState()
    /// Moves bytes through the presigned URLs the coordinator hands out.
    let transfer = PresignedTransfer()
    private let uploadTimeout: TimeAmount
    /// The agent's drain, begun when the coordinator says `DRAIN` (or `LEASE … drain=1`).
    private let drain: DrainState
    private let drainPeriod: Duration
    /// Whether this connection has said `DRAINING` yet.
    private let announcedDrain = Atomic<Bool>(false)

    private init(client: ReelClient, endpoint: HostPort, requestTimeout: Duration, uploadTimeout: Duration,
                 drain: DrainState, drainPeriod: Duration) {
        self.client = client
        self.endpoint = endpoint
        self.drain = drain
        self.drainPeriod = drainPeriod
        self.requestTimeout = .init(requestTimeout)
        self.uploadTimeout = .init(uploadTimeout)
        let flag = ClosedFlag()
        client.closeFuture.whenComplete { _ in flag.set() }
        self.closed = flag
    }

    /// Connects and authenticates as `name` with role `agent`, to the first of the farm's
    /// coordinators that answers (`AgentConfiguration.endpoints`: the one that answered last
    /// first). Throws the last coordinator's error when none does.
    static func connect(_ configuration: AgentConfiguration, name: String, authenticator: Authenticator,
                        group: any EventLoopGroup, drain: DrainState = DrainState()) async throws -> CoordinatorSession {
        var lastError: (any Error)?
        for endpoint in configuration.endpoints.inTryOrder {
            let clientConfiguration = ReelClientConfiguration(
                host: endpoint.host, port: endpoint.port, role: .agent, name: name,
                tls: configuration.tls, tlsServerHostname: configuration.tlsServerHostname)
            do {
                let client = try await ReelClient.connect(configuration: clientConfiguration, authenticator: authenticator, group: group)
                configuration.endpoints.succeeded(endpoint)
                return CoordinatorSession(client: client, endpoint: endpoint, requestTimeout: configuration.requestTimeout,
                                          uploadTimeout: configuration.uploadTimeout, drain: drain,
                                          drainPeriod: configuration.shutdownGracePeriod)
            } catch {
                configuration.endpoints.failed(endpoint)
                lastError = error
            }
        }
        throw lastError ?? AgentError.configuration("no coordinator to connect to")
    }

    /// The coordinator this session is connected to.
    let endpoint: HostPort

    /// Whether the connection has closed (the server dropped it, a timeout, a framing error).
    var isClosed: Bool { closed.isSet }

    func capabilities(_ caps: AgentCapabilities) async throws {
        try expectOK(try await client.request(.capabilities(caps), timeout: requestTimeout), "CAPS")
    }

    /// `CLAIM wait=S`: a task with its raw specification, or `nil` (`NONE`).
    func claim(waitSeconds: Int) async throws -> (TaskAssignment, [UInt8])? {
        let reply = try await client.request(.claim(waitSeconds: waitSeconds),
                                             timeout: .seconds(Int64(waitSeconds)) + requestTimeout)
        switch reply {
        case .task(let assignment, let specification): return (assignment, specification)
        case .noTask: return nil
        case .drain:
            drainRequested()
            return nil
        default: throw unexpected(reply, "CLAIM")
        }
    }

    /// An operator asked this agent to drain (`reel drain`): the whole agent drains, as on SIGTERM.
    private func drainRequested() {
        drain.begin(gracePeriod: drainPeriod)
    }

    /// `DRAINING seconds=` once per connection after the drain began, so `reel agents` shows
    /// it: best effort (a coordinator older than `DRAINING` refuses it; the drain goes on).
    func announceDrainIfDraining() async {
        guard drain.isDraining, !announcedDrain.exchange(true, ordering: .relaxed) else { return }
        let seconds = Int(min(drainPeriod.components.seconds, 86_400))
        _ = try? await client.request(.draining(seconds: seconds), timeout: requestTimeout)
    }

    /// What the coordinator said about a lease.
    enum LeaseReply: Equatable { case held(expiresAtMillis: Int64?), lost }

    func heartbeat(_ task: TaskAssignment) async throws -> LeaseReply {
        let reply = try await client.request(.heartbeat(task: task.task, epoch: task.epoch), timeout: requestTimeout)
        switch reply {
        case .lease(_, _, let expires, let drain):
            if drain { drainRequested() }
            return .held(expiresAtMillis: expires)
        case .lost: return .lost
        default: throw unexpected(reply, "HEARTBEAT")
        }
    }

    func progress(_ task: TaskAssignment, frames: Int) async throws -> LeaseReply {
        let reply = try await client.request(.progress(task: task.task, epoch: task.epoch, frames: Int64(frames)),
                                             timeout: requestTimeout)
        return try leaseReply(reply, "PROGRESS")
    }

    func fail(_ task: TaskAssignment, reason: String) async throws -> LeaseReply {
        // Keep the line far below the protocol's 16 KiB limit even when every byte is escaped.
        let bounded = reason.count > 1000 ? String(reason.prefix(1000)) + "…" : reason
        let reply = try await client.request(.fail(task: task.task, epoch: task.epoch, reason: bounded), timeout: requestTimeout)
        return try leaseReply(reply, "FAIL")
    }

    func release(_ task: TaskAssignment) async throws -> LeaseReply {
        let reply = try await client.request(.release(task: task.task, epoch: task.epoch), timeout: requestTimeout)
        return try leaseReply(reply, "RELEASE")
    }

    /// `POSTER`: a small JPEG of the task's last frame, for the console (`OK`, or `LOST` when
    /// the lease is gone, which changes nothing for the task).
    func poster(_ task: TaskAssignment, jpeg: [UInt8]) async throws {
        _ = try leaseReply(try await client.request(.poster(task: task.task, epoch: task.epoch, jpeg: jpeg), timeout: requestTimeout), "POSTER")
    }

    /// What the coordinator said to a part of a result.
    enum PartReply: Equatable {
        /// Stored; it holds this many bytes of the result, and renewed the lease until `expiresAtMillis`.
        case stored(have: Int64, expiresAtMillis: Int64)
        /// The result is complete, verified and accepted.
        case accepted
    }

    /// `RESULTPART`: bytes `[offset, offset + bytes.count)` of a result of `total` bytes.
    /// `ERR stale_epoch` / `checksum_mismatch` / `bad_range` are thrown.
    func resultPart(_ task: TaskAssignment, sha256: String, offset: Int64, total: Int64, bytes: [UInt8]) async throws -> PartReply {
        let reply = try await client.request(.resultPart(task: task.task, epoch: task.epoch, sha256: sha256, offset: offset,
                                                         total: total, bytes: bytes), timeout: uploadTimeout)
        switch reply {
        case .accepted(let id) where id == task.task: return .accepted
        case .resultStored(let id, let have, let held, let expires) where id == task.task && held == total:
            return .stored(have: have, expiresAtMillis: expires)
        default: throw unexpected(reply, "RESULTPART")
        }
    }

    /// `FETCH`: exactly `length` bytes from `offset` of the source `sha256` whose size is `size`.
    func fetch(sha256: String, offset: Int64, length: Int, size: Int64) async throws -> [UInt8] {
        let reply = try await client.request(.fetch(sha256: sha256, offset: offset, length: Int64(length)), timeout: requestTimeout)
        guard case .data(let at, let total, let bytes) = reply else { throw unexpected(reply, "FETCH") }
        guard at == offset, total == size, bytes.count == length else {
            throw AgentError.protocolViolation(
                "FETCH \(sha256) [\(offset), +\(length)) of \(size) bytes answered with \(bytes.count) bytes at \(at) of \(total)")
        }
        return bytes
    }

    /// `QUIT` (best effort) and close.
    func close() async { await client.close() }

    func leaseReply(_ reply: Message, _ verb: String) throws -> LeaseReply {
        switch reply {
        case .ok: return .held(expiresAtMillis: nil)
        case .lost: return .lost
        default: throw unexpected(reply, verb)
        }
    }

    private func expectOK(_ reply: Message, _ verb: String) throws {
        guard case .ok = reply else { throw unexpected(reply, verb) }
    }

    func unexpected(_ reply: Message, _ verb: String) -> AgentError {
        .protocolViolation("unexpected reply \(reply.verb) to \(verb)")
    }
}

/// Set once, read from anywhere.
final class ClosedFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
