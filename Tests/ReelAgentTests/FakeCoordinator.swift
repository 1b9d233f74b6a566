import Foundation
import NIOCore
import NIOSSL
import ReelCore
import ReelMedia
import ReelProtocol

/// A coordinator stand-in: a real `ReelServer` whose handler serves queued tasks, answers
/// `FETCH` from in-memory asset bytes and records everything the agent says. Knobs make it
/// lose leases, drop connections or refuse results, so each test drives one agent path.
final class FakeCoordinator: ReelRequestHandler, @unchecked Sendable {
    struct Result: Sendable { var task: Int64; var epoch: Int64; var sha256: String; var bytes: [UInt8]; var connection: UInt64 }
    struct Failure: Sendable { var task: Int64; var epoch: Int64; var reason: String }
    /// One `RESULTPART` as received (before it was stored or refused).
    struct Part: Sendable { var task: Int64; var epoch: Int64; var offset: Int64; var count: Int; var connection: UInt64 }

    private let lock = NSLock()
    // Guarded by `lock`.
    private var assets: [String: [UInt8]] = [:]
    private var queue: [(TaskAssignment, [UInt8])] = []
    private(set) var _results: [Result] = []
    private var _resultAttempts: [Result] = []
    private var _parts: [Part] = []
    /// Bytes held of each result upload in progress, by "task-epoch".
    private var partials: [String: [UInt8]] = [:]
    private var _fails: [Failure] = []
    private var _releases: [(task: Int64, epoch: Int64)] = []
    private var _progress: [Int64] = []
    private var _posters: [(task: Int64, jpeg: [UInt8])] = []
    private var _heartbeats = 0
    private var _fetchedBytes = 0
    private var _fetchCount = 0
    private var _caps: [AgentCapabilities] = []
    private var _claims = 0
    private var _connections: Set<UInt64> = []
    private var _names: Set<String> = []
    private var _closed = 0
    private var _lostSent = 0

    /// Answer `LOST` to every `HEARTBEAT` and `PROGRESS`.
    var loseLeases: Bool { get { lock.withLock { _loseLeases } } set { lock.withLock { _loseLeases = newValue } } }
    private var _loseLeases = false
    /// Drop the connection (`ERR shutting_down`) at the n-th `FETCH` (1-based), once.
    var dropConnectionAtFetch: Int? { get { lock.withLock { _dropAt } } set { lock.withLock { _dropAt = newValue } } }
    private var _dropAt: Int?
    /// Refuse the next results (the part that would complete each) with these errors, in order, before accepting again
    /// (`shutting_down` also closes the connection, as a draining coordinator does).
    var refuseResults: [ReelProtocolError] { get { lock.withLock { _refuse } } set { lock.withLock { _refuse = newValue } } }
    private var _refuse: [ReelProtocolError] = []
    /// With `refuseResults`: the lease is lost as the result is refused (`LOST` from then on).
    var loseLeaseOnRefusal: Bool { get { lock.withLock { _loseOnRefusal } } set { lock.withLock { _loseOnRefusal = newValue } } }
    private var _loseOnRefusal = false
    /// Store the n-th `RESULTPART` (1-based), then drop the connection (`ERR shutting_down`)
    /// before replying, once: the agent never hears that the part arrived.
    var dropConnectionAfterPart: Int? { get { lock.withLock { _dropAfterPart } } set { lock.withLock { _dropAfterPart = newValue } } }
    private var _dropAfterPart: Int?
    /// Answer the n-th `RESULTPART` (1-based) `ERR stale_epoch` and discard its upload, and
    /// lose the lease from then on (`LOST`), as when the task was re-queued meanwhile.
    var staleEpochAtPart: Int? { get { lock.withLock { _staleAtPart } } set { lock.withLock { _staleAtPart = newValue } } }
    private var _staleAtPart: Int?
    /// Called as each `RESULTPART` arrives, before it is handled: a test moves `clock` here to
    /// make the link as slow as it likes, in the time leases are read by.
    var onPart: (@Sendable () -> Void)? { get { lock.withLock { _onPart } } set { lock.withLock { _onPart = newValue } } }
    private var _onPart: (@Sendable () -> Void)?
    /// Lease length handed out with `TASK` and `LEASE`.
    let leaseMillis: Int64
    /// The clock lease expiries are read by; `RunningAgent` gives the agent the same one. It
    /// stands still unless a test moves it, so no agent test sees a lease expire because the
    /// machine was slow.
    let clock = StoppedClock()
    /// How long an empty `CLAIM` is held before `NONE` (shorter than the agent's wait, to keep tests quick).
    let claimHoldMillis: Int64

    let authenticator: Authenticator
    private(set) var server: ReelServer!
    var port: Int { server.localAddress!.port! }

    init(leaseMillis: Int64 = 30_000, claimHoldMillis: Int64 = 100) throws {
        self.leaseMillis = leaseMillis
        self.claimHoldMillis = claimHoldMillis
        self.authenticator = try Authenticator(secret: Array("agent-tests-shared-secret".utf8))
    }

    func start(tls: NIOSSLContext? = nil) async throws {
        server = try await ReelServer.start(configuration: ReelServerConfiguration(host: "127.0.0.1", port: 0, tls: tls),
                                            authenticator: authenticator, handler: self)
    }

    func stop() async { try? await server.close() }

    func addAsset(_ bytes: [UInt8], hash: String) { lock.withLock { assets[hash] = bytes } }

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
        lock.withLock { queue.append((assignment, bytes)) }
    }

    /// Accepted results.
    var results: [Result] { lock.withLock { _results } }
    /// `POSTER`s received.
    var posters: [(task: Int64, jpeg: [UInt8])] { lock.withLock { _posters } }
    /// Every complete result received (the part completing it), refused or accepted.
    var resultAttempts: [Result] { lock.withLock { _resultAttempts } }
    /// Every `RESULTPART` received, in order.
    var parts: [Part] { lock.withLock { _parts } }
    /// Uploads begun and neither completed nor discarded.
    var partialUploads: Int { lock.withLock { partials.count } }
    var fails: [Failure] { lock.withLock { _fails } }
    var releases: [(task: Int64, epoch: Int64)] { lock.withLock { _releases } }
    var progressFrames: [Int64] { lock.withLock { _progress } }
    var heartbeats: Int { lock.withLock { _heartbeats } }
    var fetchedBytes: Int { lock.withLock { _fetchedBytes } }
    var fetchCount: Int { lock.withLock { _fetchCount } }
    var capabilities: [AgentCapabilities] { lock.withLock { _caps } }
    var claims: Int { lock.withLock { _claims } }
    var connectionCount: Int { lock.withLock { _connections.count } }
    var peerNames: Set<String> { lock.withLock { _names } }
    var closedConnections: Int { lock.withLock { _closed } }
    var lostSent: Int { lock.withLock { _lostSent } }
    var queuedTasks: Int { lock.withLock { queue.count } }

    private var nowMillis: Int64 { clock.farmClock.nowMillis() }

    func handle(_ request: Message, from peer: Peer) async throws -> Message {
        lock.withLock {
            _connections.insert(peer.connectionID)
            _names.insert(peer.name)
        }
        switch request {
        case .capabilities(let caps):
            lock.withLock { _caps.append(caps) }
            return .ok
        case .claim(let wait):
            lock.withLock { _claims += 1 }
            if let task = popTask() { return .task(task.0, specification: task.1) }
            try await Task.sleep(for: .milliseconds(min(Int64(wait) * 1000, claimHoldMillis)))
            if let task = popTask() { return .task(task.0, specification: task.1) }
            return .noTask
        case .heartbeat(let task, let epoch):
            return lock.withLock { () -> Message in
                _heartbeats += 1
                if _loseLeases { _lostSent += 1; return .lost(task: task) }
                return .lease(task: task, epoch: epoch, expiresAtMillis: nowMillis + leaseMillis)
            }
        case .poster(let task, _, let jpeg):
            return lock.withLock { () -> Message in
                _posters.append((task, jpeg))
                return _loseLeases ? .lost(task: task) : .ok
            }
        case .progress(let task, _, let frames):
            return lock.withLock { () -> Message in
                _progress.append(frames)
                if _loseLeases { _lostSent += 1; return .lost(task: task) }
                return .ok
            }
        case .resultPart(let task, let epoch, let sha256, let offset, let total, let bytes):
            onPart?()
            return try lock.withLock { () throws -> Message in
                _parts.append(Part(task: task, epoch: epoch, offset: offset, count: bytes.count, connection: peer.connectionID))
                let key = "\(task)-\(epoch)"
                if let stale = _staleAtPart, stale == _parts.count {
                    partials[key] = nil
                    _loseLeases = true
                    throw ReelProtocolError(.staleEpoch, "task \(task) is held under epoch \(epoch + 1)")
                }
                var held = partials[key] ?? []
                guard offset == Int64(held.count) else {
                    throw ReelProtocolError.outOfOrder(have: Int64(held.count), "send offset \(held.count), not \(offset)")
                }
                held += bytes
                if let drop = _dropAfterPart, drop == _parts.count {
                    _dropAfterPart = nil
                    partials[key] = held
                    throw ReelProtocolError(.shuttingDown, "test drops the connection after storing the part")
                }
                guard Int64(held.count) == total else {
                    partials[key] = held
                    return .resultStored(task: task, have: Int64(held.count), total: total, expiresAtMillis: nowMillis + leaseMillis)
                }
                // The part completing the upload: refused (not stored) or accepted, as RESULT was.
                let result = Result(task: task, epoch: epoch, sha256: sha256, bytes: held, connection: peer.connectionID)
                _resultAttempts.append(result)
                if !_refuse.isEmpty {
                    if _loseOnRefusal { _loseLeases = true }
                    throw _refuse.removeFirst()
                }
                guard FileDigest.sha256(bytes: held) == sha256 else {
                    partials[key] = nil
                    throw ReelProtocolError(.checksumMismatch, "the fake coordinator got other bytes than \(sha256)")
                }
                partials[key] = nil
                _results.append(result)
                return .accepted(task: task)
            }
        case .fail(let task, let epoch, let reason):
            lock.withLock { _fails.append(Failure(task: task, epoch: epoch, reason: reason)) }
            return .ok
        case .release(let task, let epoch):
            lock.withLock { _releases.append((task, epoch)) }
            return .ok
        case .fetch(let sha256, let offset, let length):
            // Plan documents are served apart and not counted: the counters are about sources.
            if let document = TestPlanDocuments.bytes(sha256) {
                let end = min(Int64(document.count), offset + length)
                return .data(offset: offset, total: Int64(document.count), bytes: Array(document[Int(min(offset, end))..<Int(end)]))
            }
            let reply: Message? = try lock.withLock { () throws -> Message? in
                _fetchCount += 1
                if let drop = _dropAt, drop == _fetchCount {
                    _dropAt = nil
                    throw ReelProtocolError(.shuttingDown, "test drops the connection")
                }
                guard let bytes = assets[sha256] else { return nil }
                guard offset <= Int64(bytes.count) else { throw ReelProtocolError(.badRange, "offset beyond the end") }
                let end = min(Int64(bytes.count), offset + length)
                let slice = Array(bytes[Int(offset)..<Int(end)])
                _fetchedBytes += slice.count
                return .data(offset: offset, total: Int64(bytes.count), bytes: slice)
            }
            guard let reply else { throw ReelProtocolError(.notFound, "no asset \(sha256)") }
            return reply
        default:
            throw ReelProtocolError(.forbidden, "the fake coordinator does not serve \(request.verb)")
        }
    }

    func connectionClosed(_ peer: Peer) async { lock.withLock { _closed += 1 } }

    private func popTask() -> (TaskAssignment, [UInt8])? {
        lock.withLock { () -> (TaskAssignment, [UInt8])? in
            guard !queue.isEmpty else { return nil }
            var task = queue.removeFirst()
            // The lease starts at the claim, not at enqueueing.
            task.0.expiresAtMillis = nowMillis + leaseMillis
            return task
        }
    }
}

/// A clock that stands still until the test moves it. Leases read by it expire when the test
/// says, never because a loaded machine was slow.
final class StoppedClock: @unchecked Sendable {
    private let lock = NSLock()
    private var millis: Int64 = 1_800_000_000_000

    func advance(millis step: Int64) { lock.withLock { millis += step } }

    var farmClock: FarmClock { FarmClock { [self] in lock.withLock { millis } } }
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes; returns whether it held.
func eventually(timeout: Duration = .seconds(60), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}
