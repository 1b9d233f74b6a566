// Test support shared by ReelStoreTests and ReelCoordinatorTests (a library target because
// test targets cannot depend on each other). Not part of any product.
import Foundation
import ReelCore
import ReelStore
import ReelScheduling

/// A real PostgreSQL for the store and coordinator tests: `REEL_TEST_DATABASE_URL` if set, else a private
/// cluster started once per test process with `ops/postgres.sh` in a temporary directory
/// (stopped at exit). Each test gets its own schema, so tests run in parallel.
public enum TestDatabase {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The server's URL, started on first use.
    public static let url: String = {
        if let url = ProcessInfo.processInfo.environment["REEL_TEST_DATABASE_URL"], !url.isEmpty { return url }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-db-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let data = directory.appendingPathComponent("data").path
        var lastError = ""
        for _ in 0..<5 {
            let port = Int.random(in: 20_000..<60_000)
            let (status, output, errors) = run(["start", data, String(port)])
            if status == 0 {
                clusterDirectory = strdup(data)
                atexit {
                    if let directory = TestDatabase.clusterDirectory {
                        let data = String(cString: directory)
                        _ = TestDatabase.run(["stop", data])
                        try? FileManager.default.removeItem(atPath: (data as NSString).deletingLastPathComponent)
                    }
                }
                return output.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            lastError = errors
        }
        fatalError("could not start PostgreSQL with ops/postgres.sh: \(lastError)")
    }()

    nonisolated(unsafe) static var clusterDirectory: UnsafeMutablePointer<CChar>?

    /// The server options the statement budget tests need (ops/test.sh starts its cluster with
    /// them too): pg_stat_statements, keeping room for every statement of every test database.
    /// At its default of 5,000 entries a whole run's databases fill it, and it then evicts the
    /// least-called entries (a measured `BEGIN`, say), so a count came out short now and then.
    public static let statementStatistics = "-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.max=100000"

    /// `base` (a `postgresql://` URL or `key=value` conninfo) with one more parameter, which
    /// libpq takes over the same one in `base`.
    static func conninfo(_ base: String, adding key: String, _ value: String) -> String {
        if base.hasPrefix("postgres://") || base.hasPrefix("postgresql://") {
            return base + (base.contains("?") ? "&" : "?") + key + "=" + value.replacingOccurrences(of: "=", with: "%3D")
        }
        return base + " \(key)='\(value)'"
    }

    /// A database of its own on the test server, dropped when released: for tests that read the
    /// server's per-database statistics (`pg_stat_statements` keys them by database).
    public final class Database: Sendable {
        public let name: String
        public let conninfo: String

        public init() throws {
            name = "reel_t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            let base = TestDatabase.url
            conninfo = TestDatabase.conninfo(base, adding: "dbname", name)
            try PGConnection(base).query("CREATE DATABASE \(name)")
        }

        public func connect() throws -> PGConnection { try PGConnection(conninfo) }

        deinit {
            let name = name
            DispatchQueue.global().async { _ = try? PGConnection(TestDatabase.url).query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        }
    }

    /// Runs ops/postgres.sh with its output in files, not pipes: the server it starts must not
    /// inherit a pipe we wait on (reading to EOF would then block until the server exits).
    static func run(_ arguments: [String]) -> (Int32, String, String) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("reel-pgsh-\(UUID().uuidString)")
        let outPath = base.path + ".out", errPath = base.path + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: outPath)
            try? FileManager.default.removeItem(atPath: errPath)
        }
        let script = packageRoot.appendingPathComponent("ops/postgres.sh").path
        let quoted = ([script] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        // posix_spawn + waitpid rather than Foundation.Process, whose waitUntilExit can stall
        // when the cooperative pool's few threads are all blocked in tests.
        // pg_stat_statements loaded, as ops/test.sh's cluster has it: the statement budget tests count with it.
        let command = "PG_OPTIONS='\(statementStatistics)' exec /bin/sh \(quoted) >'\(outPath)' 2>'\(errPath)' </dev/null"
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
        defer { for pointer in argv { free(pointer) } }
        guard posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ) == 0 else { return (-1, "", "posix_spawn failed") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1
        let output = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return (exitStatus, output, errors)
    }

    /// A fresh schema; connections made with `conninfo` use it (via `search_path`).
    public final class Schema: Sendable {
        public let name: String
        public let conninfo: String

        public init() throws {
            name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            let base = TestDatabase.url
            conninfo = TestDatabase.conninfo(base, adding: "options", "-csearch_path=\(name)")
            try PGConnection(base).query("CREATE SCHEMA \(name)")
        }

        public func connect() throws -> PGConnection { try PGConnection(conninfo) }

        /// A migrated store on a new connection.
        public func store(clock: FarmClock = .wall) throws -> FarmStore {
            let connection = try connect()
            try Migrator.migrate(connection)
            return FarmStore(connection: connection, clock: clock)
        }

        /// Drops the schema on a global queue: a `DROP SCHEMA … CASCADE` takes a second on a
        /// loaded machine, and the last reference often goes away on a cooperative-pool thread.
        deinit {
            let name = name
            DispatchQueue.global().async { _ = try? PGConnection(TestDatabase.url).query("DROP SCHEMA \(name) CASCADE") }
        }
    }
}
