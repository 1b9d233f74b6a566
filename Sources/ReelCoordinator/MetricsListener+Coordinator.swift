import Foundation
import Logging
import ReelConsole
import ReelProtocol

extension MetricsListener {
    /// The coordinator's `--metrics` listener: `GET /metrics`, the Prometheus text of
    /// `metrics`, and `GET /scale`, its `ScaleReport` as JSON (for a scaler).
    convenience init(serving metrics: CoordinatorMetrics, at address: HostPort, logger: Logger) {
        self.init(host: address.host, port: address.port, documents: [
            Document(path: "/metrics", contentType: MetricsListener.prometheusText) { metrics.exposition() },
            Document(path: "/scale", contentType: "application/json") {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                return String(decoding: (try? encoder.encode(metrics.scale)) ?? Data("{}".utf8), as: UTF8.self) + "\n"
            },
        ], logger: logger)
    }
}
