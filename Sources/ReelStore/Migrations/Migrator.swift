import Foundation

/// One numbered schema change: `NNN_name.sql`.
public struct Migration: Hashable, Sendable {
    public var version: Int
    public var name: String
    public var sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version; self.name = name; self.sql = sql
    }

    /// The migrations shipped with ReelStore, in order: SQL compiled into the binary
    /// (`Migrations/Migrations.swift`), so a deployed `reel` needs no resource files.
    public static func bundled() throws -> [Migration] {
        numbered
    }
}

/// Applies migrations at start: in version order, all pending ones in one transaction, under a
/// transaction-scoped advisory lock so two coordinators starting together cannot race (the
/// second waits, then finds nothing to do). Each applied version is recorded in
/// `schema_migrations`; re-running is a no-op.
public enum Migrator {
    /// An arbitrary constant naming Reel's migration lock ("REELMIGR" in ASCII).
    static let advisoryLockKey: Int64 = 0x5245_454C_4D49_4752

    /// Applies the pending migrations in the connection's current schema (`search_path`).
    /// - Returns: the versions applied now (empty when already up to date).
    @discardableResult
    public static func migrate(_ connection: PGConnection, migrations: [Migration]? = nil) throws -> [Int] {
        let migrations = try migrations ?? Migration.bundled()
        let versions = migrations.map(\.version)
        guard Set(versions).count == versions.count else {
            throw PGError(sqlState: nil, message: "duplicate migration versions \(versions)")
        }
        return try connection.transaction { connection in
            try connection.query(Statements.migrationLock, [String(advisoryLockKey)])
            try connection.query(Statements.createMigrationsTable)
            let applied = Set(try connection.query(Statements.appliedMigrations).rows.map { try $0.int("version") })
            var appliedNow: [Int] = []
            for migration in migrations.sorted(by: { $0.version < $1.version }) where !applied.contains(migration.version) {
                try connection.execute(script: migration.sql)
                try connection.query(Statements.recordMigration, [String(migration.version), migration.name])
                appliedNow.append(migration.version)
            }
            return appliedNow
        }
    }
}
