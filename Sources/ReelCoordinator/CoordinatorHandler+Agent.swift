import Foundation
import ReelCore
import ReelProtocol
import ReelStore
import ReelScheduling

// Agent requests (proto/PROTOCOL.md §4.2).
extension CoordinatorHandler {
    func capabilities(_ caps: AgentCapabilities, peer: Peer) async throws -> Message {
        let json = try CoordinatorJSON.encode(caps)
        let price = configuration.agentPricing.slotCostPerHour(agentName: peer.name, stated: caps.costPerHour, slots: caps.threads)
        let (id, draining) = try await pool.run {
            try $0.agents.registration(name: peer.name, host: caps.host, capabilities: json, costPerHour: price)
        }
        agentSessions.register(connection: peer.connectionID, agent: id, encoders: caps.encoders, finalise: caps.finalise,
                               canDrain: caps.drain)
        if draining { agentSessions.drain(connection: peer.connectionID) }
        logger.info("agent registered", metadata: ["agent": "\(peer.name.escapingControlCharacters)", "host": "\(caps.host.escapingControlCharacters)",
                                                   "threads": "\(caps.threads)", "encoders": "\(caps.encoders.joined(separator: ","))"])
        return .ok
    }

    /// Long poll: waits in the dispatcher's queue for a task until `wait` runs out, the
    /// connection closes or shutdown. Finalise tasks go only to agents that said `finalise=1`,
    /// and only with an object store (§4.5.1); else the coordinator runs them.
    func claim(waitSeconds: Int, peer: Peer) async throws -> Message {
        guard let agent = agentID(peer) else { throw ReelProtocolError(.noCapabilities, "send CAPS before CLAIM") }
        let wait = Duration.seconds(max(0, min(waitSeconds, configuration.maxClaimWaitSeconds)))
        // An agent asked to drain gets `DRAIN` instead of work (also when asked while it waited).
        if agentSessions.mustDrain(peer.connectionID) { return .drain }
        guard let claimed = await dispatcher.claim(agent: agent, connection: peer.connectionID, wait: wait) else {
            return agentSessions.mustDrain(peer.connectionID) ? .drain : .noTask
        }
        metrics.claims.increment()
        let payload: [UInt8]
        do {
            payload = try await specification(for: claimed)
        } catch is FinaliseRequeued {
            // Its inputs go back to be rendered (a fresh attempt of the finalise follows).
            return .noTask
        } catch {
            // The task cannot be described (its plan document is missing): hand it back
            // un-attempted rather than burn an attempt on an agent that cannot run it.
            _ = try? await pool.run { try $0.lifecycle.release(claimed.lease) }
            throw error
        }
        logger.debug("task claimed", metadata: ["agent": "\(peer.name.escapingControlCharacters)", "task": "\(claimed.id)",
                                                "job": "\(claimed.jobID)", "epoch": "\(claimed.epoch)"])
        return .task(TaskAssignment(task: claimed.id, job: claimed.jobID, kind: claimed.kind, frameStart: claimed.frameStart,
                                    frameEnd: claimed.frameEnd, epoch: claimed.epoch, expiresAtMillis: claimed.leaseExpiresAtMillis),
                     specification: payload)
    }

    /// `TASK`'s payload: the task's frames and its job's plan document by content. A task
    /// planned before plan documents existed carries its whole plan in its row; its job's
    /// document is stored on first claim (`RenderPlanDocuments.adoptLegacy`).
    func specification(for claimed: ClaimedTask) async throws -> [UInt8] {
        let reference: RenderPlanReference
        var frames = FrameRange(start: Int(claimed.frameStart), end: Int(claimed.frameEnd))
        if let document = claimed.planDocument {
            reference = document
        } else {
            let legacy = try await RenderPlanDocuments.adoptLegacy(claimed, storage: storage, pool: pool)
            reference = legacy.reference
            if claimed.kind == .audio { frames = legacy.frames }
        }
        if claimed.kind == .audio, frames.count == 0, let count = try? await RenderPlanDocuments.frameCount(of: reference, storage: storage) {
            frames = FrameRange(start: 0, end: count)
        }
        // A ladder chunk whose other renditions are reused encodes only these (nil: all).
        let renditions = claimed.kind == .videoChunk ? claimed.renditionsToEncode : nil
        let specification = claimed.kind == .finalise
            ? try await finaliseSpecification(for: claimed, planDocument: reference)
            : TaskSpecification(job: claimed.jobID, task: claimed.id, kind: claimed.kind, frames: frames,
                                planDocument: AssetManifestEntry(sha256: reference.sha256, size: reference.size), renditions: renditions)
        return Array(try CoordinatorJSON.encode(specification).utf8)
    }

    func heartbeat(task: Int64, epoch: Int64, peer: Peer) async throws -> Message {
        guard let agent = agentID(peer) else { return .lost(task: task) }
        let leaseSeconds = configuration.leaseSeconds
        do {
            // Renewing is also the agent's sign of life (one statement).
            let expires = try await pool.run { try $0.lifecycle.renew(Lease(task: task, epoch: epoch, agent: agent), leaseSeconds: leaseSeconds) }
            return .lease(task: task, epoch: epoch, expiresAtMillis: expires, drain: agentSessions.mustDrain(peer.connectionID))
        } catch StoreError.staleEpoch {
            return .lost(task: task)
        }
    }

    /// `DRAINING`: the agent claims nothing more and finishes what it holds; `reel agents` and
    /// the console show it draining until it says goodbye.
    func draining(seconds: Int, peer: Peer) async throws -> Message {
        guard let agent = agentID(peer) else { throw ReelProtocolError(.noCapabilities, "send CAPS before DRAINING") }
        agentSessions.drain(connection: peer.connectionID)
        try await pool.run { try $0.agents.setState(agent, .draining) }
        logger.notice("agent draining", metadata: ["agent": "\(peer.name.escapingControlCharacters)", "within": "\(seconds) s"])
        return .ok
    }

    func progress(task: Int64, epoch: Int64, frames: Int64, peer: Peer) async throws -> Message {
        guard let agent = agentID(peer) else { return .lost(task: task) }
        do {
            try await pool.run { try $0.lifecycle.recordProgress(Lease(task: task, epoch: epoch, agent: agent), frames: frames) }
            return .ok
        } catch StoreError.staleEpoch {
            return .lost(task: task)
        }
    }

    /// Verifies size and SHA-256, stores the bytes content-addressed, then completes the task
    /// under its lease (checksum first: a corrupt upload is refused whatever its epoch).
    func result(task: Int64, epoch: Int64, sha256: String, data: [UInt8], peer: Peer) async throws -> Message {
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.checksumMismatch, "sha256 must be 64 lower-case hex digits") }
        metrics.bytesIn.increment(by: Int64(data.count))
        let lease = try heldLease(task: task, epoch: epoch, peer: peer)
        let key = try await storage.storeResult(data, sha256: sha256)
        return try await complete(lease, result: TaskResult(sha256: sha256, size: Int64(data.count), key: key), peer: peer)
    }

    /// One range of a result uploaded in parts: fenced like every message about a task (a stale
    /// epoch discards the partial upload: it can never complete), appended to the partial file and
    /// hashed as it arrives; the part that completes it is verified and completes the task exactly
    /// as a one-payload `RESULT` does. Each part renews the lease, so a long upload keeps it.
    func resultPart(task: Int64, epoch: Int64, sha256: String, offset: Int64, total: Int64, bytes: [UInt8],
                    peer: Peer) async throws -> Message {
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.checksumMismatch, "sha256 must be 64 lower-case hex digits") }
        metrics.bytesIn.increment(by: Int64(bytes.count))
        let lease = try heldLease(task: task, epoch: epoch, peer: peer)
        let storage = storage, leaseSeconds = configuration.leaseSeconds
        let expires: Int64
        do {
            expires = try await pool.run { try $0.lifecycle.renew(lease, leaseSeconds: leaseSeconds) }
        } catch StoreError.staleEpoch {
            let freed = try await offload { storage.discardResultUploads(task: task, epoch: epoch) }
            if freed > 0 { logger.info("partial result discarded: its lease is gone", metadata: ["task": "\(task)", "epoch": "\(epoch)", "bytes": "\(freed)"]) }
            throw ReelProtocolError(.staleEpoch, "task \(task) is no longer held under epoch \(epoch) by \(peer.name); its partial upload is discarded")
        }
        let outcome = try await offload {
            try storage.appendResultPart(task: task, epoch: epoch, sha256: sha256, offset: offset, total: total, bytes: bytes)
        }
        switch outcome {
        case .held(let have):
            return .resultStored(task: task, have: have, total: total, expiresAtMillis: expires)
        case .complete:
            try await storage.publish(.result(sha256: sha256), sha256: sha256)
            return try await complete(lease, result: TaskResult(sha256: sha256, size: total, key: storage.storedKey(.result(sha256: sha256))),
                                      peer: peer)
        }
    }

    /// The lease an agent's message about `task` claims; a connection that sent no `CAPS` holds none.
    private func heldLease(task: Int64, epoch: Int64, peer: Peer) throws -> Lease {
        guard let agent = agentID(peer) else { throw ReelProtocolError(.staleEpoch, "task \(task): this connection holds no lease (send CAPS)") }
        return Lease(task: task, epoch: epoch, agent: agent)
    }

    /// Completes the task with its verified, stored result (`Completer`, batched).
    func complete(_ lease: Lease, result: TaskResult, peer: Peer) async throws -> Message {
        guard let completion = try await completer.complete(lease, result: result) else {
            throw ReelProtocolError(.staleEpoch, "task \(lease.task) is no longer held under epoch \(lease.epoch) by \(peer.name)")
        }
        metrics.framesRendered.increment(by: completion.frames)
        logger.debug("result accepted", metadata: ["agent": "\(peer.name.escapingControlCharacters)", "task": "\(lease.task)",
                                                   "job": "\(completion.jobID)", "bytes": "\(result.size)"])
        return .accepted(task: lease.task)
    }

    func fail(task: Int64, epoch: Int64, reason: String, peer: Peer) async throws -> Message {
        guard let agent = agentID(peer) else { return .lost(task: task) }
        do {
            let policy = configuration.quarantine
            let report = try await pool.run { try $0.lifecycle.fail(Lease(task: task, epoch: epoch, agent: agent), message: reason, policy: policy) }
            logger.warning("task failed", metadata: ["agent": "\(peer.name.escapingControlCharacters)", "task": "\(task)", "reason": "\(reason.escapingControlCharacters)",
                                                     "outcome": "\(report.outcome)"])
            dispatcher.wake()
            if case .jobFailed(let job) = report.outcome { jobWatchers.jobMayHaveEnded(job) }
            if let until = report.quarantinedUntilMillis {
                logger.warning("agent quarantined: it failed \(policy.failures) tasks within \(Int(policy.windowSeconds)) s",
                               metadata: ["agent": "\(peer.name.escapingControlCharacters)", "untilMillis": "\(until)"])
            }
            return .ok
        } catch StoreError.staleEpoch {
            return .lost(task: task)
        }
    }

    func release(task: Int64, epoch: Int64, peer: Peer) async throws -> Message {
        guard let agent = agentID(peer) else { return .lost(task: task) }
        do {
            try await pool.run { try $0.lifecycle.release(Lease(task: task, epoch: epoch, agent: agent)) }
            dispatcher.wake()
            return .ok
        } catch StoreError.staleEpoch {
            return .lost(task: task)
        }
    }

    func fetch(sha256: String, offset: Int64, length: Int64) async throws -> Message {
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.notFound, "no source \(sha256)") }
        let (total, bytes) = try await storage.readRange(.asset(sha256: sha256), offset: offset, length: length)
        metrics.bytesOut.increment(by: Int64(bytes.count))
        return .data(offset: offset, total: total, bytes: bytes)
    }
}
