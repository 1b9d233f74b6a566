import Foundation
import Metrics
import Prometheus
import Synchronization

/// The coordinator's metrics, in its own Prometheus registry (so several coordinators in one
/// process, as in tests, never share counters and the global `MetricsSystem` stays untouched).
public final class CoordinatorMetrics: Sendable {
    /// What `/metrics` serves.
    public let registry: PrometheusCollectorRegistry
    let claims: Metrics.Counter
    /// Tasks a claim batch chose but found leased or locked by another claimer when it leased
    /// them (with several coordinators on one database): each makes the batch run again.
    let claimsContended: Metrics.Counter
    let leaseExpiries: Metrics.Counter
    let bytesIn: Metrics.Counter
    let bytesOut: Metrics.Counter
    /// Presigned URLs handed out (direct transfers with an object store).
    let presignedURLs: Metrics.Counter
    /// Bytes of object bodies the coordinator read from the object store (probes, downloads
    /// for finalising): what a direct upload must not add to.
    let objectStoreBytesRead: Metrics.Counter
    let framesRendered: Metrics.Counter
    private let factory: PrometheusMetricsFactory
    /// The latest workload (`updateWorkload`), for `/scale`; and the encoders it had, so one
    /// that has no work left is set to 0 rather than left at its last value.
    private let workload = Mutex<(scale: ScaleReport, encoders: Set<String>)>((ScaleReport(), []))

    static let jobStates = ["waiting", "queued", "running", "finalising", "done", "failed", "cancelled"]
    static let taskStates = ["queued", "leased", "done", "failed", "cancelled"]

    public init() {
        registry = PrometheusCollectorRegistry()
        factory = PrometheusMetricsFactory(registry: registry)
        claims = Metrics.Counter(label: "reel_claims_total", factory: factory)
        claimsContended = Metrics.Counter(label: "reel_claims_contended_total", factory: factory)
        leaseExpiries = Metrics.Counter(label: "reel_lease_expiries_total", factory: factory)
        bytesIn = Metrics.Counter(label: "reel_bytes_in_total", factory: factory)
        bytesOut = Metrics.Counter(label: "reel_bytes_out_total", factory: factory)
        presignedURLs = Metrics.Counter(label: "reel_presigned_urls_total", factory: factory)
        objectStoreBytesRead = Metrics.Counter(label: "reel_object_store_bytes_read_total", factory: factory)
        framesRendered = Metrics.Counter(label: "reel_frames_rendered_total", factory: factory)
    }

    /// Sets the `reel_jobs{state}` and `reel_tasks{state}` gauges (absent states are 0).
    func updateStates(jobs: [String: Int], tasks: [String: Int]) {
        for state in Self.jobStates {
            Metrics.Gauge(label: "reel_jobs", dimensions: [("state", state)], factory: factory).record(jobs[state] ?? 0)
        }
        for state in Self.taskStates {
            Metrics.Gauge(label: "reel_tasks", dimensions: [("state", state)], factory: factory).record(tasks[state] ?? 0)
        }
    }

    /// Sets `reel_tasks_queued{encoder}`, `reel_tasks_leased{encoder}` and `reel_agents_wanted`:
    /// queued plus leased tasks over `tasksPerAgent`, rounded up, at most `maxAgents`. Leased
    /// tasks count, so the number falls only as chunks finish, never while they render.
    func updateWorkload(_ byEncoder: [String: (queued: Int, leased: Int)], tasksPerAgent: Int, maxAgents: Int) {
        let queued = byEncoder.values.reduce(0) { $0 + $1.queued }, leased = byEncoder.values.reduce(0) { $0 + $1.leased }
        let wanted = min(maxAgents, (queued + leased + max(1, tasksPerAgent) - 1) / max(1, tasksPerAgent))
        let report = ScaleReport(tasksQueued: queued, tasksLeased: leased, agentsWanted: wanted,
                                 encoders: byEncoder.mapValues { ScaleReport.Work(queued: $0.queued, leased: $0.leased) })
        let gone = workload.withLock { state -> Set<String> in
            let gone = state.encoders.subtracting(byEncoder.keys)
            state = (report, Set(byEncoder.keys))
            return gone
        }
        for encoder in gone.union(byEncoder.keys) {
            let work = byEncoder[encoder] ?? (0, 0)
            Metrics.Gauge(label: "reel_tasks_queued", dimensions: [("encoder", encoder)], factory: factory).record(work.queued)
            Metrics.Gauge(label: "reel_tasks_leased", dimensions: [("encoder", encoder)], factory: factory).record(work.leased)
        }
        Metrics.Gauge(label: "reel_agents_wanted", factory: factory).record(wanted)
    }

    /// The latest workload, as `/scale` serves it (JSON).
    public var scale: ScaleReport { workload.withLock { $0.scale } }

    /// The Prometheus text exposition.
    public func exposition() -> String { registry.emitToString() }
}

/// `GET /scale` on the metrics listener: the farm's work as a scaler reads it (KEDA's
/// `metrics-api` trigger, `valueLocation: agentsWanted`; deploy/kubernetes/). Refreshed every
/// couple of seconds by the coordinator's reaper.
public struct ScaleReport: Codable, Sendable, Equatable {
    public struct Work: Codable, Sendable, Equatable {
        public var queued: Int
        public var leased: Int
        public init(queued: Int, leased: Int) { self.queued = queued; self.leased = leased }
    }
    /// Tasks agents can claim now (of active, unpaused jobs).
    public var tasksQueued = 0
    /// Tasks agents are rendering.
    public var tasksLeased = 0
    /// (queued + leased) / tasks per agent, rounded up, capped (`reel coordinator --scale-…`).
    public var agentsWanted = 0
    /// The same by the encoder each task needs (`libx264`, `aac`, …; `reel:finalise`).
    public var encoders: [String: Work] = [:]
}
