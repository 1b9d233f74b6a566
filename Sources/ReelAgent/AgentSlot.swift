import Foundation
import Logging
import NIOCore
import ReelMedia
import ReelProtocol

/// One render slot: its own connection (so a long `CLAIM` poll never delays another slot's
/// heartbeats or fetches), its own render thread, one task at a time.
///
/// Loop: connect → `CAPS` → `CLAIM` → run the task → `CLAIM` … On connection loss it
/// reconnects with jittered exponential backoff; when draining it stops claiming, lets
/// `TaskExecution` finish or release the task in flight, says `QUIT` and returns.
struct AgentSlot {
    let name: String
    let configuration: AgentConfiguration
    let authenticator: Authenticator
    let cache: RangeCache
    let drain: DrainState
    let workDirectory: URL
    let group: any EventLoopGroup
    let logger: Logger

    private enum SessionEnd { case drained, connectionLost }

    func run() async {
        var backoff = Backoff(initial: configuration.reconnectInitial, maximum: configuration.reconnectMaximum)
        while !drain.isDraining && !Task.isCancelled {
            let session: CoordinatorSession
            do {
                session = try await CoordinatorSession.connect(configuration, name: name, authenticator: authenticator, group: group)
                try await session.capabilities(capabilities)
                logger.info("connected", metadata: ["coordinator": "\(configuration.coordinatorHost):\(configuration.coordinatorPort)"])
            } catch {
                let delay = backoff.next()
                if let error = error as? ReelProtocolError, error.code == .authFailed {
                    // Most likely a different secret on each side; retry in case the coordinator's changes.
                    logger.error("the coordinator refused our credentials: check that --secret-file matches the coordinator's",
                                 metadata: ["error": "\(error)", "in": "\(delay)"])
                } else {
                    logger.warning("cannot reach the coordinator; retrying", metadata: ["error": "\(error)", "in": "\(delay)"])
                }
                await sleepUnlessDraining(delay)
                continue
            }
            backoff.reset()
            switch await serve(session) {
            case .drained:
                await session.close()
                logger.info("drained; said goodbye")
                return
            case .connectionLost:
                await session.close()
                let delay = backoff.next()
                logger.warning("connection to the coordinator lost; reconnecting", metadata: ["in": "\(delay)"])
                await sleepUnlessDraining(delay)
            }
        }
    }

    private var capabilities: AgentCapabilities {
        AgentCapabilities(threads: configuration.slots, encoders: configuration.encoders,
                          cacheBytes: configuration.cacheByteLimit, host: configuration.host)
    }

    /// The claim loop on one live connection.
    private func serve(_ session: CoordinatorSession) async -> SessionEnd {
        let execution = TaskExecution(configuration: configuration, session: session, cache: cache, drain: drain,
                                      workDirectory: workDirectory, logger: logger)
        while true {
            if drain.isDraining || Task.isCancelled { return .drained }
            let claimed: (TaskAssignment, [UInt8])?
            do {
                claimed = try await session.claim(waitSeconds: configuration.claimWaitSeconds)
            } catch {
                if session.isClosed { return .connectionLost }
                logger.warning("claim refused", metadata: ["error": "\(error)"])
                if let error = error as? ReelProtocolError, error.code == .noCapabilities {
                    try? await session.capabilities(capabilities)
                }
                await sleepUnlessDraining(.seconds(1))
                continue
            }
            guard let claimed else { continue }
            let (assignment, specification) = claimed
            if drain.isDraining || Task.isCancelled {
                // Claimed while the shutdown began: hand it straight back.
                _ = try? await session.release(assignment)
                logger.notice("released a task claimed during shutdown", metadata: ["task": "\(assignment.task)"])
                return .drained
            }
            switch await execution.run(assignment, specification: specification) {
            case .finished: continue
            case .released: return .drained
            case .connectionLost: return .connectionLost
            }
        }
    }

    /// Sleeps `duration`, waking early when draining starts or the task is cancelled.
    private func sleepUnlessDraining(_ duration: Duration) async {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline, !drain.isDraining {
            do { try await Task.sleep(for: min(.milliseconds(100), deadline - .now)) } catch { return }
        }
    }
}
