import Foundation
import Logging
import NIOCore
import ReelCore
import ReelAssetCache
import ReelProtocol

/// One render slot: its own connection (so a long `CLAIM` poll never delays another slot's
/// heartbeats or fetches), its own render thread, one task at a time.
///
/// Loop: connect → `CAPS` → `CLAIM` → run the task → `CLAIM` … On connection loss it
/// reconnects with jittered exponential backoff (`Backoff`: full jitter; a coordinator busy
/// authenticating others is retried within `reconnectBusyWindow`) — a rendered result the lost connection could
/// not deliver is kept and sent first on the next one; when draining it stops claiming, lets
/// `TaskExecution` finish or release the task in flight, says `QUIT` and returns.
struct AgentSlot {
    let name: String
    let configuration: AgentConfiguration
    let authenticator: Authenticator
    let cache: RangeCache
    let plans: PlanDocumentMemory
    let drain: DrainState
    let workDirectory: URL
    let group: any EventLoopGroup
    let logger: Logger

    private enum SessionEnd { case drained, connectionLost(PendingResult?) }

    func run() async {
        var backoff = Backoff(initial: configuration.reconnectInitial, maximum: configuration.reconnectMaximum,
                              busyWindow: configuration.reconnectBusyWindow)
        var pending: PendingResult?
        // A result waiting for delivery keeps the slot reconnecting through a drain, until the
        // grace period ends: it is finished work the farm would otherwise render again.
        while (!drain.isDraining || (pending != nil && !drain.graceExpired)) && !Task.isCancelled {
            if let result = pending, result.leaseExpiresAtMillis <= configuration.clock.nowMillis() {
                logger.warning("result discarded: its lease expired before the coordinator was reachable again",
                               metadata: ["task": "\(result.assignment.task)", "epoch": "\(result.assignment.epoch)"])
                result.discard()
                pending = nil
                continue
            }
            let session: CoordinatorSession
            do {
                session = try await CoordinatorSession.connect(configuration, name: name, authenticator: authenticator, group: group,
                                                               drain: drain)
                try await session.capabilities(capabilities)
                logger.info("connected", metadata: ["coordinator": "\(session.endpoint)"])
            } catch {
                let code = (error as? ReelProtocolError)?.code
                // Busy (too many connections authenticating at once, as when a herd of agents
                // comes back together) is not a failure: try again soon, the backoff unchanged.
                let delay = code == .tooManyConnections ? backoff.nextAfterBusy() : backoff.next()
                if code == .tooManyConnections {
                    logger.notice("the coordinator is busy authenticating other connections; retrying",
                                  metadata: ["error": "\(error)", "in": "\(delay)"])
                } else if code == .authFailed {
                    // Most likely a different secret on each side; retry in case the coordinator's changes.
                    logger.error("the coordinator refused our credentials: check that --secret-file matches the coordinator's",
                                 metadata: ["error": "\(error)", "in": "\(delay)"])
                } else {
                    logger.warning("cannot reach the coordinator; retrying", metadata: ["error": "\(error)", "in": "\(delay)"])
                }
                await sleepUnlessDraining(pending.map { capped(delay, by: $0) } ?? delay, keepGoing: pending != nil)
                continue
            }
            backoff.reset()
            switch await serve(session, pending: pending) {
            case .drained:
                await session.announceDrainIfDraining()
                await session.close()
                logger.info("drained; said goodbye")
                return
            case .connectionLost(let undelivered):
                pending = undelivered
                await session.close()
                let delay = backoff.next()
                logger.warning("connection to the coordinator lost; reconnecting", metadata: ["in": "\(delay)"])
                await sleepUnlessDraining(pending.map { capped(delay, by: $0) } ?? delay, keepGoing: pending != nil)
            }
        }
        if let pending {
            logger.error("shutting down with a result the coordinator never accepted; it will be rendered again",
                         metadata: ["task": "\(pending.assignment.task)"])
            pending.discard()
        }
    }

    /// A reconnect delay that leaves time to deliver `pending` before its lease runs out.
    private func capped(_ delay: Duration, by pending: PendingResult) -> Duration {
        max(.milliseconds(50), min(delay, .milliseconds((pending.leaseExpiresAtMillis - configuration.clock.nowMillis()) / 3)))
    }

    private var capabilities: AgentCapabilities {
        AgentCapabilities(threads: configuration.slots, encoders: configuration.encoders,
                          cacheBytes: configuration.cacheByteLimit, host: configuration.host, finalise: configuration.finalise,
                          drain: true, costPerHour: configuration.costPerHour)
    }

    /// The claim loop on one live connection, after delivering `pending` (a result the previous
    /// connection could not).
    private func serve(_ session: CoordinatorSession, pending: PendingResult?) async -> SessionEnd {
        let execution = TaskExecution(configuration: configuration, session: session, cache: cache, drain: drain, plans: plans,
                                      workDirectory: workDirectory, logger: logger)
        // Reconnected while draining (a result to deliver): say so again on this connection.
        await session.announceDrainIfDraining()
        if let pending {
            switch await execution.deliver(pending, logger: logger) {
            case .finished: break
            case .released: return .drained
            case .connectionLost(let undelivered): return .connectionLost(undelivered)
            }
        }
        var idleSince = ContinuousClock.now
        while true {
            if drain.isDraining || Task.isCancelled { return .drained }
            if let limit = configuration.exitWhenIdle, ContinuousClock.now - idleSince >= limit {
                logger.notice("no work for \(limit): draining and exiting (--exit-when-idle)")
                drain.begin(gracePeriod: configuration.shutdownGracePeriod)
                return .drained
            }
            let claimed: (TaskAssignment, [UInt8])?
            do {
                claimed = try await session.claim(waitSeconds: configuration.claimWaitSeconds)
            } catch {
                if session.isClosed { return .connectionLost(nil) }
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
            defer { idleSince = ContinuousClock.now }
            switch await execution.run(assignment, specification: specification) {
            case .finished: continue
            case .released: return .drained
            case .connectionLost(let undelivered): return .connectionLost(undelivered)
            }
        }
    }

    /// Sleeps `duration`, waking early when draining starts (or, with `keepGoing`, when its
    /// grace period ends) or the task is cancelled.
    private func sleepUnlessDraining(_ duration: Duration, keepGoing: Bool = false) async {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline, keepGoing ? !drain.graceExpired : !drain.isDraining {
            do { try await Task.sleep(for: min(.milliseconds(100), deadline - .now)) } catch { return }
        }
    }
}
