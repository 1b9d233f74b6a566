import Metrics
import Prometheus

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

    /// The Prometheus text exposition.
    public func exposition() -> String { registry.emitToString() }
}
