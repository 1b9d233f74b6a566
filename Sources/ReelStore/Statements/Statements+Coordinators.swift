extension Statements {
    // MARK: Coordinators (migration 9)

    static let registerCoordinator = """
        INSERT INTO coordinators (address, host) VALUES ($1, $2) RETURNING id
        """
    static let coordinatorHeartbeat = """
        UPDATE coordinators SET last_heartbeat = now(), stopped_at = NULL WHERE id = $1::bigint
        """
    static let coordinatorStopped = """
        UPDATE coordinators SET stopped_at = now() WHERE id = $1::bigint
        """
    /// Every coordinator that has not stopped, and those stopped (or silent) within `$1` seconds.
    static let listCoordinators = """
        SELECT id, address, host, \(ms("started_at")) AS started_ms, \(ms("last_heartbeat")) AS heartbeat_ms,
               (extract(epoch FROM now() - last_heartbeat) * 1000)::bigint AS age_ms, \(ms("stopped_at")) AS stopped_ms
        FROM coordinators
        WHERE last_heartbeat > now() - make_interval(secs => $1::double precision)
        ORDER BY id
        """
    // Session-level advisory locks are the database's, not a schema's: each is keyed by the lock
    // ($1) and the farm's schema, so that farms in other schemas of the same database (and tests
    // running side by side, each in a schema of its own) neither share nor block them.
    /// A session-level advisory lock, if free (`pg_try_advisory_lock`).
    static let tryAdvisoryLock = "SELECT pg_try_advisory_lock($1::integer, hashtext(current_schema())) AS locked"
    /// A session-level advisory lock, waiting for it (`pg_advisory_lock`).
    static let advisoryLock = "SELECT pg_advisory_lock($1::integer, hashtext(current_schema()))"
    static let advisoryUnlock = "SELECT pg_advisory_unlock($1::integer, hashtext(current_schema())) AS unlocked"
}
