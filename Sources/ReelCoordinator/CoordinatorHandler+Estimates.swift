import Foundation
import ReelCore
import ReelProtocol
import ReelStore
import Synchronization

// Estimates (proto/PROTOCOL.md §4.3, `ESTIMATE`; docs/farm.md, "Estimates"): a render's agent
// time, wall time and cost predicted from the farm's finished jobs by `RenderEstimator`.

extension CoordinatorHandler {
    /// Recent done jobs read per estimate: enough for `RenderEstimator.maxSamples` of a kind
    /// among the farm's usual mix, few enough to decode their plans at once.
    static let estimateHistoryJobs = 100

    func estimate(_ document: [UInt8]) async throws -> Message {
        let request: EstimateRequest
        do {
            request = try JSONDecoder().decode(EstimateRequest.self, from: Data(document))
        } catch {
            throw ReelProtocolError(.malformed, "the ESTIMATE payload is not an estimate request ({\"load\": …, \"agents\": N}): \(error)")
        }
        guard (1...100_000).contains(request.agents) else { throw ReelProtocolError(.malformed, "ESTIMATE: agents must be 1…100000") }
        if let chunks = request.chunks, chunks < 1 { throw ReelProtocolError(.malformed, "ESTIMATE: chunks must be at least 1") }
        if let price = request.costPerHour, !(price >= 0 && price < 1e9) {
            throw ReelProtocolError(.malformed, "ESTIMATE: costPerHour must be from 0 to 999999999")
        }
        let history = try await renderHistory()
        switch RenderEstimator.estimate(request.load, history: history, agents: request.agents, chunks: request.chunks,
                                        costPerHour: request.costPerHour) {
        case .success(let estimate): return .report(json: Array(try CoordinatorJSON.encode(estimate).utf8))
        case .failure(let failure): throw ReelProtocolError(.notReady, failure.description)
        }
    }

    /// The farm's finished jobs as `RenderSample`s, newest first; a plan that no longer decodes
    /// (from a much older version), or whose stored document is gone (retention removes the
    /// documents of jobs ended long ago), is left out. A plan is in its row (jobs planned before
    /// migration 20) or only in its stored document, read once and kept by its hash
    /// (`RenderLoads`: a document never changes).
    func renderHistory() async throws -> [RenderSample] {
        let rows = try await pool.run { try $0.jobs.renderHistory(limit: Self.estimateHistoryJobs) }
        var samples: [RenderSample] = []
        for row in rows {
            let load: RenderLoad?
            if !row.renderPlan.isEmpty && row.renderPlan != "{}" {
                load = (try? CoordinatorJSON.decode(RenderPlan.self, from: row.renderPlan)).map(RenderLoad.init(plan:))
            } else if let document = row.document {
                load = await renderLoads.load(of: document, storage: storage)
            } else {
                load = nil
            }
            guard let load else { continue }
            samples.append(RenderSample(load: load, agentSeconds: row.cost.agentSeconds, cost: row.cost.cost))
        }
        return samples
    }
}

/// The `RenderLoad`s of stored render plan documents, by their hash: estimates read the same
/// recent jobs' plans again and again, and a document never changes.
final class RenderLoads: Sendable {
    private let loads = Mutex<[String: RenderLoad]>([:])

    /// The load of the document's plan; nil when the document cannot be read or decoded.
    func load(of document: RenderPlanReference, storage: CoordinatorStorage) async -> RenderLoad? {
        if let known = loads.withLock({ $0[document.sha256] }) { return known }
        guard let plan = try? await RenderPlanDocuments.read(document, storage: storage).plan else { return nil }
        let load = RenderLoad(plan: plan)
        loads.withLock { loads in
            if loads.count >= 1_000 { loads.removeAll() }
            loads[document.sha256] = load
        }
        return load
    }
}
