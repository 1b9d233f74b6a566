import Foundation
import Logging
import ReelStore
import ReelScheduling
import Synchronization

/// Completes agents' `RESULT`s in batches: each verified result waits here for the next
/// transaction, which completes every waiting one at once (`LifecycleStore.completeTasks`). With
/// hundreds of agents, results arrive faster than one transaction each could commit, and all
/// of a job's completions serialise on its row (its counters); a batch takes that row once.
/// A lone result goes straight through (a batch of one).
final class Completer: Sendable {
    private struct Pending {
        let lease: Lease
        let result: TaskResult
        let continuation: CheckedContinuation<Completion?, any Error>
    }

    private struct State {
        var pending: [Pending] = []
        var running = false
    }

    private let state = Mutex(State())
    private let worker: StoreWorker
    private let maxBatch: Int
    private let logger: Logger
    private let onJobRendered: @Sendable () -> Void
    private let budgets: BudgetKeeper

    /// - Parameter onJobRendered: called after a batch in which some job's last render task
    ///   completed (its finalise task became claimable).
    init(worker: StoreWorker, maxBatch: Int = 256, logger: Logger, onJobRendered: @escaping @Sendable () -> Void = {}) {
        self.worker = worker; self.maxBatch = max(1, maxBatch); self.logger = logger; self.onJobRendered = onJobRendered
        budgets = BudgetKeeper(worker: worker, logger: logger)
    }

    /// Completes the task under `lease` with `result`. - Returns: the completion, or nil when
    /// the lease is stale.
    func complete(_ lease: Lease, result: TaskResult) async throws -> Completion? {
        try await withCheckedThrowingContinuation { continuation in
            let start = state.withLock { s -> Bool in
                s.pending.append(Pending(lease: lease, result: result, continuation: continuation))
                if s.running { return false }
                s.running = true
                return true
            }
            if start { Task { await self.run() } }
        }
    }

    private func run() async {
        while true {
            let batch = state.withLock { s -> [Pending] in
                let batch = Array(s.pending.prefix(maxBatch))
                s.pending.removeFirst(batch.count)
                if batch.isEmpty { s.running = false }
                return batch
            }
            if batch.isEmpty { return }
            let items = batch.map { (lease: $0.lease, result: $0.result) }
            do {
                let completions = try await worker.run { try $0.lifecycle.completeTasks(items) }
                if completions.contains(where: { $0?.jobRendered == true }) { onJobRendered() }
                for (pending, completion) in zip(batch, completions) { pending.continuation.resume(returning: completion) }
                // The 90 % rule on each result of a job with a budget, after the agents have
                // their answers (a job without a budget costs no statement here).
                let budgeted = Set(completions.compactMap { $0 }.filter { $0.jobBudgeted && !$0.jobDone }.map(\.jobID))
                if !budgeted.isEmpty { await budgets.check(jobs: budgeted.sorted()) }
            } catch {
                logger.error("result batch failed", metadata: ["results": "\(batch.count)", "error": "\(error)"])
                for pending in batch { pending.continuation.resume(throwing: error) }
            }
        }
    }
}
