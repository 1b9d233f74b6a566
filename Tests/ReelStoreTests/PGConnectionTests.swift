import ReelStoreTesting
import Foundation
import Testing
import ReelThreadTesting
@testable import ReelStore
import ReelScheduling

@Suite("PGConnection on a real PostgreSQL", .database, .blocking)
struct PGConnectionTests {
    @Test("text parameters round-trip untouched, NULL included")
    func parameters() throws {
        let db = try PGConnection(TestDatabase.url)
        let tricky = "it's \"quoted\"; DROP TABLE x; -- 加点水印 \\ $1"
        let row = try #require(try db.query("SELECT $1::text AS a, $2::text AS b, $3::bigint + 1 AS c, true AS d",
                                            [tricky, String?.none, 41]).singleRow())
        #expect(row["a"] == tricky)
        #expect(row["b"] == nil)
        #expect(try row.int64("c") == 42)
        #expect(try row.bool("d"))
        #expect(throws: PGError.self) { try row.string("b") }
    }

    @Test("array parameters round-trip element by element: quotes, backslashes, commas, braces, NULL")
    func arrayParameters() throws {
        let db = try PGConnection(TestDatabase.url)
        let elements: [String?] = ["plain", "it's \"quoted\"", "back\\slash \\\"", "a,b {c} NULL", nil, "加点水印", ""]
        let rows = try db.query("SELECT e FROM unnest($1::text[]) WITH ORDINALITY AS u(e, n) ORDER BY n", [elements]).rows
        #expect(rows.map { $0["e"] } == elements)
        let ids: [Int64] = [1, -2, 9_223_372_036_854_775_807]
        let sum = try #require(try db.query("SELECT array_length($1::bigint[], 1) AS n, $1::bigint[] AS a", [ids]).singleRow())
        #expect(try sum.int("n") == 3 && sum["a"] == "{1,-2,9223372036854775807}")
    }

    @Test("server errors carry SQLSTATE and the server's message")
    func serverError() throws {
        let db = try PGConnection(TestDatabase.url)
        do {
            try db.query("SELECT 1 / $1::integer", ["0"])
            Issue.record("no error")
        } catch let error as PGError {
            #expect(error.sqlState == "22012")
            #expect(error.message.contains("division by zero"))
        }
        // The connection stays usable after an error.
        #expect(try db.query("SELECT 1 AS one").rows[0].int("one") == 1)
    }

    @Test("connection failures carry libpq's message")
    func connectError() {
        do {
            _ = try PGConnection("postgresql://postgres@127.0.0.1:1/reel?connect_timeout=2")
            Issue.record("connected to port 1")
        } catch let error as PGError {
            #expect(error.sqlState == nil)
            #expect(error.message.contains("127.0.0.1"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("transaction commits on success and rolls back on error")
    func transactions() throws {
        let schema = try TestDatabase.Schema()
        let db = try schema.connect()
        try db.query("CREATE TABLE t (v integer)")
        _ = try db.transaction { try $0.query("INSERT INTO t VALUES (1)") }
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try db.transaction { db in
                try db.query("INSERT INTO t VALUES (2)")
                throw Boom()
            }
        }
        #expect(try db.query("SELECT count(*) AS n FROM t").rows[0].int("n") == 1)
        #expect(try db.query("UPDATE t SET v = 3").affectedRows == 1)
    }

    @Test("an empty connection string takes everything from the PG* environment, as libpq does")
    func emptyConninfoUsesEnvironment() throws {
        let url = try #require(URLComponents(string: TestDatabase.url))
        // Other tests pass full URLs, whose explicit parameters win over these defaults.
        setenv("PGHOST", url.host ?? "127.0.0.1", 1)
        setenv("PGPORT", String(url.port ?? 5432), 1)
        setenv("PGUSER", url.user ?? "postgres", 1)
        setenv("PGDATABASE", String(url.path.dropFirst()), 1)
        defer { for name in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE"] { unsetenv(name) } }
        let db = try PGConnection("")
        #expect(try db.query("SELECT current_database() AS d").rows[0].string("d") == String(url.path.dropFirst()))
    }

    @Test("DATABASE_URL is the connection string; without it libpq's PG* variables apply")
    func environment() {
        #expect(PGConnection.conninfoFromEnvironment(["DATABASE_URL": "postgresql://x/y"]) == "postgresql://x/y")
        #expect(PGConnection.conninfoFromEnvironment(["PGHOST": "db"]) == "")
    }
}
