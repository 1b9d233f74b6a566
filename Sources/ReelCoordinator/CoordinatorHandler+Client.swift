import Foundation
import Logging
import ReelCore
import ReelObjectStore
import ReelProtocol
import ReelStore
import ReelScheduling

// Operator client requests (proto/PROTOCOL.md §4.3).
extension CoordinatorHandler {
    /// Validates the submission, records the job (waiting for its assets) and answers the
    /// hashes still to upload; a job with nothing missing is planned before the reply.
    func submit(_ document: [UInt8], peer: Peer) async throws -> Message {
        let request: SubmitRequest
        do {
            request = try JSONDecoder().decode(SubmitRequest.self, from: Data(document))
        } catch {
            throw ReelProtocolError(.invalidComposition, "the SUBMIT payload is not a submission document: \(error)")
        }
        let (job, missing) = try await createJob(request)
        var metadata: Logger.Metadata = ["job": "\(job)", "by": "\(peer.name.escapingControlCharacters)", "missing": "\(missing.count)"]
        if let batch = request.settings.batch { metadata["batch"] = "\(batch.id)"; metadata["row"] = "\(batch.row)" }
        logger.info("job submitted", metadata: metadata)
        return .job(id: job, missing: missing)
    }

    /// Checks a submission as `SUBMIT` does and records its job (in its batch, with
    /// `settings.batch`); the job waits for its assets, and one with nothing missing is planned
    /// at once (a batch's later rows once its first has ended). Returns the job and the asset
    /// hashes still to upload. The console's `POST /api/v1/batches` creates its rows' jobs here too.
    func createJob(_ request: SubmitRequest) async throws -> (job: Int64, missing: [String]) {
        let composition: Composition
        do {
            composition = try Composition.parse(request.composition)
        } catch {
            throw ReelProtocolError(.invalidComposition, error.summary)
        }
        if let problem = CompositionValidator.timeProblems(composition).first {
            throw ReelProtocolError(.invalidComposition, problem.description)
        }
        // Settings are input too: a raw SUBMIT may carry any value.
        if let seconds = request.settings.chunkSeconds, let problem = RenderLimits.problem(withChunkSeconds: seconds) {
            throw ReelProtocolError(.invalidComposition, "settings.chunkSeconds: \(problem)")
        }
        if let threads = request.settings.encoderThreads, !(1...64).contains(threads) {
            throw ReelProtocolError(.invalidComposition, "settings.encoderThreads: must be 1…64")
        }
        if let priority = request.settings.priority, !JobPriority.range.contains(priority) {
            throw ReelProtocolError(.invalidComposition, "settings.priority: must be \(JobPriority.range.lowerBound)…\(JobPriority.range.upperBound)")
        }
        if let url = request.settings.notify, let problem = JobSettings.problem(withNotifyURL: url) {
            throw ReelProtocolError(.invalidComposition, "settings.notify: \(problem)")
        }
        var budget: JobBudget?
        if let text = request.settings.budget {
            guard let parsed = JobBudget(parsing: text) else {
                throw ReelProtocolError(.invalidComposition, "settings.budget: '\(text.escapingControlCharacters)' is not a budget: give \(JobBudget.syntax)")
            }
            budget = parsed
        }
        var hashes: Set<String> = []
        for id in composition.assets.keys.sorted() {
            guard let entry = request.assets[id] else {
                throw ReelProtocolError(.invalidComposition, "asset \(id) is not in the submission's asset manifest")
            }
            guard CoordinatorStorage.isValidHash(entry.sha256), entry.size >= 0 else {
                throw ReelProtocolError(.invalidComposition, "asset \(id): sha256 must be 64 lower-case hex digits and size ≥ 0")
            }
            hashes.insert(entry.sha256)
        }
        let used = request.assets.filter { composition.assets[$0.key] != nil }
        let settings = try CoordinatorJSON.encode(StoredJobSettings(settings: request.settings, assets: used))
        let text = request.composition
        try await forgetDamagedAssets(hashes.sorted())
        let membership = request.settings.batch
        if let membership, membership.row < 1 { throw ReelProtocolError(.invalidComposition, "settings.batch.row: must be ≥ 1") }
        let (job, missing) = try await pool.run { [hashes, budget] store in
            if let membership {
                guard let batch = try store.batches.record(membership.id) else {
                    throw ReelProtocolError(.notFound, "no batch \(membership.id) (open one with BATCH first)")
                }
                // Rows are numbered as in the rows file, so a batch of the rows not done yet (or
                // without an invalid one) has gaps; it takes as many rows as it was opened with.
                guard try !store.batches.isTaken(BatchRowReference(batch: batch.id, row: membership.row)) else {
                    throw ReelProtocolError(.conflict, "row \(membership.row) of batch \(batch.id) has a job already")
                }
                guard try store.batches.jobCount(of: batch.id) < batch.rows else {
                    throw ReelProtocolError(.invalidComposition,
                                            "settings.batch.row: batch \(batch.id) was opened for \(batch.rows) rows, and has them all (row \(membership.row) is one more)")
                }
            }
            let job = try store.jobs.create(NewJob(composition: text, settings: settings, tasks: [], assets: hashes.sorted(),
                                                 waitingForAssets: true, priority: request.settings.priority ?? 0,
                                                 notifyURL: request.settings.notify,
                                                 batch: membership.map { BatchRowReference(batch: $0.id, row: $0.row) }, budget: budget))
            return (job, try store.assets.missing(hashes.sorted()))
        }
        if missing.isEmpty { await splitter.split(job: job) }
        return (job, missing)
    }

    /// Assets the database thinks are stored but whose file is missing or the wrong size are
    /// forgotten (and a wrong-sized file removed), so `SUBMIT` reports them missing and the
    /// submitter uploads them again instead of every render failing on them.
    func forgetDamagedAssets(_ hashes: [String]) async throws {
        let records = try await pool.run { try $0.assets.records(hashes) }
        var damaged: [(String, String)] = []
        for record in records {
            if let problem = await storage.problem(.asset(sha256: record.sha256), size: record.size, sha256: nil) {
                damaged.append((record.sha256, problem))
            }
        }
        for (hash, problem) in damaged {
            logger.warning("stored asset is damaged; asking for it again", metadata: ["sha256": "\(hash)", "problem": "\(problem)"])
            await storage.removeAssetEverywhere(hash)
            try await pool.run { try $0.assets.forget(sha256: hash) }
        }
    }

    func put(sha256: String, offset: Int64, total: Int64, bytes: [UInt8]) async throws -> Message {
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.badRange, "sha256 must be 64 lower-case hex digits") }
        metrics.bytesIn.increment(by: Int64(bytes.count))
        let storage = storage
        let (have, complete) = try await offload { try storage.put(hash: sha256, offset: offset, total: total, bytes: bytes) }
        if complete {
            // With an object store, every completing PUT makes sure the store has it (a write
            // the store already holds costs one HEAD): the copy in the directory alone is not enough.
            try await storage.publish(.asset(sha256: sha256), sha256: sha256)
            let path = storage.storedKey(.asset(sha256: sha256))
            let released = try await pool.run { try $0.assets.stored(sha256: sha256, size: have, storedKey: path) }
            for job in released { await splitter.split(job: job) }
        }
        return .stored(sha256: sha256, have: have, total: complete ? have : total)
    }

    /// `STATUS`; with `wait` (seconds, only for one job) the reply is held until the job has
    /// ended or the wait is over (`JobWatchers` rings when a job may have ended).
    /// A held report carries the job's cost (`agentSeconds`, `cost`) only once the job has ended:
    /// the cost reads every task of the job (`Statements.jobCost`: tens of milliseconds for 15,000 tasks),
    /// and a follower (`reel submit` waiting) reads the job at least once a second.
    func status(job: Int64?, waitSeconds: Int) async throws -> Message {
        guard let job, waitSeconds > 0 else { return try await statusReport(job: job, costWhileRunning: true).message }
        let deadline = ContinuousClock.now + .seconds(min(waitSeconds, ProtocolLimits.maxStatusWait))
        return try await jobWatchers.follow(job) { bell in
            while true {
                let (message, ended) = try await statusReport(job: job, costWhileRunning: false)
                if ended || ContinuousClock.now >= deadline || jobWatchers.isDraining { return message }
                await bell.wait(upTo: deadline - ContinuousClock.now)
                try Task.checkCancellation()
            }
        }
    }

    /// The `STATUS` report, and whether its one job (if one was asked for) has ended; the one
    /// job's cost in it once it has ended, and before if `costWhileRunning`.
    private func statusReport(job: Int64?, costWhileRunning: Bool) async throws -> (message: Message, ended: Bool) {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let connected = connectedEncoders
        let summaries = try await pool.run { store -> [JobSummary] in
            if let job {
                guard let summary = try store.jobs.summary(job) else { throw StoreError.jobNotFound(job) }
                return [summary]
            }
            return try store.jobs.recent()
        }
        var jobs = summaries.map { Self.jobStatus($0, nowMillis: now, connectedEncoders: connected) }
        // Outputs in an object store are sized there (the static report sees local files only).
        if storage.isRemote {
            for (index, summary) in summaries.enumerated() where summary.state == .done {
                guard let key = summary.outputKey, let size = await storage.outputSize(storedKey: key) else { continue }
                jobs[index].outputBytes = size
                jobs[index].outputFileType = key.split(separator: ".").last.map(String.init)
            }
        }
        if let job, summaries.first?.state == .done, !jobs.isEmpty {
            jobs[0].loudness = try await pool.run { try $0.events.latestMessage(job: job, kind: FinaliserLoop.loudnessEvent) }
        }
        let ended = job != nil && summaries.allSatisfy(\.state.isTerminal)
        if let job, !jobs.isEmpty, costWhileRunning || ended {
            let cost = try await pool.run { try $0.jobs.cost(job) }
            Self.add(cost, to: &jobs[0])
        }
        // Storage use only in the overview: walking the directories on every `STATUS job=` poll
        // (`reel submit` waiting) would cost more than it tells.
        let storage = storage
        var usage: StorageUsage?
        if job == nil { usage = try await storage.blobUsage() }
        return (.report(json: Array(try CoordinatorJSON.encode(StatusReport(jobs: jobs, storage: usage)).utf8)), ended)
    }

    /// A job's cost so far in its `STATUS job=` document.
    static func add(_ cost: JobCost, to status: inout JobStatus) {
        status.agentSeconds = cost.agentSeconds
        status.cost = cost.cost
        status.unpricedTasks = cost.unpricedTasks
        // Spent of its budget, in the budget's unit (the figure the budget rule reads).
        if let budget = status.budget.flatMap(JobBudget.init(parsing:)) {
            status.budgetSpent = budget.unit == .money ? cost.cost ?? 0 : cost.agentSeconds / 3600
        }
    }

    /// The encoders of each agent connected now (for `JobStatus.needsEncoder`).
    var connectedEncoders: [Set<String>] { Array(agentSessions.encoders.byAgent.values) }

    /// One job's `STATUS` document from its summary row alone (counters kept by the store):
    /// no composition, plan or task list is read, whatever the job's size. `connectedEncoders`:
    /// those of the agents connected now; a job whose chunks wait for an encoder none of them
    /// has says so (with no agent connected at all, `reel agents` tells the story).
    static func jobStatus(_ summary: JobSummary, nowMillis: Int64, connectedEncoders: [Set<String>]) -> JobStatus {
        let name = (try? CoordinatorJSON.decode(StoredJobSettings.self, from: summary.settings))?.settings.name
        let c = summary.taskCounts
        let counts = TaskCounts(done: c[.done] ?? 0, running: c[.leased] ?? 0, queued: c[.queued] ?? 0, failed: c[.failed] ?? 0,
                                cancelled: c[.cancelled] ?? 0, total: c.values.reduce(0, +), reused: summary.tasksReused)
        let total = Int(summary.framesTotal), done = Int(summary.framesDone)
        var fps: Double?
        var eta: Double?
        // Speed over the current run: after a retry, from the retry's first claim and the
        // frames done since (the chunks kept from before are not this run's work).
        if let started = summary.runStartedAtMillis ?? summary.startedAtMillis {
            let elapsed = Double((summary.finishedAtMillis ?? nowMillis) - started) / 1000
            let rendered = done - Int(summary.runStartedAtMillis == nil ? 0 : summary.runFramesBase)
            if elapsed > 0, rendered > 0 {
                fps = Double(rendered) / elapsed
                if !summary.state.isTerminal { eta = Double(total - done) / fps! }
            }
        }
        let progress = summary.state == .done ? 1 : (total > 0 ? Double(done) / Double(total) : 0)
        let outputBytes = summary.state == .done ? summary.outputKey.flatMap(CoordinatorStorage.fileSize) : nil
        var status = JobStatus(id: summary.id, name: name ?? "job \(summary.id)",
                               state: summary.state == .waiting ? "waiting_for_assets" : summary.state.rawValue,
                               tasks: counts, frameCount: total, framesDone: done, progress: progress, framesPerSecond: fps,
                               etaSeconds: eta, submittedAtMillis: summary.createdAtMillis, updatedAtMillis: summary.updatedAtMillis,
                               outputBytes: outputBytes, error: summary.error, priority: summary.priority, paused: summary.paused)
        if summary.paused && !summary.state.isTerminal { status.pauseReason = (summary.pauseReason ?? .operator).rawValue }
        status.budget = summary.budget.map(\.description)
        if let encoder = summary.videoEncoder, !summary.state.isTerminal, summary.state != .waiting, counts.queued > 0,
           !connectedEncoders.isEmpty, !connectedEncoders.contains(where: { $0.contains(encoder) }) {
            status.needsEncoder = encoder
        }
        // The finaliser names the output `outputs/<job>.<fileType>`.
        if outputBytes != nil, let key = summary.outputKey { status.outputFileType = key.split(separator: ".").last.map(String.init) }
        return status
    }

    /// `reel drain NAME`: the agent (all its slots) claims nothing more, finishes what it holds
    /// within its own drain time, hands back the rest and says goodbye. Its coordinator, this
    /// one or another on the database, tells it (`DRAIN`, `LEASE … drain=1`) on hearing the
    /// database's notification; this one also at once.
    func drainAgent(name: String) async throws -> Message {
        let hidden = configuration.finaliserAgentName
        let matched = try await pool.run { try $0.agents.requestDrain(name: name) }.filter { $0.name != hidden }
        guard !matched.isEmpty else {
            throw ReelProtocolError(.notFound, "no connected agent is named \(name) ('reel agents' lists them)")
        }
        let old = matched.filter { !$0.canDrain }.map(\.name)
        guard old.isEmpty else {
            throw ReelProtocolError(.malformed, "\(old.joined(separator: ", ")) cannot be drained remotely (an agent older than "
                                    + "'reel drain'): upgrade it, or stop it with SIGTERM, which drains it")
        }
        for agent in matched { dispatcher.drainAgent(agent.id) }
        logger.notice("agents asked to drain", metadata: ["agents": "\(matched.map(\.name).joined(separator: ",").escapingControlCharacters)"])
        return .report(json: Array(try CoordinatorJSON.encode(DrainReport(agents: matched.map(\.name))).utf8))
    }

    func agents() async throws -> Message {
        let hidden = configuration.finaliserAgentName
        let agents = try await pool.run { store -> [AgentStatus] in
            let records = try store.agents.list().filter { $0.name != hidden }
            // Current tasks' job and frames: one indexed lookup of just those tasks.
            let labels = try store.jobs.taskLabels(records.compactMap(\.currentTask))
            return records.map { record in
                let caps = try? CoordinatorJSON.decode(AgentCapabilities.self, from: record.capabilities)
                let state: String = switch record.state {
                case .offline: "offline"
                case .draining: "draining"
                case .online where record.quarantinedUntilMillis != nil: "quarantined"
                case .online: record.currentTask == nil ? "idle" : "busy"
                }
                return AgentStatus(name: record.name, host: record.host, state: state, threads: caps?.threads ?? 0,
                                   heartbeatAgeSeconds: Double(record.heartbeatAgeMillis) / 1000,
                                   currentTask: record.currentTask.map { labels[$0] ?? "task \($0)" },
                                   quarantinedUntilMillis: record.quarantinedUntilMillis, lastError: record.lastError,
                                   failures: record.failures, encoders: caps?.encoders)
            }
        }
        return .report(json: Array(try CoordinatorJSON.encode(AgentsReport(agents: agents, coordinators: try await coordinators())).utf8))
    }

    /// The coordinators sharing the database, heard from within the last hour (`reel status`).
    func coordinators() async throws -> [CoordinatorStatus] {
        let staleAfter = CoordinatorPresence.staleAfterMillis(interval: configuration.heartbeatInterval)
        let me = coordinatorID
        return try await pool.run { try $0.coordinators.list() }.map { record in
            CoordinatorStatus(id: record.id, address: record.address, host: record.host,
                              state: record.stoppedMillis != nil ? "stopped" : (record.isAlive(staleAfterMillis: staleAfter) ? "alive" : "silent"),
                              startedAtMillis: record.startedMillis, heartbeatAgeSeconds: Double(record.heartbeatAgeMillis) / 1000,
                              answering: record.id == me)
        }
    }

    /// The job is cancelled in one row before the reply; its open tasks stop right after it
    /// (`LeaseReaper.stopTasks`, batch by batch), and its holders get `LOST` from then on.
    func cancel(job: Int64) async throws -> Message {
        try await pool.run { try $0.lifecycle.markCancelled(job: job) }
        jobWatchers.jobMayHaveEnded(job)
        logger.info("job cancelled", metadata: ["job": "\(job)"])
        let pool = pool, logger = logger
        Task { await LeaseReaper.stopTasks(ofJob: job, store: pool, logger: logger) }
        return .ok
    }

    func retry(job: Int64) async throws -> Message {
        try await pool.run { try $0.lifecycle.retry(job: job) }
        logger.info("job retried", metadata: ["job": "\(job)"])
        dispatcher.wake()
        // A job that failed while planning has no tasks: plan it now.
        await splitter.splitPendingJobs()
        return .ok
    }

    /// Deletes an ended job: its rows (tasks, events, asset references), its output, and the
    /// chunk results no other job references. Assets it alone used go at the next sweep.
    func delete(job: Int64) async throws -> Message {
        let deleted = try await pool.run { try $0.jobs.delete(job) }
        // Only blobs of the job's own keys are ever deleted (never a path the database names elsewhere).
        var keys: [BlobKey] = [.poster(job: job)]
        if let output = deleted.outputKey.flatMap(storage.blobKey(storedKey:)), case .output(job, _) = output { keys.append(output) }
        keys += deleted.unreferencedResults.filter(CoordinatorStorage.isValidHash).map { .result(sha256: $0) }
        for (key, error) in await storage.delete(keys) {
            logger.warning("cannot delete a deleted job's blob; retention removes it later", metadata: ["key": "\(key)", "error": "\(error)"])
        }
        logger.info("job deleted", metadata: ["job": "\(job)", "results": "\(deleted.unreferencedResults.count)"])
        return .ok
    }

    func output(job: Int64, offset: Int64, length: Int64) async throws -> Message {
        let key = try await outputKey(job: job)
        let (total, bytes) = try await storage.readRange(key, offset: offset, length: length)
        metrics.bytesOut.increment(by: Int64(bytes.count))
        return .data(offset: offset, total: total, bytes: bytes)
    }

    /// The blob of a done job's output (`not_found`: no job, or retention deleted it; `not_ready`: not done).
    func outputKey(job: Int64) async throws -> BlobKey {
        guard let summary = try await pool.run({ try $0.jobs.summary(job) }) else { throw ReelProtocolError(.notFound, "no job \(job)") }
        if summary.state == .done, summary.outputKey == nil {
            let keep = configuration.retention.keepOutputsSeconds.map { " after \(Int($0 / 3600)) h (reel coordinator --keep-outputs)" } ?? ""
            throw ReelProtocolError(.notFound, "job \(job)'s output was deleted by retention\(keep); submit the job again to render it anew")
        }
        guard summary.state == .done, let stored = summary.outputKey else {
            throw ReelProtocolError(.notReady, "job \(job) is \(summary.state.rawValue); its output does not exist yet")
        }
        guard let key = storage.blobKey(storedKey: stored) else {
            throw ReelProtocolError(.notFound, "job \(job)'s output is not in this coordinator's storage")
        }
        return key
    }
}
