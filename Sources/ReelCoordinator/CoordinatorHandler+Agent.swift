import Foundation
import ReelCore
import ReelMedia
import ReelProtocol
import ReelStore

// Agent requests (proto/PROTOCOL.md §4.2).
extension CoordinatorHandler {
    func capabilities(_ caps: AgentCapabilities, peer: Peer) async throws -> Message {
        let json = try CoordinatorJSON.encode(caps)
        let id = try await pool.run { try $0.registerAgent(name: peer.name, host: caps.host, capabilities: json) }
        agentSessions.withValue { $0[peer.connectionID] = id }
        logger.info("agent registered", metadata: ["agent": "\(peer.name.escapingControlCharacters)", "host": "\(caps.host.escapingControlCharacters)", "threads": "\(caps.threads)"])
        return .ok
    }

    /// Long poll: claims a render task (never a finalise task — the coordinator runs those),
    /// re-checking every `claimPollInterval` until `wait` runs out or shutdown begins.
    func claim(waitSeconds: Int, peer: Peer) async throws -> Message {
        guard let agent = agentID(peer) else { throw ReelProtocolError(.noCapabilities, "send CAPS before CLAIM") }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(max(0, min(waitSeconds, configuration.maxClaimWaitSeconds)))
        let leaseSeconds = configuration.leaseSeconds, finaliser = configuration.finaliserAgentName
        // An agent counts as live for "someone else can take this task" while it heartbeats
        // within two leases (idle agents heartbeat with every claim poll, busy ones every lease/3).
        let liveSeconds = 2 * leaseSeconds
        while true {
            if draining.current { return .noTask }
            let claimed = try await pool.run { store -> ClaimedTask? in
                try store.agentHeartbeat(agent)
                return try store.claimTask(agent: agent, leaseSeconds: leaseSeconds, kinds: [.videoChunk, .audio],
                                           liveSeconds: liveSeconds, excludingAgentNamed: finaliser)
            }
            if let claimed {
                metrics.claims.increment()
                var specification = try CoordinatorJSON.decode(TaskSpecification.self, from: claimed.spec)
                specification.task = claimed.id
                let payload = Array(try CoordinatorJSON.encode(specification).utf8)
                let kind: TaskKind = claimed.kind == .audio ? .audio : .videoChunk
                logger.info("task claimed", metadata: ["agent": "\(peer.name.escapingControlCharacters)", "task": "\(claimed.id)", "job": "\(claimed.jobID)",
                                                       "epoch": "\(claimed.epoch)"])
                return .task(TaskAssignment(task: claimed.id, job: claimed.jobID, kind: kind, frameStart: claimed.frameStart,
                                            frameEnd: claimed.frameEnd, epoch: claimed.epoch, expiresAtMillis: claimed.leaseExpiresAtMillis),
                             specification: payload)
            }
            let now = clock.now
            if now >= deadline { return .noTask }
            try await Task.sleep(for: min(configuration.claimPollInterval, deadline - now))
        }
    }

    func heartbeat(task: Int64, epoch: Int64, peer: Peer) async throws -> Message {
        guard let agent = agentID(peer) else { return .lost(task: task) }
        let leaseSeconds = configuration.leaseSeconds
        do {
            let expires = try await pool.run { store in
                try store.agentHeartbeat(agent)
                return try store.renewLease(Lease(task: task, epoch: epoch, agent: agent), leaseSeconds: leaseSeconds)
            }
            return .lease(task: task, epoch: epoch, expiresAtMillis: expires)
        } catch JobStoreError.staleEpoch {
            return .lost(task: task)
        }
    }

    func progress(task: Int64, epoch: Int64, frames: Int64, peer: Peer) async throws -> Message {
        guard let agent = agentID(peer) else { return .lost(task: task) }
        do {
            try await pool.run { store in
                try store.agentHeartbeat(agent)
                try store.recordProgress(Lease(task: task, epoch: epoch, agent: agent), frames: frames)
            }
            return .ok
        } catch JobStoreError.staleEpoch {
            return .lost(task: task)
        }
    }

    /// Verifies size and SHA-256, stores the bytes content-addressed, then completes the task
    /// under its lease (checksum first: a corrupt upload is refused whatever its epoch).
    func result(task: Int64, epoch: Int64, sha256: String, data: [UInt8], peer: Peer) async throws -> Message {
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.checksumMismatch, "sha256 must be 64 lower-case hex digits") }
        metrics.bytesIn.increment(by: Int64(data.count))
        guard let agent = agentID(peer) else { throw ReelProtocolError(.staleEpoch, "task \(task): this connection holds no lease (send CAPS)") }
        let storage = storage
        let path = try await offload { try storage.storeResult(data, sha256: sha256) }
        let lease = Lease(task: task, epoch: epoch, agent: agent)
        let outcome: (Completion, Int64)
        do {
            outcome = try await pool.run { store in
                let completion = try store.complete(lease, result: TaskResult(sha256: sha256, size: Int64(data.count), key: path))
                let frames = try store.tasks(ofJob: completion.jobID).first { $0.id == task && $0.kind == .videoChunk }
                    .map { $0.frameEnd - $0.frameStart } ?? 0
                return (completion, frames)
            }
        } catch JobStoreError.staleEpoch {
            throw ReelProtocolError(.staleEpoch, "task \(task) is no longer held under epoch \(epoch) by \(peer.name)")
        }
        metrics.framesRendered.increment(by: outcome.1)
        logger.info("result accepted", metadata: ["agent": "\(peer.name.escapingControlCharacters)", "task": "\(task)", "job": "\(outcome.0.jobID)", "bytes": "\(data.count)"])
        return .accepted(task: task)
    }

    func fail(task: Int64, epoch: Int64, reason: String, peer: Peer) async throws -> Message {
        guard let agent = agentID(peer) else { return .lost(task: task) }
        do {
            let policy = configuration.quarantine
            let report = try await pool.run { try $0.fail(Lease(task: task, epoch: epoch, agent: agent), message: reason, policy: policy) }
            logger.warning("task failed", metadata: ["agent": "\(peer.name.escapingControlCharacters)", "task": "\(task)", "reason": "\(reason.escapingControlCharacters)",
                                                     "outcome": "\(report.outcome)"])
            if let until = report.quarantinedUntilMillis {
                logger.warning("agent quarantined: it failed \(policy.failures) tasks within \(Int(policy.windowSeconds)) s",
                               metadata: ["agent": "\(peer.name.escapingControlCharacters)", "untilMillis": "\(until)"])
            }
            return .ok
        } catch JobStoreError.staleEpoch {
            return .lost(task: task)
        }
    }

    func release(task: Int64, epoch: Int64, peer: Peer) async throws -> Message {
        guard let agent = agentID(peer) else { return .lost(task: task) }
        do {
            try await pool.run { try $0.release(Lease(task: task, epoch: epoch, agent: agent)) }
            return .ok
        } catch JobStoreError.staleEpoch {
            return .lost(task: task)
        }
    }

    func fetch(sha256: String, offset: Int64, length: Int64) async throws -> Message {
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.notFound, "no source \(sha256)") }
        let path = storage.assetPath(sha256)
        let (total, bytes) = try await offload { try CoordinatorStorage.readRange(path: path, offset: offset, length: length) }
        metrics.bytesOut.increment(by: Int64(bytes.count))
        return .data(offset: offset, total: total, bytes: bytes)
    }
}
