import ReelScheduling
// Agents (`AgentStore`): registration, state, the `AGENTS` list, failure history and quarantine.

extension Statements {
    /// An agent asked to drain while it was between connections (`reel drain` reached the
    /// database, not the agent) stays draining when it comes back within a minute of its last
    /// sign of life, and is told then. A row left draining longer ago (its process and its
    /// coordinator gone together, so nobody marked it offline) is a new process: online.
    /// The agent's price an hour per slot, `$4` (NULL: none), is recorded (`agent_prices`) when
    /// it differs from the agent's latest.
    static let registerAgent = """
        WITH registered AS (
            INSERT INTO agents (name, host, capabilities, state, last_heartbeat) VALUES ($1, $2, $3, 'online', now())
            ON CONFLICT (name) DO UPDATE SET host = excluded.host, capabilities = excluded.capabilities,
                                             state = CASE WHEN agents.state = 'draining' AND agents.last_heartbeat > now() - interval '1 minute'
                                                          THEN 'draining' ELSE 'online' END,
                                             last_heartbeat = now()
            RETURNING id, state
        ), priced AS (
            INSERT INTO agent_prices (agent_id, cost_per_hour)
            SELECT r.id, $4::double precision FROM registered r
            WHERE $4::double precision IS DISTINCT FROM
                  (SELECT p.cost_per_hour FROM agent_prices p WHERE p.agent_id = r.id ORDER BY p.since DESC LIMIT 1)
            ON CONFLICT (agent_id, since) DO UPDATE SET cost_per_hour = excluded.cost_per_hour
        )
        SELECT id, state FROM registered
        """
    /// `reel drain NAME`: the live agents named `$1` or `$1/…` (an agent's slots); those that
    /// understand `DRAIN` (`CAPS … drain=1`) are marked draining, and every coordinator hears
    /// `<schema> drain <id>` for each, to tell the agent on its connection.
    static let requestDrain = """
        WITH matched AS (
            SELECT id, name, coalesce((capabilities::jsonb ->> 'drain')::boolean, false) AS can_drain
            FROM agents WHERE (name = $1 OR starts_with(name, $1 || '/')) AND state <> 'offline'
        ), drained AS (
            UPDATE agents a SET state = 'draining' FROM matched m WHERE a.id = m.id AND m.can_drain RETURNING a.id
        ), notified AS (
            SELECT pg_notify('reel', current_schema() || ' drain ' || id) FROM drained
        )
        SELECT m.id, m.name, m.can_drain, (SELECT count(*) FROM notified) AS notified FROM matched m ORDER BY m.name
        """
    static let setAgentState = "UPDATE agents SET state = $2 WHERE id = $1::bigint"
    static let listAgents = """
        SELECT id, name, host, capabilities, state, \(ms("last_heartbeat")) AS heartbeat_ms,
               (extract(epoch FROM now() - last_heartbeat) * 1000)::bigint AS age_ms,
               (SELECT min(t.id) FROM tasks t WHERE t.lease_owner = agents.id AND t.state = 'leased') AS current_task,
               CASE WHEN quarantined_until > now() THEN \(ms("quarantined_until")) END AS quarantined_ms, last_error,
               (SELECT count(*) FROM task_failures f WHERE f.agent_id = agents.id) AS failures
        FROM agents ORDER BY name
        """
    /// Agents offline since before `$1` (ms) and holding no lease; `$2` (the finaliser row) is kept.
    static let forgetOfflineAgents = """
        DELETE FROM agents a
        WHERE a.state = 'offline' AND a.last_heartbeat < to_timestamp($1::double precision / 1000) AND a.name <> $2
          AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.lease_owner = a.id)
        RETURNING a.name
        """

    static let recordTaskFailure = """
        INSERT INTO task_failures (task_id, agent_id, agent_name, message)
        VALUES ($1::bigint, $2::bigint, (SELECT name FROM agents WHERE id = $2::bigint), $3)
        """
    /// Who failed a task and why, oldest first (for the job's failure message).
    static let taskFailures = "SELECT agent_name, message FROM task_failures WHERE task_id = $1::bigint ORDER BY id"
    /// The agent's FAILs since `$2` (ms since the Unix epoch), for `QuarantinePolicy`.
    static let agentFailuresSince = """
        SELECT \(ms("f.at")) AS at_ms FROM task_failures f
        WHERE f.agent_id = $1::bigint AND f.at > to_timestamp($2::double precision / 1000) ORDER BY f.at
        """
    /// The database's now and the agent's previous quarantine end, for `QuarantinePolicy`.
    static let agentQuarantineState = """
        SELECT \(ms("now()")) AS now_ms, \(ms("quarantined_until")) AS until_ms FROM agents WHERE id = $1::bigint
        """
    static let quarantineAgent = """
        UPDATE agents SET quarantined_until = to_timestamp($2::double precision / 1000), last_error = $3 WHERE id = $1::bigint
        """
    static let setAgentLastError = "UPDATE agents SET last_error = $2 WHERE id = $1::bigint"
}
