import ReelScheduling

/// What a budget check found and did (`LifecycleStore.setBudget`, `.enforceBudget`).
public struct BudgetCheck: Hashable, Sendable {
    public var budget: JobBudget
    /// Spent so far, in the budget's unit: money, or agent-hours.
    public var spent: Double
    public var verdict: JobBudget.Verdict
    /// The check paused the job (it reached 90 %).
    public var paused = false
    /// The check resumed a job its budget had paused (a raised budget).
    public var resumed = false
    /// The running chunks it handed back to the queue (100 %).
    public var handedBack: [Lease] = []
    /// Whether the job is paused by its budget after the check.
    public var pausedByBudget = false

    /// The share of the budget spent, in per cent.
    public var percent: Double { budget.amount > 0 ? spent / budget.amount * 100 : 100 }
}

/// Job budgets (docs/farm.md, "Budgets"): from 90 % of its budget spent a job is paused with the
/// reason `budget` (no new chunks; running ones finish), from 100 % its running chunks are
/// handed back to the queue, un-attempted, and only raising its budget resumes it. Spent is
/// `jobCost`'s figure, its running leases counting to the farm clock's now. The rule is
/// `JobBudget.verdict`; the model's `JobLifecycle.setBudget` and `.applyBudget` state the same.
extension LifecycleStore {
    /// Sets (or raises, or lowers) a job's budget and applies the rule at once: a job paused by
    /// its budget resumes when the new one puts it under 90 %, and one now over it is paused
    /// (over 100 %: its running chunks handed back). The caller wakes the dispatcher after a resume.
    /// - Throws: `.jobNotFound`, or `.conflict` when the job already ended.
    public func setBudget(job: Int64, _ budget: JobBudget) throws -> BudgetCheck {
        try connection.transaction { db in
            let state = try Self.lockedState(db, job)
            guard try db.query(Statements.setJobBudget, [job, budget.amount, budget.unit.rawValue]).singleRow() != nil else {
                throw StoreError.conflict(job: job, state: state)
            }
            try EventLog.append(db, job: job, kind: "budget", message: "\(budget)")
            guard let check = try Self.applyBudget(db, job: job, now: now, resuming: true) else {
                throw StoreError.conflict(job: job, state: state)
            }
            return check
        }
    }

    /// Applies the rule to a job with a budget that has not ended (a result of it, or the
    /// budget service's pass): from 90 % it is paused, from 100 % its running chunks are handed
    /// back. Never resumes it (a chunk handed back no longer counts: only a raised budget does).
    /// - Returns: nil for a job without a budget, ended, or gone.
    @discardableResult
    public func enforceBudget(job: Int64) throws -> BudgetCheck? {
        try connection.transaction { db in
            guard try db.query(Statements.lockedJobState, [job]).singleRow() != nil else { return nil }
            return try Self.applyBudget(db, job: job, now: now, resuming: false)
        }
    }

    /// `enforceBudget` on every job with a budget that has not ended, one transaction each.
    /// - Returns: the checks that changed something.
    public func enforceBudgets() throws -> [Int64: BudgetCheck] {
        var changed: [Int64: BudgetCheck] = [:]
        for row in try connection.query(Statements.budgetedActiveJobs).rows {
            let job = try row.int64("id")
            if let check = try enforceBudget(job: job), check.paused || !check.handedBack.isEmpty { changed[job] = check }
        }
        return changed
    }

    /// The rule on job `job`, locked by the caller: `resuming`, a job paused by its budget
    /// resumes when under 90 %.
    static func applyBudget(_ db: PGConnection, job: Int64, now: Int64, resuming: Bool) throws -> BudgetCheck? {
        guard let row = try db.query(Statements.jobBudgetSpent, [job, now]).singleRow(),
              let amount = try row.optionalDouble("budget"), let unitText = row["budget_unit"],
              let unit = JobBudget.Unit(rawValue: unitText) else { return nil }
        let state: JobState = try row.value("state")
        guard !state.isTerminal else { return nil }
        let budget = JobBudget(amount: amount, unit: unit)
        let spent = try row.double("spent")
        let verdict = JobBudget.verdict(spent: spent, limit: budget.limit)
        var check = BudgetCheck(budget: budget, spent: unit == .money ? spent : spent / 3_600_000, verdict: verdict)
        check.pausedByBudget = row["pause_reason"] == PauseReason.budget.rawValue
        let share = "\(Self.formatted(check.spent)) of \(budget) spent"
        switch verdict {
        case .within:
            if resuming, try db.query(Statements.budgetResumeJob, [job]).singleRow() != nil {
                check.resumed = true
                check.pausedByBudget = false
                try EventLog.append(db, job: job, kind: "resumed", message: "budget: \(share)")
            }
        case .pause, .stop:
            if try db.query(Statements.budgetPauseJob, [job]).singleRow() != nil {
                check.paused = true
                try EventLog.append(db, job: job, kind: "paused", message: "budget: \(share)")
            }
            check.pausedByBudget = true
            if verdict == .stop {
                check.handedBack = try db.query(Statements.handBackRunningChunks, [job]).rows.map {
                    Lease(task: try $0.int64("id"), epoch: try $0.int64("epoch"), agent: try $0.int64("holder"))
                }
            }
        }
        return check
    }

    /// `spent` with at most 4 decimals (money, or agent-hours), for events.
    static func formatted(_ value: Double) -> String {
        let scaled = (value * 10_000).rounded() / 10_000
        return scaled == scaled.rounded() ? String(Int64(scaled)) : String(scaled)
    }
}
