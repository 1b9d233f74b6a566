import Logging
import ReelProtocol
import ServiceLifecycle

/// The `reel/1` listener as a service: `ReelServer` (bound by the coordinator before its
/// services run) and the dispatcher's claim deadlines. Graceful shutdown drains it: pending
/// `CLAIM`s answer `NONE` at once (`Dispatcher.drain`), followers of `STATUS wait=` are answered,
/// idle connections get `ERR shutting_down`, in-flight requests finish; after `drainTimeout` the
/// listener is closed regardless.
struct ProtocolService: Service {
    let server: ReelServer
    let dispatcher: Dispatcher
    let jobWatchers: JobWatchers
    let drainTimeout: Duration
    let logger: Logger

    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await dispatcher.runDeadlines() }
            // Whichever comes first: graceful shutdown or cancellation.
            try? await gracefulShutdown()
            dispatcher.drain()
            jobWatchers.drain()
            logger.info("coordinator draining")
            await drain()
            group.cancelAll()
        }
    }

    private func drain() async {
        let server = server, timeout = drainTimeout
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await server.shutdown() }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
        try? await server.close()
    }
}
