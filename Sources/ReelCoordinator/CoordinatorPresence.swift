import Logging
import ReelCore
import ReelStore
import ServiceLifecycle

/// Keeps this coordinator's row in the coordinators registry (migration 9) current: a
/// heartbeat every `interval`, and `stopped_at` at graceful shutdown. `reel status` and the
/// console list every coordinator sharing the database from it; one whose heartbeat is older
/// than `CoordinatorPresence.staleAfter` (a killed one) shows as not alive.
struct CoordinatorPresence: Service {
    /// A coordinator silent this long is shown as not alive (three missed heartbeats).
    static func staleAfterMillis(interval: Duration) -> Int64 { 3 * interval.wholeMilliseconds }

    let worker: StoreWorker
    let id: Int64
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await PeriodicLoop(every: interval, pauseFirst: true).run {
                do {
                    try await worker.run { [id] in try $0.coordinators.heartbeat(id) }
                } catch {
                    logger.warning("coordinator heartbeat failed", metadata: ["error": "\(error)"])
                }
            }
        }
        do {
            try await worker.run { [id] in try $0.coordinators.stopped(id) }
        } catch {
            logger.warning("could not record the coordinator's stop", metadata: ["error": "\(error)"])
        }
    }
}
