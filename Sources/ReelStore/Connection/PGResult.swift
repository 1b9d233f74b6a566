/// A query's result copied out of libpq (the `PGresult` is freed before this exists), as rows
/// of optional strings — PostgreSQL's text format — with typed accessors.
public struct PGResult: Sendable {
    /// Column names in order.
    public let columns: [String]
    public let rows: [PGRow]
    /// `PQcmdTuples`: rows affected by INSERT/UPDATE/DELETE (0 when not applicable).
    public let affectedRows: Int

    public init(columns: [String], rows: [[String?]], affectedRows: Int) {
        self.columns = columns
        let index = ColumnIndex(columns)
        self.rows = rows.map { PGRow(values: $0, index: index) }
        self.affectedRows = affectedRows
    }

    /// The only row, or `nil` when there is none.
    /// - Throws: if there is more than one row.
    public func singleRow() throws -> PGRow? {
        guard rows.count <= 1 else {
            throw PGError(sqlState: nil, message: "expected at most one row, got \(rows.count)")
        }
        return rows.first
    }
}

/// Column name → position, shared by all rows of a result.
final class ColumnIndex: Sendable {
    let positions: [String: Int]
    init(_ columns: [String]) {
        positions = Dictionary(columns.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }
}

/// One row: values in PostgreSQL's text format, `nil` for SQL NULL.
///
/// Typed accessors throw a `PGError` naming the column when a value is NULL or does not
/// convert, so a schema/code mismatch fails loudly instead of yielding a default.
public struct PGRow: Sendable {
    public let values: [String?]
    let index: ColumnIndex

    /// The raw text of `column`, `nil` for NULL. Unknown column names trap (a programming error).
    public subscript(_ column: String) -> String? {
        guard let position = index.positions[column] else { preconditionFailure("no column \(column)") }
        return values[position]
    }

    public func string(_ column: String) throws -> String {
        guard let value = self[column] else { throw PGError(sqlState: nil, message: "column \(column) is NULL") }
        return value
    }

    public func int64(_ column: String) throws -> Int64 {
        let text = try string(column)
        guard let value = Int64(text) else { throw PGError(sqlState: nil, message: "column \(column): '\(text)' is not an integer") }
        return value
    }

    public func optionalInt64(_ column: String) throws -> Int64? {
        guard self[column] != nil else { return nil }
        return try int64(column)
    }

    public func int(_ column: String) throws -> Int { Int(try int64(column)) }

    public func double(_ column: String) throws -> Double {
        let text = try string(column)
        guard let value = Double(text) else { throw PGError(sqlState: nil, message: "column \(column): '\(text)' is not a number") }
        return value
    }

    public func optionalDouble(_ column: String) throws -> Double? {
        guard self[column] != nil else { return nil }
        return try double(column)
    }

    /// PostgreSQL booleans print as `t` / `f`.
    public func bool(_ column: String) throws -> Bool {
        switch try string(column) {
        case "t", "true": return true
        case "f", "false": return false
        case let other: throw PGError(sqlState: nil, message: "column \(column): '\(other)' is not a boolean")
        }
    }
}
