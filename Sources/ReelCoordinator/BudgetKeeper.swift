import Logging
import ReelScheduling
import ReelStore

/// Holds jobs to their budgets (docs/farm.md, "Budgets"): after a batch of results of jobs
/// with a budget (`Completer`), and on every pass of the `LeaseReaper` for every job with a
/// budget that has not ended (so that 100 % is caught while chunks run and no result comes).
/// The rule and its transitions are the store's (`LifecycleStore.enforceBudget`); this only
/// calls them and logs what they did. A result of a job without a budget never comes here.
struct BudgetKeeper: Sendable {
    let worker: StoreWorker
    let logger: Logger

    /// Checks `jobs` (each has a budget), one transaction each.
    func check(jobs: [Int64]) async {
        for job in jobs {
            do {
                if let check = try await worker.run({ try $0.lifecycle.enforceBudget(job: job) }) { log(job, check) }
            } catch {
                logger.error("budget check failed; the next pass tries again", metadata: ["job": "\(job)", "error": "\(error)"])
            }
        }
    }

    /// Checks every job with a budget that has not ended.
    func pass() async throws {
        for (job, check) in try await worker.run({ try $0.lifecycle.enforceBudgets() }).sorted(by: { $0.key < $1.key }) { log(job, check) }
    }

    private func log(_ job: Int64, _ check: BudgetCheck) {
        let metadata: Logger.Metadata = ["job": "\(job)", "budget": "\(check.budget)", "spent": "\(check.spent)"]
        if check.paused { logger.info("job paused by its budget", metadata: metadata) }
        if !check.handedBack.isEmpty {
            logger.info("budget spent: running chunks handed back", metadata: metadata.merging(["tasks": "\(check.handedBack.map(\.task))"]) { $1 })
        }
    }
}
