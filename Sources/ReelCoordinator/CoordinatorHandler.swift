import Foundation
import Logging
import ReelCore
import ReelProtocol
import ReelStore
import ReelScheduling
import Synchronization

/// The coordinator's answer to every request of proto/PROTOCOL.md §4 (`ReelRequestHandler`).
///
/// Stateless apart from which connection belongs to which registered agent: jobs, tasks,
/// leases and agents live in PostgreSQL, files in `CoordinatorStorage`, so a restarted
/// coordinator continues where the last one stopped. Store calls run on `StorePool` workers,
/// blocking file work via `offload`; nothing here blocks an event loop. An error in one
/// request becomes that request's `ERR` (`internal` for unexpected ones), never more.
final class CoordinatorHandler: ReelRequestHandler {
    let pool: StorePool
    let storage: CoordinatorStorage
    let splitter: JobSplitter
    let metrics: CoordinatorMetrics
    let configuration: CoordinatorConfiguration
    let logger: Logger
    let dispatcher: Dispatcher
    let completer: Completer
    /// Connection → the agent it registered with `CAPS`, and that agent's encoders.
    let agentSessions: AgentSessions
    /// Clients waiting in `STATUS job= wait=`, rung when a job may have ended.
    let jobWatchers: JobWatchers
    /// The loads of the render plans estimates read from stored documents, by hash.
    let renderLoads = RenderLoads()
    /// This coordinator's id in the coordinators registry (set once registered, after binding).
    private let registeredID = Atomic<Int64>(0)
    var coordinatorID: Int64 {
        get { registeredID.load(ordering: .relaxed) }
        set { registeredID.store(newValue, ordering: .relaxed) }
    }

    init(pool: StorePool, storage: CoordinatorStorage, splitter: JobSplitter, metrics: CoordinatorMetrics,
         configuration: CoordinatorConfiguration, logger: Logger, dispatcher: Dispatcher, completer: Completer,
         sessions: AgentSessions, jobWatchers: JobWatchers) {
        self.pool = pool; self.storage = storage; self.splitter = splitter; self.metrics = metrics
        self.configuration = configuration; self.logger = logger; self.dispatcher = dispatcher; self.completer = completer
        self.agentSessions = sessions; self.jobWatchers = jobWatchers
    }

    func handle(_ request: Message, from peer: Peer) async throws -> Message {
        do {
            switch request {
            case .capabilities(let caps): return try await capabilities(caps, peer: peer)
            case .claim(let wait): return try await claim(waitSeconds: wait, peer: peer)
            case .draining(let seconds): return try await draining(seconds: seconds, peer: peer)
            case .drainAgent(let name): return try await drainAgent(name: name)
            case .heartbeat(let task, let epoch): return try await heartbeat(task: task, epoch: epoch, peer: peer)
            case .progress(let task, let epoch, let frames): return try await progress(task: task, epoch: epoch, frames: frames, peer: peer)
            case .result(let task, let epoch, let sha256, let data):
                return try await result(task: task, epoch: epoch, sha256: sha256, data: data, peer: peer)
            case .poster(let task, let epoch, let jpeg):
                return try await poster(task: task, epoch: epoch, jpeg: jpeg, peer: peer)
            case .resultPart(let task, let epoch, let sha256, let offset, let total, let bytes):
                return try await resultPart(task: task, epoch: epoch, sha256: sha256, offset: offset, total: total, bytes: bytes, peer: peer)
            case .fail(let task, let epoch, let reason): return try await fail(task: task, epoch: epoch, reason: reason, peer: peer)
            case .release(let task, let epoch): return try await release(task: task, epoch: epoch, peer: peer)
            case .fetch(let sha256, let offset, let length): return try await fetch(sha256: sha256, offset: offset, length: length)
            case .sourceURL(let sha256): return try await sourceURL(sha256: sha256)
            case .resultURL(let task, let epoch, let sha256, let total):
                return try await resultURL(task: task, epoch: epoch, sha256: sha256, total: total, peer: peer)
            case .resultDone(let task, let epoch, let sha256, let total, let upload):
                return try await resultDone(task: task, epoch: epoch, sha256: sha256, total: total, upload: upload, peer: peer)
            case .resultParts(let task, let epoch, let sha256, let total):
                return try await resultParts(task: task, epoch: epoch, sha256: sha256, total: total, peer: peer)
            case .assetURL(let sha256, let total): return try await assetURL(sha256: sha256, total: total)
            case .assetParts(let sha256, let total): return try await assetParts(sha256: sha256, total: total)
            case .assetDone(let sha256, let total, let upload): return try await assetDone(sha256: sha256, total: total, upload: upload)
            case .partURL(let request): return try await partURL(request, peer: peer)
            case .outputURL(let job): return try await outputURL(job: job)
            case .finalURL(let task, let epoch, let sha256, let total):
                return try await finalURL(task: task, epoch: epoch, sha256: sha256, total: total, peer: peer)
            case .finalParts(let task, let epoch, let sha256, let total):
                return try await finalParts(task: task, epoch: epoch, sha256: sha256, total: total, peer: peer)
            case .finalDone(let task, let epoch, let sha256, let total, let loudness, let upload):
                return try await finalDone(task: task, epoch: epoch, sha256: sha256, total: total, loudness: loudness, upload: upload, peer: peer)
            case .inputBad(let task, let epoch, let sha256): return try await inputBad(task: task, epoch: epoch, sha256: sha256, peer: peer)
            case .submit(let document): return try await submit(document, peer: peer)
            case .put(let sha256, let offset, let total, let bytes): return try await put(sha256: sha256, offset: offset, total: total, bytes: bytes)
            case .status(let job, let wait): return try await status(job: job, waitSeconds: wait)
            case .agents: return try await agents()
            case .cancel(let job): return try await cancel(job: job)
            case .retry(let job): return try await retry(job: job)
            case .delete(let job): return try await delete(job: job)
            case .output(let job, let offset, let length): return try await output(job: job, offset: offset, length: length)
            case .pause(let job): return try await pause(job: job)
            case .resume(let job): return try await resume(job: job)
            case .budget(let job, let amount): return try await setBudget(job: job, amount: amount)
            case .priority(let job, let priority): return try await setPriority(job: job, priority: priority)
            case .events(let job, let after): return try await events(job: job, after: after)
            case .batch(let document): return try await openBatch(document, peer: peer)
            case .batchStatus(let batch, let rows):
                return .report(json: Array(try CoordinatorJSON.encode(try await batchReport(batch, rows: rows)).utf8))
            case .estimate(let document): return try await estimate(document)
            default:
                throw ReelProtocolError(.malformed, "\(request.verb) is not a request")
            }
        } catch let error as ReelProtocolError {
            throw error
        } catch let error as StoreError {
            switch error {
            case .jobNotFound(let job): throw ReelProtocolError(.notFound, "no job \(job)")
            case .conflict(let job, let state) where request.verb == "DELETE":
                throw ReelProtocolError(.conflict, "job \(job) is \(state.rawValue); cancel it first (reel cancel \(job)), then delete it")
            case .conflict(let job, let state): throw ReelProtocolError(.conflict, "job \(job) is already \(state.rawValue)")
            case .pausedByBudget(let job): throw ReelProtocolError(.conflict, Self.pausedByBudgetMessage(job))
            case .staleEpoch(let task, let epoch): throw ReelProtocolError(.staleEpoch, "task \(task) is not held under epoch \(epoch)")
            }
        } catch {
            logger.error("request failed", metadata: ["verb": "\(request.verb)", "peer": "\(peer.name.escapingControlCharacters)",
                                                   "error": "\("\(error)".escapingControlCharacters)"])
            throw ReelProtocolError(.internal, "internal error handling \(request.verb); see the coordinator's log")
        }
    }

    /// A pending `CLAIM` on the connection ends (no task is leased to a closed socket), and
    /// when the agent has no other connection it goes offline and the leases it holds end
    /// within `reconnectGraceSeconds` instead of the full lease, unless it reconnects and
    /// heartbeats them first (re-attaching).
    func connectionClosed(_ peer: Peer) async {
        dispatcher.connectionClosed(peer.connectionID)
        // Only mark offline if no other live connection belongs to the same agent.
        guard let (agent, last) = agentSessions.remove(connection: peer.connectionID), last else { return }
        let grace = configuration.reconnectGraceSeconds
        do {
            let shortened = try await pool.run { try $0.lifecycle.agentDisconnected(agent, graceSeconds: grace) }
            logger.info("agent disconnected", metadata: ["agent": "\(peer.name.escapingControlCharacters)",
                                                         "leasesEndingInSeconds": "\(shortened.isEmpty ? "none" : "\(grace)")"])
        } catch {
            logger.warning("could not mark agent offline", metadata: ["agent": "\(peer.name.escapingControlCharacters)", "error": "\(error)"])
        }
    }

    func handshakeFailed(_ failure: HandshakeFailure, remoteAddress: String) {
        LoginFailureLog.record(failure, remoteAddress: remoteAddress, to: logger)
    }

    /// The agent id registered on this connection.
    func agentID(_ peer: Peer) -> Int64? {
        agentSessions.agent(on: peer.connectionID)
    }
}
