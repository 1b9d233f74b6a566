import Foundation
import Logging
import ReelCore
import ReelScheduling
import ReelStore
import ServiceLifecycle

/// The coordinator's periodic pass (every `reaperInterval`): leases run out by the farm clock
/// end (`LifecycleStore.expireLeases`, which decides what becomes of their tasks), then the
/// dispatcher is woken, jobs whose assets arrived (or whose splitting a restart interrupted) are
/// split into tasks, cancelled jobs' open tasks left open by a stop are cancelled, jobs with a
/// budget are held to it (`BudgetKeeper`), and the state gauges are refreshed. It decides
/// nothing itself.
struct LeaseReaper: Service {
    let worker: StoreWorker
    let splitter: JobSplitter
    let dispatcher: Dispatcher
    let jobWatchers: JobWatchers
    let metrics: CoordinatorMetrics
    let interval: Duration
    let logger: Logger
    /// Whether anyone can read the workload (`/metrics`, `/scale` or the console is served):
    /// without, its query is not run.
    var exportsWorkload = true
    /// For `reel_agents_wanted`: finalise tasks count when agents run them (object storage).
    var agentsFinalise = false
    var tasksPerAgent = 1
    var maxAgents = 100

    /// Passes until graceful shutdown.
    func run() async throws {
        await cancelWhenGracefulShutdown {
            // The state gauges count every task row (a scan that grows with the farm's history):
            // refreshed every 10 s, not every pass.
            // The workload a scaler reads (only the active jobs' queued and leased tasks): every 2 s.
            var gaugesRefreshed = ContinuousClock.now - .seconds(3600)
            var workloadRefreshed = gaugesRefreshed
            await PeriodicLoop(every: interval).run {
                let refresh = ContinuousClock.now - gaugesRefreshed >= .seconds(10)
                let workload = exportsWorkload && ContinuousClock.now - workloadRefreshed >= .seconds(2)
                await pass(refreshingGauges: refresh, workload: workload)
                if refresh { gaugesRefreshed = .now }
                if workload { workloadRefreshed = .now }
            }
        }
    }

    private func pass(refreshingGauges: Bool, workload: Bool) async {
        do {
            let expired = try await worker.run { try $0.lifecycle.expireLeases() }
            // Also the safety net for a wake nobody sent (cheap when no claim waits).
            dispatcher.wake()
            if !expired.isEmpty {
                metrics.leaseExpiries.increment(by: Int64(expired.count))
                for lease in expired {
                    if lease.newState == .failed { jobWatchers.jobMayHaveEnded(lease.jobID) }
                    logger.warning("lease expired", metadata: ["task": "\(lease.task)", "job": "\(lease.jobID)", "epoch": "\(lease.epoch)",
                                                               "now": "\(lease.newState.rawValue)"])
                }
            }
            await splitter.splitPendingJobs()
            // Cancels whose sweep a stop interrupted (a cancel's own sweep usually ends first).
            for job in try await worker.run({ try $0.lifecycle.jobsWithTasksToStop() }) {
                await Self.stopTasks(ofJob: job, store: worker, logger: logger)
            }
            try await BudgetKeeper(worker: worker, logger: logger).pass()
            if refreshingGauges {
                let counts = try await worker.run { try $0.jobs.stateCounts() }
                metrics.updateStates(jobs: counts.jobs, tasks: counts.tasks)
            }
            if workload {
                let finalise = agentsFinalise
                let work = try await worker.run { try $0.jobs.workload(finalise: finalise) }
                metrics.updateWorkload(work, tasksPerAgent: tasksPerAgent, maxAgents: maxAgents)
            }
        } catch {
            logger.error("reaper pass failed", metadata: ["error": "\(error)"])
        }
    }

    /// Cancels the open tasks of cancelled job `job`, one short transaction per batch, until
    /// none is left (or the rest are locked: the next pass takes them).
    static func stopTasks(ofJob job: Int64, store: some StoreRunning, logger: Logger) async {
        do {
            var stopped = 0, batch = 0
            repeat {
                batch = try await store.run { try $0.lifecycle.stopOpenTasks(ofJob: job) }
                stopped += batch
            } while batch > 0
            if stopped > 0 { logger.info("cancelled job's open tasks stopped", metadata: ["job": "\(job)", "tasks": "\(stopped)"]) }
        } catch {
            logger.error("stopping a cancelled job's tasks failed; the next pass tries again", metadata: ["job": "\(job)", "error": "\(error)"])
        }
    }
}
