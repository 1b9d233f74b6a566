import ReelScheduling
import Synchronization

/// Which connection belongs to which registered agent, and the encoders each agent said it has
/// (`CAPS encoders=`): the dispatcher's live agents, and what `ClaimPolicy` may offer each.
final class AgentSessions: Sendable {
    private struct Session {
        var agent: Int64
        var encoders: Set<String>
        /// The agent understands `DRAIN` (`CAPS … drain=1`).
        var canDrain = false
        /// It was asked to drain (`reel drain`) or said it drains: its claims get `DRAIN`.
        var draining = false
    }
    private let sessions = Mutex<[UInt64: Session]>([:])

    /// `CAPS` on `connection` registered `agent` with `encoders`.
    /// An agent that runs finalise tasks (`finalise=1`) also has `TaskKind.finaliseCapability`.
    func register(connection: UInt64, agent: Int64, encoders: [String], finalise: Bool = false, canDrain: Bool = false) {
        let capabilities = Set(encoders.filter { $0 != TaskKind.finaliseCapability } + (finalise ? [TaskKind.finaliseCapability] : []))
        sessions.withLock { $0[connection] = Session(agent: agent, encoders: capabilities, canDrain: canDrain) }
    }

    /// Marks every connection of `agent` draining (an operator's `reel drain`, here or through
    /// another coordinator: `Dispatcher.drainAgent`). - Returns: whether the agent has a connection here.
    func drain(agent: Int64) -> Bool {
        sessions.withLock { sessions in
            var found = false
            for (connection, session) in sessions where session.agent == agent {
                sessions[connection]?.draining = true
                found = true
            }
            return found
        }
    }

    /// The connection said `DRAINING`: its claims get `DRAIN` from now on.
    func drain(connection: UInt64) {
        sessions.withLock { $0[connection]?.draining = true }
    }

    /// Whether the agent on `connection` must be told to drain (it was asked, and understands it).
    func mustDrain(_ connection: UInt64) -> Bool {
        sessions.withLock { $0[connection].map { $0.draining && $0.canDrain } ?? false }
    }

    /// Whether an agent connected now runs finalise tasks.
    var anyCanFinalise: Bool { sessions.withLock { $0.values.contains { $0.encoders.contains(TaskKind.finaliseCapability) } } }

    /// The connection closed: its agent, and whether that agent has no other connection left.
    func remove(connection: UInt64) -> (agent: Int64, lastConnection: Bool)? {
        sessions.withLock { sessions in
            guard let session = sessions.removeValue(forKey: connection) else { return nil }
            return (session.agent, !sessions.values.contains { $0.agent == session.agent })
        }
    }

    /// The agent registered on `connection`.
    func agent(on connection: UInt64) -> Int64? { sessions.withLock { $0[connection]?.agent } }

    /// What each connected agent can encode (from its latest `CAPS`); its keys are the agents
    /// connected now.
    var encoders: AgentEncoders {
        let byAgent = sessions.withLock { $0.values.map { ($0.agent, $0.encoders) } }
        return AgentEncoders(Dictionary(byAgent, uniquingKeysWith: { _, latest in latest }))
    }
}
