import Testing
import ReelScheduling
@testable import ReelLifecycleModel

/// The budget's syntax and rule (`JobBudget`), and the model's budget transitions.
@Suite(.blocking) struct JobBudgetTests {
    @Test func aBareNumberIsMoneyAndANumberWithHIsAgentHours() {
        #expect(JobBudget(parsing: "12.50") == JobBudget(amount: 12.5, unit: .money))
        #expect(JobBudget(parsing: "3.5h") == JobBudget(amount: 3.5, unit: .agentHours))
        #expect(JobBudget(parsing: "2H") == JobBudget(amount: 2, unit: .agentHours))
        #expect(JobBudget(parsing: "3.5agent-hours") == JobBudget(amount: 3.5, unit: .agentHours))
        #expect(JobBudget(parsing: "1agent-hour") == JobBudget(amount: 1, unit: .agentHours))
        for bad in ["", "h", "0", "0h", "-3", "+3", "1e3", "nan", "inf", "3.5 h", "12,50", "1.2.3", "3.5m", "$12", "12 EUR", ".h"] {
            #expect(JobBudget(parsing: bad) == nil, "\(bad)")
        }
        // What it prints reads back the same.
        for text in ["12.5", "12", "3.5h", "0.000417h", "0.00005h"] { #expect(JobBudget(parsing: text)?.description == text) }
        #expect(JobBudget(amount: 3.5, unit: .agentHours).limit == 12_600_000, "agent-milliseconds")
    }

    @Test func theRuleIsNothingBelowNinetyPercentPauseFromItAndStopFromAHundred() {
        #expect(JobBudget.verdict(spent: 89.99, limit: 100) == .within)
        #expect(JobBudget.verdict(spent: 90, limit: 100) == .pause)
        #expect(JobBudget.verdict(spent: 99.99, limit: 100) == .pause)
        #expect(JobBudget.verdict(spent: 100, limit: 100) == .stop)
        #expect(JobBudget.verdict(spent: 0, limit: 0) == .stop, "nothing left")
    }

    @Test func inTheModelABudgetPausesHandsBackRunningChunksAndOnlyARaiseResumes() throws {
        var farm = FarmModel(leaseMillis: 30_000, graceMillis: 5_000)
        let job = farm.submit(chunks: 3, audio: false, maxAttempts: 3)
        let claimed = farm.claim(agent: 1, kinds: [.videoChunk], liveAgents: [1], now: 0)
        let running = try #require(claimed).lease
        let set = try farm.setBudget(job: job, 100, spent: 10)
        #expect(set == .within)
        let atNinety = farm.applyBudget(job: job, spent: 95)
        #expect(atNinety == .pause)
        #expect(farm.jobs[job]?.paused == true && farm.jobs[job]?.pauseReason == .budget)
        #expect(farm.tasks[running.task]?.lifecycle.state == .leased, "at 90 % running chunks run on")
        let whilePaused = farm.claim(agent: 2, kinds: [.videoChunk], liveAgents: [1, 2], now: 1)
        #expect(whilePaused == nil)
        var resumed = farm
        #expect(throws: JobLifecycle.Conflict.self) { try resumed.resume(job: job) }
        let atHundred = farm.applyBudget(job: job, spent: 100)
        #expect(atHundred == .stop)
        let task = try #require(farm.tasks[running.task]?.lifecycle)
        #expect(task.state == .queued && task.attempts == 0 && task.holder == nil, "handed back, the attempt not counted")
        let heartbeat = farm.heartbeat(running, now: 2)
        #expect(heartbeat == .failure(.notHolder))
        let check = farm.applyBudget(job: job, spent: 0)
        #expect(check == .within)
        #expect(farm.jobs[job]?.paused == true, "a check alone never resumes")
        let raised = try farm.setBudget(job: job, 1_000, spent: 0)
        #expect(raised == .within)
        #expect(farm.jobs[job]?.paused == false && farm.jobs[job]?.pauseReason == nil)
        let afterRaise = farm.claim(agent: 2, kinds: [.videoChunk], liveAgents: [1, 2], now: 3)
        #expect(afterRaise != nil)
        #expect(farm.isConsistent)
    }
}
