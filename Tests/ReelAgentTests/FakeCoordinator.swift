import Foundation
import NIOCore
import NIOSSL
import ReelMedia
import ReelProtocol

/// A coordinator stand-in: a real `ReelServer` whose handler serves queued tasks, answers
/// `FETCH` from in-memory asset bytes and records everything the agent says. Knobs make it
/// lose leases, drop connections or refuse results, so each test drives one agent path.
final class FakeCoordinator: ReelRequestHandler, @unchecked Sendable {
    struct Result: Sendable { var task: Int64; var epoch: Int64; var sha256: String; var bytes: [UInt8]; var connection: UInt64 }
    struct Failure: Sendable { var task: Int64; var epoch: Int64; var reason: String }

    private let lock = NSLock()
    // Guarded by `lock`.
    private var assets: [String: [UInt8]] = [:]
    private var queue: [(TaskAssignment, [UInt8])] = []
    private(set) var _results: [Result] = []
    private var _resultAttempts: [Result] = []
    private var _fails: [Failure] = []
    private var _releases: [(task: Int64, epoch: Int64)] = []
    private var _progress: [Int64] = []
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
    /// Refuse the next `RESULT`s with these errors, in order, before accepting again
    /// (`shutting_down` also closes the connection, as a draining coordinator does).
    var refuseResults: [ReelProtocolError] { get { lock.withLock { _refuse } } set { lock.withLock { _refuse = newValue } } }
    private var _refuse: [ReelProtocolError] = []
    /// With `refuseResults`: the lease is lost as the result is refused (`LOST` from then on).
    var loseLeaseOnRefusal: Bool { get { lock.withLock { _loseOnRefusal } } set { lock.withLock { _loseOnRefusal = newValue } } }
    private var _loseOnRefusal = false
    /// Lease length handed out with `TASK` and `LEASE`.
    let leaseMillis: Int64
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
            epoch: epoch, expiresAtMillis: Self.nowMillis + leaseMillis)
        lock.withLock { queue.append((assignment, bytes)) }
    }

    /// Accepted results.
    var results: [Result] { lock.withLock { _results } }
    /// Every `RESULT` received, refused or accepted.
    var resultAttempts: [Result] { lock.withLock { _resultAttempts } }
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

    static var nowMillis: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

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
                return .lease(task: task, epoch: epoch, expiresAtMillis: Self.nowMillis + leaseMillis)
            }
        case .progress(let task, _, let frames):
            return lock.withLock { () -> Message in
                _progress.append(frames)
                if _loseLeases { _lostSent += 1; return .lost(task: task) }
                return .ok
            }
        case .result(let task, let epoch, let sha256, let data):
            let refusal = lock.withLock { () -> ReelProtocolError? in
                let result = Result(task: task, epoch: epoch, sha256: sha256, bytes: data, connection: peer.connectionID)
                _resultAttempts.append(result)
                if !_refuse.isEmpty {
                    if _loseOnRefusal { _loseLeases = true }
                    return _refuse.removeFirst()
                }
                _results.append(result)
                return nil
            }
            if let refusal { throw refusal }
            return .accepted(task: task)
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
            task.0.expiresAtMillis = Self.nowMillis + leaseMillis
            return task
        }
    }
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
