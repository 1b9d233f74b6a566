import Metrics
import Prometheus

/// The coordinator's metrics, in its own Prometheus registry (so several coordinators in one
/// process, as in tests, never share counters and the global `MetricsSystem` stays untouched).
public final class CoordinatorMetrics: Sendable {
    /// What `/metrics` serves.
    public let registry: PrometheusCollectorRegistry
    let claims: Counter
    let leaseExpiries: Counter
    let bytesIn: Counter
    let bytesOut: Counter
    let framesRendered: Counter
    private let factory: PrometheusMetricsFactory

    static let jobStates = ["waiting", "queued", "running", "finalising", "done", "failed", "cancelled"]
    static let taskStates = ["queued", "leased", "done", "failed", "cancelled"]

    public init() {
        registry = PrometheusCollectorRegistry()
        factory = PrometheusMetricsFactory(registry: registry)
        claims = Counter(label: "reel_claims_total", factory: factory)
        leaseExpiries = Counter(label: "reel_lease_expiries_total", factory: factory)
        bytesIn = Counter(label: "reel_bytes_in_total", factory: factory)
        bytesOut = Counter(label: "reel_bytes_out_total", factory: factory)
        framesRendered = Counter(label: "reel_frames_rendered_total", factory: factory)
    }

    /// Sets the `reel_jobs{state}` and `reel_tasks{state}` gauges (absent states are 0).
    func updateStates(jobs: [String: Int], tasks: [String: Int]) {
        for state in Self.jobStates {
            Gauge(label: "reel_jobs", dimensions: [("state", state)], factory: factory).record(jobs[state] ?? 0)
        }
        for state in Self.taskStates {
            Gauge(label: "reel_tasks", dimensions: [("state", state)], factory: factory).record(tasks[state] ?? 0)
        }
    }

    /// The Prometheus text exposition.
    public func exposition() -> String { registry.emitToString() }
}
