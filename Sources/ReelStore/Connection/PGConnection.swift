import CLibPQ
import Foundation

/// One libpq connection (`PGconn`), synchronous and small: the coordinator owns one per
/// dedicated thread or actor.
///
/// Owns its `PGconn` and frees it in `deinit` (`PQfinish`). `@unchecked Sendable` because a
/// libpq connection may move between threads but must be used by **one thread at a time**:
/// callers serialise access (an actor, a lock or a single thread), which is what "synchronous
/// and owned by one worker" means here.
public final class PGConnection: @unchecked Sendable {
    private let connection: OpaquePointer

    /// Connects with a libpq connection string — `key=value` conninfo or a
    /// `postgresql://` URL. An empty string means "everything from the `PG*` environment
    /// variables and defaults", exactly as libpq does.
    public init(_ conninfo: String) throws {
        guard let connection = PQconnectdb(conninfo) else {
            throw PGError(sqlState: nil, message: "out of memory creating a libpq connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = PGConnection.trimmed(PQerrorMessage(connection))
            PQfinish(connection)
            throw PGError(sqlState: nil, message: message)
        }
        self.connection = connection
        // Notices (e.g. "relation already exists, skipping") would go to stderr otherwise.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
    }

    /// The connection string operators expect: `$DATABASE_URL` if set, else `""` (libpq then
    /// reads `PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`, `PGPASSWORD`, … itself).
    public static func conninfoFromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        environment["DATABASE_URL"] ?? ""
    }

    deinit {
        PQfinish(connection)
    }

    /// Requests sent to the server and answered (statements, prepares, scripts) since the
    /// connection opened: what a store operation costs in round trips, which the statement
    /// budget tests hold constant.
    public private(set) var roundTrips = 0

    /// Runs one statement with `$1…$n` bound to `parameters` in order (`PGBindable`: their text
    /// form, nil as SQL NULL). Parameters are never spliced into SQL, so values need no escaping.
    /// A statement with parameters is prepared on first use and executed prepared afterwards
    /// (`PQprepare`, `PQexecPrepared`): Reel's SQL is a fixed set of statements, and planning its
    /// larger ones each time cost about a millisecond per call.
    @discardableResult
    public func query(_ sql: String, _ parameters: [any PGBindable] = []) throws -> PGResult {
        // libpq wants C strings that live for the call: duplicate, and free them in one place.
        let cStrings: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.pgText.map { strdup($0) } ?? nil }
        defer { for pointer in cStrings { free(pointer) } }
        let name = parameters.isEmpty ? nil : try preparedName(for: sql)
        let result = cStrings.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { values in
                if let name {
                    PQexecPrepared(connection, name, Int32(parameters.count), values.baseAddress, nil, nil, 0)
                } else {
                    PQexecParams(connection, sql, Int32(parameters.count), nil, values.baseAddress, nil, nil, 0)
                }
            }
        }
        return try consume(result, sql: sql)
    }

    /// Statements prepared on this connection, by their SQL text.
    private var prepared: [String: String] = [:]

    private func preparedName(for sql: String) throws -> String {
        if let name = prepared[sql] { return name }
        let name = "reel_\(prepared.count + 1)"
        _ = try consume(PQprepare(connection, name, sql, 0, nil), sql: sql)
        prepared[sql] = name
        return name
    }

    /// Runs a script of one or more statements without parameters (`PQexec`), e.g. a migration.
    public func execute(script sql: String) throws {
        _ = try consume(PQexec(connection, sql), sql: sql)
    }

    /// Runs `body` inside `BEGIN … COMMIT`; any error rolls back and is rethrown.
    /// Nested calls are not supported (PostgreSQL has no nested transactions; use savepoints).
    @discardableResult
    public func transaction<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try query("BEGIN")
        do {
            let value = try body(self)
            try query("COMMIT")
            return value
        } catch {
            _ = try? query("ROLLBACK")
            throw error
        }
    }

    /// Whether the connection is still usable (`PQstatus`).
    public var isOpen: Bool { PQstatus(connection) == CONNECTION_OK }

    // MARK: LISTEN/NOTIFY

    /// Waits up to `timeoutMillis` for notifications on the channels this connection `LISTEN`s
    /// to (or until `wakeDescriptor`, when given, becomes readable), and returns those that
    /// arrived, in order. Blocks the calling thread: call it from a thread of its own.
    /// - Throws: `PGError` when the connection is lost.
    public func waitForNotifications(timeoutMillis: Int32, wakeDescriptor: Int32? = nil) throws -> [PGNotification] {
        var arrived = drainNotifications()
        if !arrived.isEmpty { return arrived }
        let socket = PQsocket(connection)
        guard socket >= 0 else { throw PGError(sqlState: nil, message: "the connection has no socket (closed)") }
        var descriptors = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0)]
        if let wakeDescriptor { descriptors.append(pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)) }
        let ready = poll(&descriptors, nfds_t(descriptors.count), timeoutMillis)
        if ready < 0 && errno != EINTR { throw PGError(sqlState: nil, message: "poll failed: errno \(errno)") }
        if descriptors[0].revents != 0 {
            guard PQconsumeInput(connection) == 1 else {
                throw PGError(sqlState: nil, message: PGConnection.trimmed(PQerrorMessage(connection)))
            }
            arrived = drainNotifications()
        }
        return arrived
    }

    private func drainNotifications() -> [PGNotification] {
        var out: [PGNotification] = []
        while let notice = PQnotifies(connection) {
            out.append(PGNotification(channel: String(cString: notice.pointee.relname),
                                      payload: notice.pointee.extra.map { String(cString: $0) } ?? ""))
            PQfreemem(notice)
        }
        return out
    }

    /// Copies a `PGresult` into Swift values and frees it (the single owner of every result).
    private func consume(_ result: OpaquePointer?, sql: String) throws -> PGResult {
        roundTrips += 1
        guard let result else {
            throw PGError(sqlState: nil, message: PGConnection.trimmed(PQerrorMessage(connection)), statement: PGConnection.firstLine(sql))
        }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            break
        default:
            let sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            throw PGError(sqlState: sqlState, message: PGConnection.trimmed(PQresultErrorMessage(result)),
                          statement: PGConnection.firstLine(sql))
        }
        let columnCount = PQnfields(result), rowCount = PQntuples(result)
        let columns = (0..<columnCount).map { String(cString: PQfname(result, $0)) }
        var rows: [[String?]] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            rows.append((0..<columnCount).map { column in
                PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
            })
        }
        let affected = Int(String(cString: PQcmdTuples(result))) ?? 0
        return PGResult(columns: columns, rows: rows, affectedRows: affected)
    }

    private static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "unknown libpq error" }
        return String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func firstLine(_ sql: String) -> String {
        let line = sql.split(separator: "\n").first { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? ""
        return line.trimmingCharacters(in: .whitespaces)
    }
}

/// One `NOTIFY` received on a channel the connection listens to.
public struct PGNotification: Hashable, Sendable {
    public var channel: String
    public var payload: String
    public init(channel: String, payload: String) { self.channel = channel; self.payload = payload }
}
