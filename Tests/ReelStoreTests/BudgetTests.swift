import Foundation
import ReelStoreTesting
import ReelThreadTesting
import Testing
@testable import ReelStore
import ReelScheduling

/// Job budgets in the store (`LifecycleStore+Budgets.swift`): at 90 % spent a job gets no new
/// chunks and its running ones finish; at 100 % its running chunks go back to the queue
/// un-attempted; raising the budget resumes it, and the job completes with every chunk's result.
/// Time is the test's own: running leases count to the injected farm clock, and claim and
/// result times are set on the rows (claims and results stamp the database's now()).
@Suite("Job budgets", .database, .blocking)
struct BudgetTests {
    /// The farm clock's start: 2026-01-01 00:00 UTC.
    static let start: Int64 = 1_767_225_600_000

    /// A store on a manual clock, an agent priced at 3,600 an hour (1 a second) from long ago,
    /// and a job of `chunks` chunks (no audio) with `budget`.
    struct Farm {
        /// Kept for the test's length: the schema is dropped with it.
        let schema: TestDatabase.Schema
        let store: FarmStore
        let clock = ManualClock(startMillis: BudgetTests.start)
        let agents: [Int64]
        let job: Int64

        init(chunks: Int, budget: JobBudget?, price: Double? = 3_600) throws {
            let schema = try TestDatabase.Schema()
            self.schema = schema
            let store = try schema.store(clock: clock.farmClock)
            agents = try (0..<2).map { try store.agents.registration(name: "a\($0)", host: "h", capabilities: "{}", costPerHour: price).id }
            try store.connection.query("UPDATE agent_prices SET since = timestamptz '2000-01-01 00:00:00+00'")
            var job = JobStoreTests.job(chunks: chunks, audio: false)
            job.budget = budget
            self.job = try store.jobs.create(job)
            self.store = store
        }

        /// A claim by agent `index`, its claim time set to the farm clock's now.
        func claim(_ index: Int) throws -> ClaimedTask? {
            guard let claimed = try store.lifecycle.claimTask(agent: agents[index], leaseSeconds: 3_600, kinds: TaskKind.renderKinds) else {
                return nil
            }
            try store.connection.query("UPDATE tasks SET claimed_at = to_timestamp($2::bigint / 1000.0) WHERE id = $1::bigint",
                                       [claimed.lease.task, clock.nowMillis])
            return claimed
        }

        /// Completes `claimed` at the farm clock's now.
        @discardableResult
        func complete(_ claimed: ClaimedTask, _ n: Int) throws -> Completion {
            let completion = try store.lifecycle.complete(claimed.lease, result: JobStoreTests.result(n))
            try store.connection.query("UPDATE tasks SET finished_at = to_timestamp($2::bigint / 1000.0) WHERE id = $1::bigint",
                                       [claimed.lease.task, clock.nowMillis])
            return completion
        }

        func advance(seconds: Int64) { clock.advance(millis: seconds * 1000) }

        func row() throws -> (paused: Bool, reason: String?) {
            let row = try store.connection.query("SELECT paused, pause_reason FROM jobs WHERE id = $1::bigint", [job]).rows[0]
            return (try row.bool("paused"), row["pause_reason"])
        }

        func task(_ id: Int64) throws -> (state: String, attempts: Int) {
            let row = try store.connection.query("SELECT state, attempts FROM tasks WHERE id = $1::bigint", [id]).rows[0]
            return (try row.string("state"), try row.int("attempts"))
        }

        func events(_ kind: String) throws -> [String] {
            try store.connection.query("SELECT message FROM events WHERE job_id = $1::bigint AND kind = $2 ORDER BY id", [job, kind])
                .rows.map { try $0.string("message") }
        }
    }

    @Test("at 90 % the job gets no new chunks, its running chunk finishes and counts; below, nothing happens")
    func pausesAtNinetyPercent() throws {
        let farm = try Farm(chunks: 4, budget: JobBudget(amount: 100, unit: .money))
        let first = try #require(try farm.claim(0))
        farm.advance(seconds: 50)
        let within = try #require(try farm.store.lifecycle.enforceBudget(job: farm.job))
        #expect(within.verdict == .within && within.spent == 50 && !within.paused, "\(within)")
        #expect(try farm.complete(first, 0).jobBudgeted, "a result of a job with a budget says so, for its check")

        let second = try #require(try farm.claim(1))
        farm.advance(seconds: 39)
        #expect(try farm.store.lifecycle.enforceBudget(job: farm.job)?.verdict == .within, "89 of 100")
        farm.advance(seconds: 1)
        // 50 done and 40 running: 90 %.
        let check = try #require(try farm.store.lifecycle.enforceBudget(job: farm.job))
        #expect(check.verdict == .pause && check.paused && check.pausedByBudget && check.handedBack.isEmpty && check.spent == 90, "\(check)")
        #expect(try farm.row() == (true, "budget"))
        #expect(try farm.events("paused") == ["budget: 90 of 100 spent"])
        #expect(try farm.claim(1) == nil, "no new chunk of a job paused by its budget")
        // The running chunk finishes: its result counts, nothing is lost.
        farm.advance(seconds: 5)
        try farm.complete(second, 1)
        #expect(try farm.task(second.lease.task) == ("done", 1))
        let summary = try #require(try farm.store.jobs.summary(farm.job))
        #expect(summary.paused && summary.pauseReason == .budget && summary.budget == JobBudget(amount: 100, unit: .money))
        // A second check pauses nothing more and logs nothing more.
        #expect(try farm.store.lifecycle.enforceBudget(job: farm.job)?.paused == false)
        #expect(try farm.events("paused").count == 1)
    }

    @Test("at 100 % running chunks go back to the queue un-attempted; their holders' leases are gone")
    func handsBackAtOneHundredPercent() throws {
        let farm = try Farm(chunks: 3, budget: JobBudget(amount: 100, unit: .money))
        let first = try #require(try farm.claim(0))
        let second = try #require(try farm.claim(1))
        farm.advance(seconds: 50)
        let check = try #require(try farm.store.lifecycle.enforceBudget(job: farm.job))
        #expect(check.verdict == .stop && check.paused && check.spent == 100, "\(check)")
        #expect(Set(check.handedBack.map(\.task)) == [first.lease.task, second.lease.task])
        for claimed in [first, second] {
            #expect(try farm.task(claimed.lease.task) == ("queued", 0), "handed back, the attempt not counted")
            #expect(throws: StoreError.self) { try farm.store.lifecycle.renew(claimed.lease, leaseSeconds: 30) }
            #expect(throws: StoreError.self) { try farm.store.lifecycle.complete(claimed.lease, result: JobStoreTests.result(9)) }
        }
        #expect(try farm.events("handed_back").count == 2)
        #expect(try farm.row() == (true, "budget"))
        #expect(try farm.claim(0) == nil)
    }

    @Test("only a raised budget resumes a job its budget paused; the job then completes with every chunk")
    func raisingResumes() throws {
        let farm = try Farm(chunks: 2, budget: JobBudget(amount: 0.5, unit: .agentHours), price: nil)
        let first = try #require(try farm.claim(0))
        farm.advance(seconds: 1_800)
        // 1,800 agent-seconds of 0.5 h: 100 %, even on agents without a price.
        #expect(try farm.store.lifecycle.enforceBudget(job: farm.job)?.verdict == .stop)
        #expect(try farm.task(first.lease.task) == ("queued", 0))
        // The operator's resume is refused while its budget holds it; a pause changes nothing.
        #expect(throws: StoreError.pausedByBudget(job: farm.job)) { try farm.store.lifecycle.setPaused(job: farm.job, false) }
        #expect(try farm.store.lifecycle.setPaused(job: farm.job, true) == false)
        #expect(try farm.row() == (true, "budget"))
        // The handed-back chunk's time no longer counts; a check alone does not resume it.
        #expect(try farm.store.lifecycle.enforceBudget(job: farm.job)?.verdict == .within)
        #expect(try farm.row() == (true, "budget"))

        let raised = try farm.store.lifecycle.setBudget(job: farm.job, JobBudget(amount: 1, unit: .agentHours))
        #expect(raised.resumed && !raised.pausedByBudget, "\(raised)")
        #expect(try farm.row() == (false, nil))
        #expect(try farm.events("budget") == ["1h"])
        var results = 0
        while let claimed = try farm.claim(results % 2) {
            farm.advance(seconds: 10)
            try farm.complete(claimed, results)
            results += 1
        }
        #expect(results == 2)
        let finalise = try #require(try farm.store.lifecycle.claimTask(agent: farm.agents[0], leaseSeconds: 30, kinds: [.finalise]))
        #expect(try farm.store.lifecycle.complete(finalise.lease, result: JobStoreTests.result(9)).jobDone)
        #expect(try farm.store.jobs.tasks(ofJob: farm.job).allSatisfy { $0.state == .done })
        // The chunk handed back was claimed again under a new epoch: one attempt counted.
        #expect(try farm.task(first.lease.task) == ("done", 1))
    }

    @Test("a budget still under what was spent keeps the job paused, and a lower one pauses a running job")
    func settingBudgets() throws {
        let farm = try Farm(chunks: 3, budget: nil)
        let first = try #require(try farm.claim(0))
        farm.advance(seconds: 20)
        #expect(try farm.store.lifecycle.enforceBudget(job: farm.job) == nil, "no budget, no check")
        #expect(try farm.complete(first, 0).jobBudgeted == false, "a result of a job without a budget is not checked")
        // 20 spent: a budget of 21 is over 90 %.
        let lowered = try farm.store.lifecycle.setBudget(job: farm.job, JobBudget(amount: 21, unit: .money))
        #expect(lowered.verdict == .pause && lowered.paused && lowered.pausedByBudget)
        let notEnough = try farm.store.lifecycle.setBudget(job: farm.job, JobBudget(amount: 22, unit: .money))
        #expect(!notEnough.resumed && notEnough.pausedByBudget, "20 of 22 is still over 90 %")
        #expect(try farm.row() == (true, "budget"))
        #expect(try farm.store.lifecycle.setBudget(job: farm.job, JobBudget(amount: 23, unit: .money)).resumed)
        // An operator's pause is the operator's until the budget takes over.
        try farm.store.lifecycle.setPaused(job: farm.job, true)
        #expect(try farm.row() == (true, "operator"))
        _ = try farm.store.lifecycle.setBudget(job: farm.job, JobBudget(amount: 10, unit: .money))
        #expect(try farm.row() == (true, "budget"))
        try farm.store.lifecycle.cancel(job: farm.job)
        #expect(try farm.row() == (false, nil))
        #expect(throws: StoreError.conflict(job: farm.job, state: .cancelled)) {
            try farm.store.lifecycle.setBudget(job: farm.job, JobBudget(amount: 100, unit: .money))
        }
    }

    @Test("the budget service checks the jobs with a budget that have not ended, and only those")
    func serviceChecksBudgetedJobs() throws {
        let farm = try Farm(chunks: 2, budget: JobBudget(amount: 10, unit: .money))
        var unbudgeted = JobStoreTests.job(chunks: 2, audio: false)
        unbudgeted.budget = nil
        let other = try farm.store.jobs.create(unbudgeted)
        let claims = [try #require(try farm.claim(0)), try #require(try farm.claim(1)), try #require(try farm.claim(0))]
        #expect(Set(claims.map(\.jobID)) == [farm.job, other])
        farm.advance(seconds: 100)
        let changed = try farm.store.lifecycle.enforceBudgets()
        #expect(Array(changed.keys) == [farm.job] && changed[farm.job]?.handedBack.count == 2, "\(changed)")
        let otherRunning = try farm.store.connection.query("SELECT count(*) AS n FROM tasks WHERE job_id = $1::bigint AND state = 'leased'",
                                                           [other]).rows[0].int("n")
        #expect(otherRunning == 1, "a job without a budget runs on")
        #expect(try farm.store.lifecycle.enforceBudgets().isEmpty, "nothing more to do")
    }
}
