import Foundation
import ReelStoreTesting
import Testing
import ReelThreadTesting
@testable import ReelStore
import ReelScheduling

/// What the farm's hot paths cost in the database, counted rather than timed (timings on two
/// shared cores are noise; counts are exact): the SQL statements the server runs for one claim,
/// one result, one heartbeat, a cancel, a retry and a submit's task insert — trigger bodies
/// included, from `pg_stat_statements` with `track = all` on a database of the suite's own —
/// and the round trips the store's connection makes for them. Each operation is measured on
/// a job of 10 tasks and on one of 2,000: the counts must be equal (nothing grows with the job)
/// and within the budget written beside each. A per-row trigger, a statement per task, or an
/// extra query per claim fails here.
///
/// Foreign-key checks are left out of the statement counts: PostgreSQL runs one per row
/// written by design, in C (23 ms for 14,400 task rows).
@Suite("Store: statements and round trips of the hot paths", .database, .blocking)
struct StatementBudgetTests {
    struct Cost: Equatable, CustomStringConvertible {
        var statements: Int
        var roundTrips: Int
        /// Foreign-key checks (PostgreSQL's `FOR KEY SHARE OF x` lookups), not in `statements`.
        var keyChecks = 0
        /// Each statement's calls, by the start of its text: what a failure message lists.
        var calls: [String: Int] = [:]
        var description: String {
            "\(statements) statements, \(roundTrips) round trips (\(calls.sorted { $0.key < $1.key }.map { "\($0.value)× \($0.key)" }.joined(separator: "; ")))"
        }
    }

    /// A database with `pg_stat_statements`, and a migrated store on it whose statements are
    /// counted with their trigger bodies.
    final class Meter {
        let database: TestDatabase.Database
        let admin: PGConnection
        let store: FarmStore

        init() throws {
            database = try TestDatabase.Database()
            admin = try database.connect()
            do {
                try admin.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                try admin.query("SELECT count(*) FROM pg_stat_statements")
            } catch {
                throw PGError(sqlState: nil, message: "the statement budget tests need pg_stat_statements loaded: start PostgreSQL with "
                              + "\(TestDatabase.statementStatistics) (ops/test.sh does): \(error)")
            }
            let connection = try database.connect()
            try connection.query("SET pg_stat_statements.track = 'all'")
            try Migrator.migrate(connection)
            store = FarmStore(connection: connection)
        }

        /// The statements the server ran in this database and the round trips `store` made
        /// while `body` ran.
        func cost(_ body: (FarmStore) throws -> Void) throws -> Cost {
            try admin.query("SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)")
            let before = store.connection.roundTrips
            try body(store)
            let roundTrips = store.connection.roundTrips - before
            // Literals and parameters as `?`: pg_stat_statements keeps a trigger body's statement
            // normalised (`pg_notify($11, …)`) when it was parsed after the reset, and as written
            // (`pg_notify('reel', …)`) when a cached plan ran first; either is the same statement.
            let rows = try admin.query("""
                SELECT left(regexp_replace(regexp_replace(query, '''[^'']*''|\\$[0-9]+', '?', 'g'), '\\s+', ' ', 'g'), 60) AS query,
                       sum(calls) AS calls FROM pg_stat_statements
                WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE '%FOR KEY SHARE OF x%'
                GROUP BY 1
                """).rows
            let calls = Dictionary(try rows.map { (try $0.string("query"), try $0.int("calls")) }, uniquingKeysWith: +)
            let keyChecks = try admin.query("""
                SELECT coalesce(sum(calls), 0) AS calls FROM pg_stat_statements
                WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query LIKE '%FOR KEY SHARE OF x%'
                """).rows[0].int("calls")
            return Cost(statements: calls.values.reduce(0, +), roundTrips: roundTrips, keyChecks: keyChecks, calls: calls)
        }

        /// A queued job of `chunks` video chunks, an audio task and its finalise task.
        func job(chunks: Int) throws -> Int64 {
            try store.jobs.create(JobStoreTests.job(chunks: chunks))
        }
    }

    static let sizes = [10, 2_000]

    /// The costs of `measured` on a job of each size in `sizes`, each on a fresh job readied by
    /// `prepare` (not counted), after one unmeasured run of both on a small job so that every
    /// statement is already prepared on the connection. Each job is the only one claimable
    /// while it is measured (the one before is cancelled), so claims take its tasks.
    static func costs<T>(_ meter: Meter, prepare: (FarmStore, _ job: Int64, _ agent: Int64) throws -> T,
                         _ measured: (FarmStore, T) throws -> Void) throws -> [Cost] {
        let store = meter.store
        let agent = try store.agents.register(name: "agent-\(UUID().uuidString.prefix(8))", host: "h", capabilities: "{}")
        func endOthers() throws {
            for job in try store.jobs.recent(limit: 100) where !job.state.isTerminal { try store.lifecycle.cancel(job: job.id) }
        }
        try endOthers()
        try measured(store, try prepare(store, try meter.job(chunks: 3), agent))
        return try sizes.map { size in
            try endOthers()
            let state = try prepare(store, try meter.job(chunks: size), agent)
            return try meter.cost { try measured($0, state) }
        }
    }

    /// Equal at every size, and within `budget`.
    static func expectConstant(_ costs: [Cost], within budget: Cost, _ what: String) {
        #expect(Set(costs.map(\.calls)).count == 1 && Set(costs.map(\.roundTrips)).count == 1,
                "\(what) grows with the job: \(zip(sizes, costs).map { "\($0.0) tasks: \($0.1)" })")
        #expect(costs.allSatisfy { $0.statements <= budget.statements && $0.roundTrips <= budget.roundTrips },
                "\(what) costs \(costs), over its budget of \(budget)")
    }

    /// An agent's claim of one task of `job`'s, after a first claim that marked it running.
    static func claimed(_ store: FarmStore, _ agent: Int64) throws -> ClaimedTask {
        try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 60, kinds: [.videoChunk]))
    }

    @Test("one claim: three round trips (jobs, candidates, lease), whatever the job's size")
    func claim() throws {
        let costs = try Self.costs(try Meter(), prepare: { store, _, agent in
            // The job's first claim marks it running (once per job): not the steady state measured.
            _ = try Self.claimed(store, agent)
            return agent
        }) { store, agent in _ = try Self.claimed(store, agent) }
        Self.expectConstant(costs, within: Cost(statements: 5, roundTrips: 3), "a claim")
        // No foreign key is checked: not the agent a lease names, nor a copy of the task kept on
        // the agent's row, nor its `claimed` event's job (each was a lookup and a row lock).
        #expect(costs.allSatisfy { $0.keyChecks == 0 }, "a claim checks foreign keys: \(costs.map(\.keyChecks))")
    }

    /// The nodes of a plan (`EXPLAIN (FORMAT JSON)`) that name a table (its scans and writes),
    /// with the index a scan uses, depth first.
    static func tableAccesses(_ plan: Any) -> [(node: String, relation: String, index: String?)] {
        guard let node = plan as? [String: Any] else { return (plan as? [Any] ?? []).flatMap(tableAccesses) }
        var found: [(node: String, relation: String, index: String?)] = []
        if let relation = node["Relation Name"] as? String, let type = node["Node Type"] as? String {
            found.append((type, relation, node["Index Name"] as? String))
        }
        for (key, value) in node where key == "Plan" || key == "Plans" { found += tableAccesses(value) }
        return found
    }

    /// A plan-shape guard, not a timing: PostgreSQL's statistics of a job are those of when it
    /// was stored (all queued) while agents claim most of its tasks, and the plans a claim's
    /// statements get, custom and generic, must still reach the job's next queued task through
    /// `tasks_claim_order`. A generic plan of the candidates with `LIMIT $5` sorted every queued
    /// task (11 ms a call on 14,400 chunks), so their limits are written into the statement; put
    /// back, this test fails (3 issues: a bitmap scan, not tasks_claim_order, a Sort).
    /// With `EXISTS` in the claimable-jobs statement (before 43abdb8) the planner made a
    /// semi-join and read `tasks` sequentially from the table's start, through every task
    /// claimed since: 6.5 ms a claim with 1,000 agents on one 14,400-chunk job. A block count
    /// also saw it, but depends on when PostgreSQL marks dead index entries (loaded machines
    /// did not in time); a plan's shape does not.
    @Test("a claim's statements read tasks through the claim-order index, with statistics from when the job was all queued")
    func claimStatementsProbeTheQueue() throws {
        let meter = try Meter()
        let store = meter.store
        // No background analyze while it runs: the statistics stay those of a fresh job.
        try meter.admin.query("ALTER TABLE tasks SET (autovacuum_enabled = false)")
        let agent = try store.agents.register(name: "probe", host: "h", capabilities: "{}")
        // Three jobs of 15,000 chunks, as a farm with a few long-form jobs queued (with one job,
        // the generic plan of the candidates with `LIMIT $5` kept to the index; with three it
        // sorted them, as the benchmark's three 14,400-chunk jobs showed).
        let job = try meter.job(chunks: 15_000)
        _ = try meter.job(chunks: 15_000)
        _ = try meter.job(chunks: 15_000)
        try store.jobs.refreshTaskStatistics()  // as the coordinator does after storing a large job: all queued
        let first = try Self.claimed(store, agent)
        try meter.admin.query("UPDATE tasks SET state = 'done', progress_frames = frame_end - frame_start WHERE job_id = $1::bigint AND kind = 'video_chunk' AND ordinal < 14900",
                              [job])
        let kinds = [TaskKind.videoChunk].map(\.rawValue)
        let statements: [(String, String, [any PGBindable])] = [
            ("claimable jobs", Statements.claimableJobs, [kinds]),
            ("claimable jobs, next page", Statements.claimableJobsAfter, [kinds, 0, Int64(0), Int64(-1)]),
            ("candidates", Statements.claimCandidatesOfJob(limit: 16), [job, kinds, false, 0]),
            ("lease", Statements.leaseTasks, [[first.id], [agent], 60.0, Int64(0)]),
        ]
        // The plan for these values (a custom plan), and the generic plan the coordinator's
        // dispatcher runs (`plan_cache_mode = force_generic_plan`: planned once per connection).
        try meter.admin.query("SET plan_cache_mode = force_generic_plan")
        for (name, sql, parameters) in statements {
            let custom = try store.connection.query("EXPLAIN (FORMAT JSON) " + sql, parameters).rows[0].string("QUERY PLAN")
            try meter.admin.query("DEALLOCATE ALL")
            try meter.admin.query("PREPARE probe AS " + sql)
            let values = parameters.map { "'" + ($0.pgText ?? "").replacingOccurrences(of: "'", with: "''") + "'" }.joined(separator: ", ")
            let generic = try meter.admin.query("EXPLAIN (FORMAT JSON) EXECUTE probe(\(values))").rows[0].string("QUERY PLAN")
            for (kind, text) in [("custom", custom), ("generic", generic)] {
                let plan = try JSONSerialization.jsonObject(with: Data(text.utf8))
                let accesses = Self.tableAccesses(plan).filter { $0.relation == "tasks" && $0.node.hasSuffix("Scan") }  // reads, not the lease's ModifyTable
                #expect(!accesses.isEmpty, "\(name), \(kind): its plan reads no tasks?\n\(text)")
                for access in accesses {
                    #expect(access.node.hasPrefix("Index") && access.index != nil,
                            "\(name), \(kind) plan, reads tasks by \(access.node)\(access.index.map { " using \($0)" } ?? ""), not an index probe:\n\(text)")
                }
                if name != "lease" {
                    #expect(accesses.allSatisfy { $0.index == "tasks_claim_order" }, "\(name), \(kind): \(accesses.map { "\($0.node) \($0.index ?? "-")" })")
                }
                if name == "candidates" {  // in the index's order: nothing sorted
                    #expect(!text.contains(#""Node Type": "Sort""#), "the candidates' \(kind) plan sorts:\n\(text)")
                }
            }
        }
        try meter.admin.query("RESET plan_cache_mode")
        // And the claim itself still finds the queued tail.
        #expect(try Self.claimed(store, agent).ordinal >= 14_900)
    }

    @Test("a claim and a result leave the row of an agent that is alive alone")
    func agentRowsAreNotRewritten() throws {
        let meter = try Meter()
        let store = meter.store
        let agent = try store.agents.register(name: "agent-rows", host: "h", capabilities: "{}")
        _ = try meter.job(chunks: 10)
        let first = try Self.claimed(store, agent)
        // A heartbeat just now (an hour ahead: however slow this machine, the claim below comes
        // "within the second"): neither the result nor the next claim has anything to write.
        try meter.admin.query("UPDATE agents SET last_heartbeat = now() + interval '1 hour' WHERE id = $1::bigint", [agent])
        func version() throws -> String {
            try meter.admin.query("SELECT ctid::text AS v FROM agents WHERE id = $1::bigint", [agent]).rows[0].string("v")
        }
        let before = try version()
        _ = try store.lifecycle.complete(first.lease, result: JobStoreTests.result(1))
        #expect(try version() == before, "a result rewrote the agent's row")
        let second = try Self.claimed(store, agent)
        #expect(try version() == before, "a claim rewrote the row of an agent whose heartbeat is fresh")
        // The agent's current task is still known: the task it holds a lease on.
        let listed = try #require(try store.agents.list().first { $0.id == agent })
        #expect(listed.currentTask == second.id)
        // An offline agent that claims is online again (a claim is a sign of life).
        try meter.admin.query("UPDATE agents SET state = 'offline' WHERE id = $1::bigint", [agent])
        _ = try store.lifecycle.complete(second.lease, result: JobStoreTests.result(2))
        _ = try Self.claimed(store, agent)
        #expect(try store.agents.list().first { $0.id == agent }?.state == .online)
    }

    @Test("one result: one transaction of five round trips, whatever the job's size")
    func result() throws {
        let costs = try Self.costs(try Meter(), prepare: { store, _, agent in try Self.claimed(store, agent) }) { store, claimed in
            let completion = try store.lifecycle.complete(claimed.lease, result: JobStoreTests.result(1))
            #expect(completion.jobID == claimed.jobID)
        }
        Self.expectConstant(costs, within: Cost(statements: 8, roundTrips: 5), "a result")
        // Nor does a result: its `result` event names its job without a key.
        #expect(costs.allSatisfy { $0.keyChecks == 0 }, "a result checks foreign keys: \(costs.map(\.keyChecks))")
    }

    @Test("one heartbeat: one round trip, whatever the job's size")
    func heartbeat() throws {
        let costs = try Self.costs(try Meter(), prepare: { store, _, agent in try Self.claimed(store, agent) }) { store, claimed in
            _ = try store.lifecycle.renew(claimed.lease, leaseSeconds: 60)
        }
        Self.expectConstant(costs, within: Cost(statements: 3, roundTrips: 1), "a heartbeat")
    }

    @Test("a cancel answers after a constant number of statements, however many tasks the job has")
    func cancel() throws {
        let meter = try Meter()
        let costs = try Self.costs(meter, prepare: { store, job, agent in
            _ = try Self.claimed(store, agent)
            return job
        }) { store, job in try store.lifecycle.markCancelled(job: job) }
        Self.expectConstant(costs, within: Cost(statements: 6, roundTrips: 5), "a cancel")
        // Its open tasks stop after the reply, in batches: a batch is one statement (with its trigger).
        try meter.store.lifecycle.cancel(job: try meter.job(chunks: 3))  // prepares the batch statement
        let job = try meter.job(chunks: 3_000)
        try meter.store.lifecycle.markCancelled(job: job)
        #expect(try meter.store.lifecycle.jobsWithTasksToStop().contains(job))
        var stopped = 0
        let batch = try meter.cost { stopped = try $0.lifecycle.stopOpenTasks(ofJob: job) }
        #expect(stopped == 2_000)
        #expect(batch.roundTrips == 1 && batch.statements <= 4, "a batch of 2,000 stopped tasks costs \(batch)")
        #expect(try meter.store.lifecycle.stopOpenTasks(ofJob: job) == 1_002, "the rest: 1,000 chunks, the audio and the finalise")
        #expect(try !meter.store.lifecycle.jobsWithTasksToStop().contains(job))
        #expect(try meter.store.jobs.tasks(ofJob: job).allSatisfy { $0.state == .cancelled })
        #expect(try meter.store.jobs.summary(job)?.taskCounts[.cancelled] == 3_001, "the counters: every render task cancelled")
    }

    @Test("a retry, pause, resume and priority change: constant, whatever the job's size")
    func operatorActions() throws {
        let meter = try Meter()
        let retry = try Self.costs(meter, prepare: { store, job, _ in
            try store.lifecycle.cancel(job: job)
            return job
        }) { store, job in try store.lifecycle.retry(job: job) }
        Self.expectConstant(retry, within: Cost(statements: 10, roundTrips: 6), "a retry")
        let pause = try Self.costs(meter, prepare: { _, job, _ in job }) { store, job in
            try store.lifecycle.setPaused(job: job, true)
            try store.lifecycle.setPaused(job: job, false)
            try store.lifecycle.setPriority(job: job, 5)
        }
        Self.expectConstant(pause, within: Cost(statements: 18, roundTrips: 15), "a pause, a resume and a priority change")
    }

    @Test("a submit's tasks go in with one insert, whatever their number")
    func submitInsertsTasks() throws {
        let meter = try Meter()
        let costs = try Self.costs(meter, prepare: { store, job, _ in
            // A job as SUBMIT records it (no tasks yet), and the tasks planning makes of it.
            let tasks = try store.jobs.tasks(ofJob: job).map { NewTask(kind: $0.kind, ordinal: $0.ordinal, frameStart: $0.frameStart,
                                                                       frameEnd: $0.frameEnd, spec: "") }
            return (try store.jobs.create(NewJob(composition: #"{"formatVersion":1}"#, tasks: [])), tasks)
        }) { store, new in
            let created = try store.jobs.createTasks(job: new.0, renderPlan: "{}", tasks: new.1)
            #expect(created)
        }
        Self.expectConstant(costs, within: Cost(statements: 10, roundTrips: 7), "a submit's task insert")
    }

    @Test("the count sees a per-row trigger: the guard can fail")
    func theCountSeesARowTrigger() throws {
        let meter = try Meter()
        // A query with a FROM: PL/pgSQL evaluates a bare `PERFORM 1` as a simple expression,
        // outside the executor, and pg_stat_statements then misses some of its calls.
        try meter.admin.query("""
            CREATE FUNCTION reel_budget_probe() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM 1 FROM jobs WHERE id = NEW.job_id; RETURN NULL; END $$
            """)
        try meter.admin.query("CREATE TRIGGER reel_budget_probe AFTER INSERT ON tasks FOR EACH ROW EXECUTE FUNCTION reel_budget_probe()")
        let costs = try Self.sizes.map { size in try meter.cost { _ in _ = try meter.job(chunks: size) } }
        #expect(costs[1].statements - costs[0].statements >= Self.sizes[1] - Self.sizes[0],
                "at least one more statement per task with a row trigger: \(costs)")
    }
}
