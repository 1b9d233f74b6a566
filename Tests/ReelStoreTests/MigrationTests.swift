import ReelStoreTesting
import Testing
import ReelThreadTesting
@testable import ReelStore

@Suite("Migrations", .database, .blocking)
struct MigrationTests {
    @Test("bundled migrations are numbered from 1 without gaps")
    func bundled() throws {
        let versions = try Migration.bundled().map(\.version)
        #expect(versions == Array(1...versions.count))
    }

    @Test("applying twice is a no-op")
    func idempotent() throws {
        let schema = try TestDatabase.Schema()
        let db = try schema.connect()
        let first = try Migrator.migrate(db)
        #expect(first == (try Migration.bundled().map(\.version)))
        #expect(try Migrator.migrate(db) == [])
        let tables = try db.query("""
            SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name
            """, [schema.name]).rows.map { try $0.string("table_name") }
        #expect(tables == ["agent_prices", "agents", "assets", "batches", "coordinators", "events", "job_assets", "job_documents", "job_notifications", "jobs",
                           "schema_migrations",
                           "task_failures", "task_renditions", "tasks"])
    }

    @Test("concurrent migrators do not race: exactly one applies")
    func concurrent() throws {
        let schema = try TestDatabase.Schema()
        let results = Collector<[Int]>()
        let failures = Collector<String>()
        onThreads(4) { _ in
            do {
                results.append(try Migrator.migrate(try schema.connect()))
            } catch {
                failures.append("\(error)")
            }
        }
        #expect(failures.values == [])
        #expect(results.values.filter { !$0.isEmpty }.count == 1)
    }

    @Test("a failing migration leaves nothing behind")
    func failingMigration() throws {
        let schema = try TestDatabase.Schema()
        let db = try schema.connect()
        let bad = [Migration(version: 1, name: "ok", sql: "CREATE TABLE a (x int)"),
                   Migration(version: 2, name: "bad", sql: "CREATE TABLE b (x nonexistent_type)")]
        #expect(throws: PGError.self) { try Migrator.migrate(db, migrations: bad) }
        #expect(try db.query("SELECT to_regclass('a') IS NULL AS gone").rows[0].bool("gone"))
    }

    @Test("a job stored before migration 20 keeps its composition, settings and inline render plan")
    func jobDocumentsMigrate() throws {
        let schema = try TestDatabase.Schema()
        let db = try schema.connect()
        let before = try Migration.bundled().filter { $0.version < 20 }
        try Migrator.migrate(db, migrations: before)
        let plan = String(repeating: "ab", count: 32)
        let job = try db.query("""
            INSERT INTO jobs (state, composition, plan, settings, plan_sha256, plan_size) VALUES ('done', $1, $2, $3, $4, 12) RETURNING id
            """, [#"{"formatVersion": 1}"#, #"{"plan":1}"#, #"{"settings":{}}"#, plan]).rows[0].int64("id")
        let unplanned = try db.query("INSERT INTO jobs (state, composition) VALUES ('queued', 'c') RETURNING id").rows[0].int64("id")
        #expect(try Migrator.migrate(db) == (try Migration.bundled().map(\.version)).filter { $0 >= 20 })

        let store = FarmStore(connection: db)
        let documents = try #require(try store.jobs.documents(job))
        #expect(documents == JobDocuments(composition: #"{"formatVersion": 1}"#, renderPlan: #"{"plan":1}"#, settings: #"{"settings":{}}"#,
                                          renderPlanDocument: RenderPlanReference(sha256: plan, size: 12)))
        #expect(documents.hasInlineRenderPlan, "a job planned before keeps its plan in its row, read first")
        #expect(try store.jobs.summary(job)?.settings == #"{"settings":{}}"#)
        let waiting = try #require(try store.jobs.documents(unplanned))
        #expect(waiting.composition == "c" && waiting.settings == "{}" && !waiting.hasInlineRenderPlan && waiting.renderPlanDocument == nil)
        // Deleting the job deletes its documents.
        _ = try store.jobs.delete(job)
        #expect(try db.query("SELECT count(*) AS n FROM job_documents WHERE job_id = $1::bigint", [job]).rows[0].int("n") == 0)
    }

    @Test("every digest column admits 64 lowercase hex digits and nothing else")
    func digestChecks() throws {
        let schema = try TestDatabase.Schema()
        let db = try schema.connect()
        try Migrator.migrate(db)
        let good = String(repeating: "0123456789abcdef", count: 4)
        let bad = [String(good.dropLast()), good + "0", good.uppercased(), String(good.dropLast()) + "g",
                   String(good.dropLast()) + "é", String(good.dropLast(2)) + "é", " " + good.dropLast(), ""]
        // Each column's CHECK evaluated as PostgreSQL evaluates it on an insert or update.
        let checks = try db.query("""
            SELECT c.conname, a.attname, pg_get_expr(c.conbin, c.conrelid) AS expr FROM pg_constraint c
            JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
            WHERE c.contype = 'c' AND c.connamespace = $1::regnamespace AND pg_get_expr(c.conbin, c.conrelid) LIKE '%0-9a-f%'
            ORDER BY c.conname
            """, [schema.name]).rows.map { (try $0.string("conname"), try $0.string("attname"), try $0.string("expr")) }
        // (job_assets holds the 32 bytes since migration 20: its check is on their count.)
        #expect(checks.map(\.0) == ["assets_sha256_check", "jobs_plan_sha256_check",
                                    "task_renditions_rendition_key_check", "task_renditions_source_sha256_check", "tasks_content_key_check"])
        for (name, column, expression) in checks {
            for (value, admitted) in [(good, true)] + bad.map({ ($0, false) }) {
                let sql = "SELECT (\(expression.replacingOccurrences(of: column, with: "$1::text"))) AS ok"
                #expect(try db.query(sql, [value]).rows[0].bool("ok") == admitted, "\(name) on \(value.debugDescription)")
            }
        }
    }
}
