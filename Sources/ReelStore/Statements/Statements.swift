import ReelScheduling

/// Every SQL statement Reel runs, named, in one reviewed folder: one file per part of the store
/// (`Statements+Lifecycle.swift` holds every task and job transition), parameterised with
/// `$n` and never built from values (`PGBindable` binds them). Times leave the database as
/// milliseconds since the Unix epoch; lease arithmetic takes the `FarmClock`'s reading as a
/// parameter, so it never mixes clocks. Schema changes are numbered migrations
/// (`Migrations/Migrations.swift`).
enum Statements {
    /// `timestamptz` → ms since the Unix epoch.
    static func ms(_ column: String) -> String { "(extract(epoch FROM \(column)) * 1000)::bigint" }
    /// Parameter `$n`, a `FarmClock` reading in milliseconds, as a timestamp.
    static func at(_ n: Int) -> String { "to_timestamp($\(n)::bigint / 1000.0)" }

    /// `TaskKind.claimRank` of `tasks.kind` in SQL: the expression of the `tasks_claim_order`
    /// index (migration 3), so that a claim's ORDER BY reads it straight from the index.
    static func claimRank(_ kind: String) -> String {
        "(CASE \(kind) " + TaskKind.allCases.sorted().dropLast().map { "WHEN '\($0.rawValue)' THEN \($0.claimRank) " }.joined()
            + "ELSE \(TaskKind.allCases.map(\.claimRank).max() ?? 0) END)"
    }
    /// The kinds that end their job (`TaskKind.completesJob`), as an SQL list.
    static let jobEndingKinds = sqlList(TaskKind.allCases.filter(\.completesJob).map(\.rawValue))
    /// The kinds whose frames count in a job's progress (`TaskKind.countsFrames`), as an SQL list.
    static let frameCountingKinds = sqlList(TaskKind.allCases.filter(\.countsFrames).map(\.rawValue))
    /// The states a job ends in (`JobState.isTerminal`), as an SQL list.
    static let terminalJobStates = sqlList(JobState.allCases.filter(\.isTerminal).map(\.rawValue))
    /// The states whose tasks may be claimed and hold leases (`JobState.isActive`), as an SQL list.
    static let activeJobStates = sqlList(JobState.allCases.filter(\.isActive).map(\.rawValue))

    private static func sqlList(_ names: [String]) -> String { "(" + names.map { "'\($0)'" }.joined(separator: ", ") + ")" }

    // MARK: Migrations

    static let migrationLock = "SELECT pg_advisory_xact_lock($1::bigint)"
    static let createMigrationsTable = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version    integer PRIMARY KEY,
            name       text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now())
        """
    static let appliedMigrations = "SELECT version FROM schema_migrations ORDER BY version"
    static let recordMigration = "INSERT INTO schema_migrations (version, name) VALUES ($1::integer, $2)"
}
