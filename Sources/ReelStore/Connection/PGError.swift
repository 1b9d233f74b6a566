/// A libpq failure with the server's own words: `PQerrorMessage` / `PQresultErrorMessage`,
/// and the SQLSTATE (`PQresultErrorField(PG_DIAG_SQLSTATE)`) when the server sent one.
public struct PGError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The five-character SQLSTATE (`40001`, `23505`, …), `nil` for client-side failures
    /// (connection refused, bad conninfo).
    public var sqlState: String?
    /// libpq's message, trimmed.
    public var message: String
    /// The SQL (first line) that failed, for logs; `nil` for connection errors.
    public var statement: String?

    public init(sqlState: String?, message: String, statement: String? = nil) {
        self.sqlState = sqlState
        self.message = message
        self.statement = statement
    }

    public var description: String {
        var text = "PostgreSQL error"
        if let sqlState { text += " \(sqlState)" }
        text += ": \(message)"
        if let statement { text += " (in: \(statement))" }
        return text
    }

    /// SQLSTATE class 40: serialization failure / deadlock — the transaction may be retried.
    public var isTransient: Bool { sqlState?.hasPrefix("40") ?? false }
}
