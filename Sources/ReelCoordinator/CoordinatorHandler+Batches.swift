import Foundation
import ReelProtocol
import ReelStore

// Batches (proto/PROTOCOL.md §4.3, `BATCH` and `BATCHSTATUS`): one job per row of a template's
// rows, grouped under an id. The rows' jobs are ordinary `SUBMIT`s naming the batch
// (`createJob`); the console's `/api/v1/batches` routes answer from here too.
extension CoordinatorHandler {
    /// `BATCH`: opens a batch of `rows` rows.
    func openBatch(_ document: [UInt8], peer: Peer) async throws -> Message {
        let request: NewBatchRequest
        do {
            request = try JSONDecoder().decode(NewBatchRequest.self, from: Data(document))
        } catch {
            throw ReelProtocolError(.malformed, "the BATCH payload is not a batch document ({\"name\": …, \"rows\": N}): \(error)")
        }
        let batch = try await openBatch(request)
        logger.info("batch opened", metadata: ["batch": "\(batch)", "rows": "\(request.rows)", "by": "\(peer.name.escapingControlCharacters)"])
        return .report(json: Array(try CoordinatorJSON.encode(BatchCreated(batch: batch)).utf8))
    }

    func openBatch(_ request: NewBatchRequest) async throws -> Int64 {
        if let problem = request.problem { throw ReelProtocolError(.malformed, "BATCH: \(problem)") }
        return try await pool.run { try $0.batches.create(name: request.name, rows: request.rows) }
    }

    /// The batch's summary (rows by state, ETA, agent time, reuse), with every row when `rows`.
    func batchReport(_ id: Int64, rows: Bool) async throws -> BatchReport {
        let now = Int64(Date().timeIntervalSince1970 * 1000), connected = connectedEncoders
        let (record, jobs) = try await pool.run { store in (try store.batches.record(id), try store.batches.jobs(of: id)) }
        guard let record else { throw ReelProtocolError(.notFound, "no batch \(id)") }
        var counts = BatchRowCounts()
        var statuses: [BatchRowStatus] = []
        var reused = 0, chunks = 0
        var agentMilliseconds: Int64 = 0
        for job in jobs {
            let status = Self.jobStatus(job.summary, nowMillis: now, connectedEncoders: connected)
            switch job.summary.state {
            case .done: counts.done += 1
            case .failed: counts.failed += 1
            case .cancelled: counts.cancelled += 1
            case .running, .finalising: counts.running += 1
            case .waiting, .queued: counts.queued += 1
            }
            reused += status.tasks.reused
            chunks += status.tasks.total
            agentMilliseconds += job.agentMilliseconds
            if rows {
                statuses.append(BatchRowStatus(row: job.row, job: status.id, state: status.state, progress: status.progress,
                                               reusedChunks: status.tasks.reused, chunks: status.tasks.total,
                                               agentSeconds: Double(job.agentMilliseconds) / 1000, outputBytes: status.outputBytes,
                                               error: status.error))
            }
        }
        let ended = counts.done + counts.failed + counts.cancelled
        return BatchReport(id: record.id, name: record.name, rows: record.rows, counts: counts,
                           state: BatchReport.state(rows: record.rows, counts: counts), createdAtMillis: record.createdAtMillis,
                           etaSeconds: BatchReport.eta(rows: record.rows, ended: ended, elapsedSeconds: Double(now - record.createdAtMillis) / 1000),
                           agentSeconds: Double(agentMilliseconds) / 1000, reusedChunks: reused, chunks: chunks,
                           rowStatuses: rows ? statuses : nil)
    }
}
