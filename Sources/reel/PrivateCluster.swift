import Foundation

/// A private PostgreSQL cluster for `reel render`'s all-in-one mode: created on first use
/// under the user's data directory, started when not running, reused afterwards.
///
/// It listens on a unix socket inside its data directory only (no TCP port, so it never
/// collides with another server) and trusts local connections: it is a single user's
/// scratch database, not a shared server. `initdb` and `postgres` refuse to run as root, so
/// as root the cluster belongs to the `postgres` user and lives under `/var/lib/reel` (the
/// `postgres` user cannot traverse `/root`).
public struct PrivateCluster: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let dataDirectory: String
    /// The libpq connection string of the cluster's `reel` database.
    public var conninfo: String { "host=\(dataDirectory) port=5432 user=postgres dbname=reel" }

    public init(dataDirectory: String = PrivateCluster.defaultDataDirectory) {
        self.dataDirectory = dataDirectory
    }

    /// `$XDG_DATA_HOME/reel/postgres` or `~/.local/share/reel/postgres`; `/var/lib/reel/postgres` for root.
    public static var defaultDataDirectory: String {
        if geteuid() == 0 { return "/var/lib/reel/postgres" }
        let env = ProcessInfo.processInfo.environment
        let base = env["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() + "/.local/share")
        return base + "/reel/postgres"
    }

    /// Creates the cluster if needed, starts it if it is not running, creates the `reel`
    /// database if missing. Returns the conninfo.
    @discardableResult
    public func start() throws -> String {
        let bin = try Self.binDirectory()
        let fm = FileManager.default
        // The parent stays traversable (0755) so that, as root, the postgres user can reach its cluster.
        let parent = URL(fileURLWithPath: dataDirectory).deletingLastPathComponent().path
        try fm.createDirectory(atPath: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        if !fm.fileExists(atPath: dataDirectory) {
            try fm.createDirectory(atPath: dataDirectory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        }
        if geteuid() == 0 {
            try run(["/bin/chown", "postgres:", dataDirectory], what: "handing \(dataDirectory) to the postgres user")
            if Self.spawn(["/sbin/runuser", "-u", "postgres", "--", "test", "-w", dataDirectory]).status != 0 {
                throw Failure(description: "the postgres user cannot reach \(dataDirectory); choose a data directory outside /root")
            }
        }
        if !fm.fileExists(atPath: dataDirectory + "/PG_VERSION") {
            try run(asOwner([bin + "/initdb", "-D", dataDirectory, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8"]),
                    what: "creating the private database cluster in \(dataDirectory)")
        }
        if Self.spawn(asOwner([bin + "/pg_ctl", "-D", dataDirectory, "status"])).status != 0 {
            let options = "-c listen_addresses='' -c unix_socket_directories='\(dataDirectory)' -c max_connections=100 -c shared_buffers=32MB"
            try run(asOwner([bin + "/pg_ctl", "-D", dataDirectory, "-l", dataDirectory + "/server.log", "-w", "-t", "60", "-o", options, "start"]),
                    what: "starting the private database cluster in \(dataDirectory) (its log: \(dataDirectory)/server.log)")
        }
        let exists = Self.spawn(asOwner([bin + "/psql", "-h", dataDirectory, "-U", "postgres", "-d", "postgres", "-tAc",
                                         "SELECT 1 FROM pg_database WHERE datname = 'reel'"]))
        if !exists.output.contains("1") {
            try run(asOwner([bin + "/psql", "-h", dataDirectory, "-U", "postgres", "-d", "postgres", "-qc", "CREATE DATABASE reel"]),
                    what: "creating the reel database")
        }
        return conninfo
    }

    /// Stops the cluster if it is running (fast shutdown).
    public func stop() throws {
        let bin = try Self.binDirectory()
        guard FileManager.default.fileExists(atPath: dataDirectory + "/PG_VERSION"),
              Self.spawn(asOwner([bin + "/pg_ctl", "-D", dataDirectory, "status"])).status == 0 else { return }
        try run(asOwner([bin + "/pg_ctl", "-D", dataDirectory, "-m", "fast", "-w", "stop"]), what: "stopping the private database cluster")
    }

    static func binDirectory() throws -> String {
        var candidates = [ProcessInfo.processInfo.environment["PG_BINDIR"] ?? "", "/usr/lib/postgresql/15/bin"]
        if let versions = try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql") {
            candidates += versions.sorted().reversed().map { "/usr/lib/postgresql/\($0)/bin" }
        }
        candidates += ["/usr/local/pgsql/bin", "/usr/bin"]
        for dir in candidates where !dir.isEmpty {
            if FileManager.default.isExecutableFile(atPath: dir + "/initdb") && FileManager.default.isExecutableFile(atPath: dir + "/pg_ctl") {
                return dir
            }
        }
        throw Failure(description: "no PostgreSQL server binaries (initdb, pg_ctl) found: install the postgresql package, "
                      + "set PG_BINDIR, or give --database / DATABASE_URL")
    }

    private func asOwner(_ argv: [String]) -> [String] {
        geteuid() == 0 ? ["/sbin/runuser", "-u", "postgres", "--"] + argv : argv
    }

    private func run(_ argv: [String], what: String) throws {
        let r = Self.spawn(argv)
        guard r.status == 0 else {
            throw Failure(description: "\(what) failed: \(r.errors.isEmpty ? r.output : r.errors)".trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// Runs a program with posix_spawn (Foundation.Process can stall when the concurrency
    /// pool is busy), its output captured through temporary files.
    static func spawn(_ argv: [String]) -> (status: Int32, output: String, errors: String) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("reel-pg-\(UUID().uuidString)").path
        let out = base + ".out", err = base + ".err"
        defer { unlink(out); unlink(err) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, argv[0], &actions, nil, cArgs, environ) == 0 else {
            return (-1, "", "cannot run \(argv[0])")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let exit = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1
        return (exit, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "", (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }
}
