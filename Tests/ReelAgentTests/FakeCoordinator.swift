import Foundation
import NIOCore
import NIOSSL
import ReelCore
import ReelMedia
import ReelObjectStore
import ReelProtocol
import Synchronization

/// A coordinator stand-in: a real `ReelServer` whose handler serves queued tasks, answers
/// `FETCH` from in-memory asset bytes and records everything the agent says. Knobs make it
/// lose leases, drop connections or refuse results, so each test drives one agent path.
final class FakeCoordinator: ReelRequestHandler, Sendable {
    struct Result: Sendable { var task: Int64; var epoch: Int64; var sha256: String; var bytes: [UInt8]; var connection: UInt64 }
    struct Failure: Sendable { var task: Int64; var epoch: Int64; var reason: String }
    /// One `RESULTPART` as received (before it was stored or refused).
    struct Part: Sendable { var task: Int64; var epoch: Int64; var offset: Int64; var count: Int; var connection: UInt64 }

    /// What it holds and has seen, and the knobs; the server calls the handler from several connections.
    private struct State {
        var server: ReelServer?
        var assets: [String: [UInt8]] = [:]
        var queue: [(TaskAssignment, [UInt8])] = []
        var results: [Result] = []
        var resultAttempts: [Result] = []
        var parts: [Part] = []
        /// Bytes held of each result upload in progress, by "task-epoch".
        var partials: [String: [UInt8]] = [:]
        var fails: [Failure] = []
        var releases: [(task: Int64, epoch: Int64)] = []
        var progressFrames: [Int64] = []
        var posters: [(task: Int64, jpeg: [UInt8])] = []
        var heartbeats = 0
        var fetchedBytes = 0
        var fetchCount = 0
        var capabilities: [AgentCapabilities] = []
        /// Who sent each of `capabilities`.
        var capabilityNames: [String] = []
        var claims = 0
        var connections: Set<UInt64> = []
        var peerNames: Set<String> = []
        var closedConnections = 0
        var lostSent = 0
        var loseLeases = false
        var drainAgents = false
        var drainingSaid: [Int] = []
        var dropConnectionAtFetch: Int?
        var refuseResults: [ReelProtocolError] = []
        var loseLeaseOnRefusal = false
        var dropConnectionAfterPart: Int?
        var staleEpochAtPart: Int?
        var onPart: (@Sendable () -> Void)?
        var direct: DirectStore?
        var spoilSourceURLs = 0
        var spoilResultURLs = 0
        var directURLs: [String] = []
        var resultDones = 0
    }

    /// An object store the fake hands out presigned URLs of (proto/PROTOCOL.md §4.5), as a
    /// coordinator storing in S3 does; `spoiled` signs URLs that the store must refuse.
    struct DirectStore: Sendable {
        let client: S3Client
        /// Signs URLs that are already past their expiry, or with a changed signature.
        let spoiled: @Sendable (PresignedOperation) throws -> (PresignedRequest, url: String)
        let prefix: String
        func key(_ kind: String, _ sha256: String) -> String { "\(prefix)/\(kind)/sha256/\(sha256.prefix(2))/\(sha256)" }
    }

    private let state = Mutex(State())

    /// One field of the state, read or written under the mutex.
    private subscript<T: Sendable>(_ field: WritableKeyPath<State, T>) -> T {
        get { state.withLock { $0[keyPath: field] } }
        set { state.withLock { $0[keyPath: field] = newValue } }
    }

    /// Answer `DRAIN` to claims and `LEASE … drain=1` to heartbeats (an operator's `reel drain`).
    var drainAgents: Bool { get { self[\.drainAgents] } set { self[\.drainAgents] = newValue } }
    /// The `DRAINING seconds=` the agent sent.
    var drainingSaid: [Int] { self[\.drainingSaid] }
    /// Answer `LOST` to every `HEARTBEAT` and `PROGRESS`.
    var loseLeases: Bool { get { self[\.loseLeases] } set { self[\.loseLeases] = newValue } }
    /// Drop the connection (`ERR shutting_down`) at the n-th `FETCH` (1-based), once.
    var dropConnectionAtFetch: Int? { get { self[\.dropConnectionAtFetch] } set { self[\.dropConnectionAtFetch] = newValue } }
    /// Refuse the next results (the part that would complete each) with these errors, in order, before accepting again
    /// (`shutting_down` also closes the connection, as a draining coordinator does).
    var refuseResults: [ReelProtocolError] { get { self[\.refuseResults] } set { self[\.refuseResults] = newValue } }
    /// With `refuseResults`: the lease is lost as the result is refused (`LOST` from then on).
    var loseLeaseOnRefusal: Bool { get { self[\.loseLeaseOnRefusal] } set { self[\.loseLeaseOnRefusal] = newValue } }
    /// Store the n-th `RESULTPART` (1-based), then drop the connection (`ERR shutting_down`)
    /// before replying, once: the agent never hears that the part arrived.
    var dropConnectionAfterPart: Int? { get { self[\.dropConnectionAfterPart] } set { self[\.dropConnectionAfterPart] = newValue } }
    /// Answer the n-th `RESULTPART` (1-based) `ERR stale_epoch` and discard its upload, and
    /// lose the lease from then on (`LOST`), as when the task was re-queued meanwhile.
    var staleEpochAtPart: Int? { get { self[\.staleEpochAtPart] } set { self[\.staleEpochAtPart] = newValue } }
    /// Called as each `RESULTPART` arrives, before it is handled: a test moves `clock` here to
    /// make the link as slow as it likes, in the time leases are read by.
    var onPart: (@Sendable () -> Void)? { get { self[\.onPart] } set { self[\.onPart] = newValue } }
    /// Hand out presigned URLs of this store (`nil`: answer `ERR no_direct`, as over a local directory).
    var direct: DirectStore? { get { self[\.direct] } set { self[\.direct] = newValue } }
    /// Answer the next `SOURCEURL`s / `RESULTURL`s with URLs the store refuses (`DirectStore.spoiled`).
    var spoilSourceURLs: Int { get { self[\.spoilSourceURLs] } set { self[\.spoilSourceURLs] = newValue } }
    var spoilResultURLs: Int { get { self[\.spoilResultURLs] } set { self[\.spoilResultURLs] = newValue } }
    /// The verbs of the presigned URLs handed out, in order (`SOURCEURL`, `SOURCEURL-spoiled`, …).
    var directURLs: [String] { self[\.directURLs] }
    var resultDones: Int { self[\.resultDones] }
    /// Lease length handed out with `TASK` and `LEASE`.
    let leaseMillis: Int64
    /// The clock lease expiries are read by; `RunningAgent` gives the agent the same one. It
    /// stands still unless a test moves it, so no agent test sees a lease expire because the
    /// machine was slow.
    let clock = StoppedClock()
    /// How long an empty `CLAIM` is held before `NONE` (shorter than the agent's wait, to keep tests quick).
    let claimHoldMillis: Int64

    let authenticator: Authenticator
    private var server: ReelServer { self[\.server]! }
    var port: Int { server.localAddress!.port! }

    init(leaseMillis: Int64 = 30_000, claimHoldMillis: Int64 = 100) throws {
        self.leaseMillis = leaseMillis
        self.claimHoldMillis = claimHoldMillis
        self.authenticator = try Authenticator(secret: Array("agent-tests-shared-secret".utf8))
    }

    /// Listens on `port` (0: a free one), refusing logins beyond `handshakeLimit` at once.
    func start(tls: NIOSSLContext? = nil, port: Int = 0, handshakeLimit: Int = ProtocolLimits.maxUnauthenticatedConnections,
               handshakeTimeout: TimeAmount = .seconds(ProtocolLimits.handshakeTimeoutSeconds)) async throws {
        self[\.server] = try await ReelServer.start(
            configuration: ReelServerConfiguration(host: "127.0.0.1", port: port, tls: tls, handshakeTimeout: handshakeTimeout,
                                                   maxUnauthenticatedConnections: handshakeLimit),
            authenticator: authenticator, handler: self)
    }

    /// `start` on a port below the kernel's ephemeral range (32768 and up), for a test that
    /// `restart`s: a port the kernel handed out can be taken, once it is released, as the local
    /// port of any outgoing connection on the machine (the parallel tests make hundreds), and
    /// the restart then fails with "Address already in use". A real coordinator listens on a
    /// fixed port (7400) for the same reason. Tries random ports of 20000-32767 until one binds.
    func startOnFixedPort(handshakeLimit: Int = ProtocolLimits.maxUnauthenticatedConnections) async throws {
        var lastError: Error?
        for _ in 0..<50 {
            do { return try await start(port: Int.random(in: 20_000...32_767), handshakeLimit: handshakeLimit) } catch { lastError = error }
        }
        throw lastError!
    }

    /// A coordinator restart: stops as on SIGTERM (every connection closes) and listens again on
    /// the same port, as soon as the kernel lets it: the old sockets on that port may still be
    /// closing when `shutdown` returns ("Address already in use"), so the bind is retried until
    /// it succeeds or 30 s have passed.
    func restart(handshakeLimit: Int = ProtocolLimits.maxUnauthenticatedConnections) async throws {
        let port = self.port
        try await server.shutdown()
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do { return try await start(port: port, handshakeLimit: handshakeLimit) } catch let error as IOError where error.errnoCode == EADDRINUSE {
                guard ContinuousClock.now < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    func stop() async { try? await server.close() }

    func addAsset(_ bytes: [UInt8], hash: String) { state.withLock { $0.assets[hash] = bytes } }

    /// Queues `specification` as a `TASK` under `epoch`.
    func enqueue(_ specification: TaskSpecification, epoch: Int64 = 1) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let bytes = [UInt8](try encoder.encode(specification))
        let video = specification.kind == .videoChunk
        let assignment = TaskAssignment(
            task: specification.task, job: specification.job, kind: video ? .videoChunk : .audio,
            frameStart: video ? Int64(specification.frames.start) : 0, frameEnd: video ? Int64(specification.frames.end) : 0,
            epoch: epoch, expiresAtMillis: nowMillis + leaseMillis)
        state.withLock { $0.queue.append((assignment, bytes)) }
    }

    /// Accepted results.
    var results: [Result] { self[\.results] }
    /// `POSTER`s received.
    var posters: [(task: Int64, jpeg: [UInt8])] { self[\.posters] }
    /// Every complete result received (the part completing it), refused or accepted.
    var resultAttempts: [Result] { self[\.resultAttempts] }
    /// Every `RESULTPART` received, in order.
    var parts: [Part] { self[\.parts] }
    /// Uploads begun and neither completed nor discarded.
    var partialUploads: Int { self[\.partials].count }
    var fails: [Failure] { self[\.fails] }
    var releases: [(task: Int64, epoch: Int64)] { self[\.releases] }
    var progressFrames: [Int64] { self[\.progressFrames] }
    var heartbeats: Int { self[\.heartbeats] }
    var fetchedBytes: Int { self[\.fetchedBytes] }
    var fetchCount: Int { self[\.fetchCount] }
    var capabilities: [AgentCapabilities] { self[\.capabilities] }
    /// The agents that sent `CAPS` (registered) since the `mark`-th `CAPS` (0-based).
    func registeredNames(since mark: Int) -> Set<String> { Set(self[\.capabilityNames].dropFirst(mark)) }
    var claims: Int { self[\.claims] }
    var connectionCount: Int { self[\.connections].count }
    var peerNames: Set<String> { self[\.peerNames] }
    var closedConnections: Int { self[\.closedConnections] }
    var lostSent: Int { self[\.lostSent] }
    var queuedTasks: Int { self[\.queue].count }

    private var nowMillis: Int64 { clock.farmClock.nowMillis() }

    func handle(_ request: Message, from peer: Peer) async throws -> Message {
        state.withLock { s in
            s.connections.insert(peer.connectionID)
            s.peerNames.insert(peer.name)
        }
        switch request {
        case .capabilities(let caps):
            state.withLock { s in s.capabilities.append(caps); s.capabilityNames.append(peer.name) }
            return .ok
        case .draining(let seconds):
            state.withLock { s in s.drainingSaid.append(seconds) }
            return .ok
        case .claim(let wait):
            state.withLock { s in s.claims += 1 }
            if self[\.drainAgents] { return .drain }
            if let task = popTask() { return .task(task.0, specification: task.1) }
            try await Task.sleep(for: .milliseconds(min(Int64(wait) * 1000, claimHoldMillis)))
            if let task = popTask() { return .task(task.0, specification: task.1) }
            return .noTask
        case .heartbeat(let task, let epoch):
            return state.withLock { s -> Message in
                s.heartbeats += 1
                if s.loseLeases { s.lostSent += 1; return .lost(task: task) }
                return .lease(task: task, epoch: epoch, expiresAtMillis: nowMillis + leaseMillis, drain: s.drainAgents)
            }
        case .poster(let task, _, let jpeg):
            return state.withLock { s -> Message in
                s.posters.append((task, jpeg))
                return s.loseLeases ? .lost(task: task) : .ok
            }
        case .progress(let task, _, let frames):
            return state.withLock { s -> Message in
                s.progressFrames.append(frames)
                if s.loseLeases { s.lostSent += 1; return .lost(task: task) }
                return .ok
            }
        case .resultPart(let task, let epoch, let sha256, let offset, let total, let bytes):
            onPart?()
            return try state.withLock { s throws -> Message in
                s.parts.append(Part(task: task, epoch: epoch, offset: offset, count: bytes.count, connection: peer.connectionID))
                let key = "\(task)-\(epoch)"
                if let stale = s.staleEpochAtPart, stale == s.parts.count {
                    s.partials[key] = nil
                    s.loseLeases = true
                    throw ReelProtocolError(.staleEpoch, "task \(task) is held under epoch \(epoch + 1)")
                }
                var held = s.partials[key] ?? []
                guard offset == Int64(held.count) else {
                    throw ReelProtocolError.outOfOrder(have: Int64(held.count), "send offset \(held.count), not \(offset)")
                }
                held += bytes
                if let drop = s.dropConnectionAfterPart, drop == s.parts.count {
                    s.dropConnectionAfterPart = nil
                    s.partials[key] = held
                    throw ReelProtocolError(.shuttingDown, "test drops the connection after storing the part")
                }
                guard Int64(held.count) == total else {
                    s.partials[key] = held
                    return .resultStored(task: task, have: Int64(held.count), total: total, expiresAtMillis: nowMillis + leaseMillis)
                }
                // The part completing the upload: refused (not stored) or accepted, as RESULT was.
                let result = Result(task: task, epoch: epoch, sha256: sha256, bytes: held, connection: peer.connectionID)
                s.resultAttempts.append(result)
                if !s.refuseResults.isEmpty {
                    if s.loseLeaseOnRefusal { s.loseLeases = true }
                    throw s.refuseResults.removeFirst()
                }
                guard FileDigest.sha256(bytes: held) == sha256 else {
                    s.partials[key] = nil
                    throw ReelProtocolError(.checksumMismatch, "the fake coordinator got other bytes than \(sha256)")
                }
                s.partials[key] = nil
                s.results.append(result)
                return .accepted(task: task)
            }
        case .sourceURL(let sha256):
            guard let direct else { throw ReelProtocolError(.noDirect, "the fake coordinator stores in a local directory") }
            guard let info = try await direct.client.headObject(key: direct.key("assets", sha256)) else {
                throw ReelProtocolError(.notFound, "no asset \(sha256) in the store")
            }
            return .url(try presigned(.getObject(key: direct.key("assets", sha256)), total: info.size, verb: "SOURCEURL",
                                      spoil: \.spoilSourceURLs))
        case .resultURL(_, _, let sha256, let total), .resultParts(_, _, let sha256, let total):
            guard let direct else { throw ReelProtocolError(.noDirect, "the fake coordinator stores in a local directory") }
            if self[\.loseLeases] { throw ReelProtocolError(.staleEpoch, "lease lost") }
            return .url(try presigned(.putObject(key: direct.key("results", sha256), sha256: sha256), total: total, verb: "RESULTURL",
                                      spoil: \.spoilResultURLs))
        case .resultDone(let task, let epoch, let sha256, let total, _):
            guard let direct else { throw ReelProtocolError(.noDirect, "the fake coordinator stores in a local directory") }
            self[\.resultDones] += 1
            guard let info = try await direct.client.headObject(key: direct.key("results", sha256)) else {
                throw ReelProtocolError(.notFound, "no result \(sha256) in the store")
            }
            guard info.size == total, info.sha256 == nil || info.sha256 == sha256 else {
                throw ReelProtocolError(.checksumMismatch, "the store holds \(info.size) bytes with SHA-256 \(info.sha256 ?? "?")")
            }
            // The test's own check of the bytes (a coordinator reads none of them).
            let bytes = Array(try await direct.client.getObject(key: direct.key("results", sha256)).bytes.readableBytesView)
            state.withLock { s in
                s.results.append(Result(task: task, epoch: epoch, sha256: sha256, bytes: bytes, connection: peer.connectionID))
            }
            return .accepted(task: task)
        case .fail(let task, let epoch, let reason):
            state.withLock { s in s.fails.append(Failure(task: task, epoch: epoch, reason: reason)) }
            return .ok
        case .release(let task, let epoch):
            state.withLock { s in s.releases.append((task, epoch)) }
            return .ok
        case .fetch(let sha256, let offset, let length):
            // Plan documents are served apart and not counted: the counters are about sources.
            if let document = TestPlanDocuments.bytes(sha256) {
                let end = min(Int64(document.count), offset + length)
                return .data(offset: offset, total: Int64(document.count), bytes: Array(document[Int(min(offset, end))..<Int(end)]))
            }
            let reply: Message? = try state.withLock { s throws -> Message? in
                s.fetchCount += 1
                if let drop = s.dropConnectionAtFetch, drop == s.fetchCount {
                    s.dropConnectionAtFetch = nil
                    throw ReelProtocolError(.shuttingDown, "test drops the connection")
                }
                guard let bytes = s.assets[sha256] else { return nil }
                guard offset <= Int64(bytes.count) else { throw ReelProtocolError(.badRange, "offset beyond the end") }
                let end = min(Int64(bytes.count), offset + length)
                let slice = Array(bytes[Int(offset)..<Int(end)])
                s.fetchedBytes += slice.count
                return .data(offset: offset, total: Int64(bytes.count), bytes: slice)
            }
            guard let reply else { throw ReelProtocolError(.notFound, "no asset \(sha256)") }
            return reply
        default:
            throw ReelProtocolError(.forbidden, "the fake coordinator does not serve \(request.verb)")
        }
    }

    private func presigned(_ operation: PresignedOperation, total: Int64, verb: String,
                           spoil: WritableKeyPath<State, Int>) throws -> DirectURL {
        guard let direct else { throw ReelProtocolError(.noDirect, "no store") }
        let spoiled = state.withLock { s -> Bool in
            guard s[keyPath: spoil] > 0 else { s.directURLs.append(verb); return false }
            s[keyPath: spoil] -= 1
            s.directURLs.append(verb + "-spoiled")
            return true
        }
        let request: PresignedRequest, url: String
        if spoiled {
            (request, url) = try direct.spoiled(operation)
        } else {
            request = try direct.client.presign(operation)
            url = request.url
        }
        return DirectURL(method: request.method, url: url, headers: request.headers,
                         expiresAtMillis: request.expiresAt.epochSeconds * 1000, total: total)
    }

    func connectionClosed(_ peer: Peer) async { state.withLock { s in s.closedConnections += 1 } }

    private func popTask() -> (TaskAssignment, [UInt8])? {
        state.withLock { s -> (TaskAssignment, [UInt8])? in
            guard !s.queue.isEmpty else { return nil }
            var task = s.queue.removeFirst()
            // The lease starts at the claim, not at enqueueing.
            task.0.expiresAtMillis = nowMillis + leaseMillis
            return task
        }
    }
}

/// A clock that stands still until the test moves it. Leases read by it expire when the test
/// says, never because a loaded machine was slow.
final class StoppedClock: Sendable {
    private let millis = Mutex<Int64>(1_800_000_000_000)

    func advance(millis step: Int64) { millis.withLock { $0 += step } }

    var farmClock: FarmClock { FarmClock { [self] in millis.withLock { $0 } } }
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes; returns whether it held.
/// The default is generous because the conditions wait on renders, which a loaded 2-core
/// machine can make slow; a condition that holds returns at once.
func eventually(timeout: Duration = .seconds(300), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}
