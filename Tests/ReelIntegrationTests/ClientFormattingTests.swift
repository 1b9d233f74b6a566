import ReelProtocol
import Testing
import ReelThreadTesting
@testable import reel

/// The pure parts of the operator commands: tables and numbers.
@Suite(.blocking) struct ClientFormattingTests {
    @Test func jobsTableAlignsColumnsAndShowsCountsProgressSpeedAndETA() {
        let text = ClientFormatting.jobsTable(StatusReport(jobs: ClientCommandTests.sampleJobs))
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("JOB  NAME "))
        // Every row starts its columns where the header does.
        let nameColumn = lines[0].range(of: "NAME")!.lowerBound.utf16Offset(in: lines[0])
        #expect(lines[1].dropFirst(nameColumn).hasPrefix("trailer.json"))
        #expect(lines[2].dropFirst(nameColumn).hasPrefix("teaser.json"))
        #expect(lines[1].contains("running") && lines[1].contains("3/2/5/1 of 11") && lines[1].contains("42%")
                && lines[1].contains("61.5") && lines[1].hasSuffix("1:34"))
        // A finished job has no ETA.
        #expect(lines[2].contains("100%") && lines[2].hasSuffix("-"))
    }

    @Test func aJobWaitingForAnEncoderSaysWhichAndWhereToLook() {
        var job = ClientCommandTests.sampleJobs[0]
        #expect(!ClientFormatting.jobsTable(StatusReport(jobs: [job])).contains("waits for"))
        job.needsEncoder = "libx265"
        #expect(ClientFormatting.jobsTable(StatusReport(jobs: [job])).contains(
            "job \(job.id) waits for an agent with libx265: no connected agent has it (reel agents)\n"))
    }

    @Test func reusedChunksAreCountedInTheTableAndTheFinalMessage() {
        var job = ClientCommandTests.sampleJobs[0]
        #expect(!ClientFormatting.jobsTable(StatusReport(jobs: [job])).contains("reused"))
        job.tasks = TaskCounts(done: 11, total: 11, reused: 10)
        #expect(ClientFormatting.jobsTable(StatusReport(jobs: [job])).contains("11/0/0/0 of 11, 10 reused"))
        #expect(ClientFormatting.reuse(job.tasks) == "10 of 11 tasks reused, 1 rendered")
    }

    @Test func aJobsCostSoFarAndAtTheEndFollowTheTable() {
        var job = ClientCommandTests.sampleJobs[0]
        #expect(!ClientFormatting.jobsTable(StatusReport(jobs: [job])).contains("cost"), "no agent time: an older coordinator, or the overview")
        job.agentSeconds = 91.84
        job.unpricedTasks = 3
        #expect(ClientFormatting.jobsTable(StatusReport(jobs: [job])).hasSuffix(
            "job 7 cost so far: - (91.8 agent-s, no agent has a price: reel agent --cost-per-hour)\n"))
        job.cost = 0.021_33
        job.unpricedTasks = 1
        #expect(ClientFormatting.jobsTable(StatusReport(jobs: [job])).hasSuffix(
            "job 7 cost so far: 0.02133 (91.8 agent-s, 1 task on agents without a price)\n"))
        job.state = "done"
        job.cost = 12.4
        job.unpricedTasks = 0
        #expect(ClientFormatting.jobsTable(StatusReport(jobs: [job])).hasSuffix("job 7 cost: 12.40 (91.8 agent-s)\n"))
    }

    @Test func aWaiterIsToldOnceWhyABudgetPausedJobDoesNotEnd() {
        var job = ClientCommandTests.sampleJobs[0]
        job.budget = "3.5h"
        job.budgetSpent = 3.22
        #expect(ClientFormatting.budgetPauseNotice(job) == nil, "running, not paused")
        job.paused = true
        job.pauseReason = "operator"
        #expect(ClientFormatting.budgetPauseNotice(job) == nil, "an operator's pause: `reel resume` is the operator's own")
        job.pauseReason = "budget"
        #expect(ClientFormatting.budgetPauseNotice(job) == "job 7 is paused by its budget (3.5h, 92 % spent): raise it with "
                + "`reel budget 7 AMOUNT` and this wait goes on; Ctrl-C stops waiting, the job stays")
        job.state = "cancelled"
        #expect(ClientFormatting.budgetPauseNotice(job) == nil, "an ended job")
    }

    @Test func aFailedJobsErrorFollowsTheTable() {
        var job = ClientCommandTests.sampleJobs[0]
        job.state = "failed"
        job.error = "chunk 3: decoder error"
        let text = ClientFormatting.jobsTable(StatusReport(jobs: [job]))
        #expect(text.hasSuffix("job 7 failed: chunk 3: decoder error\n"))
        #expect(ClientFormatting.jobsTable(StatusReport(jobs: [])) == "no jobs\n")
    }

    @Test func agentsTableShowsHeartbeatAgeEncodersAndCurrentTask() {
        let lines = ClientFormatting.agentsTable(ClientCommandTests.sampleAgents).split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[1].hasPrefix("render-01  render-01.example.net  busy") && lines[1].contains("1.2s")
                && lines[1].contains("libx264,libx265,aac") && lines[1].hasSuffix("job 7 task 19 frames [300, 600)"))
        #expect(lines[2].contains("offline") && lines[2].contains("6m40s") && lines[2].hasSuffix("-"))
        var never = ClientCommandTests.sampleAgents.agents[1]
        never.heartbeatAgeSeconds = nil
        #expect(ClientFormatting.agentsTable(AgentsReport(agents: [never])).contains("never"))
        #expect(ClientFormatting.agentsTable(AgentsReport(agents: [])) == "no agents\n")
    }

    @Test func peerChosenNamesCannotDriveTheTerminal() {
        var job = ClientCommandTests.sampleJobs[0]
        job.name = "evil\u{1B}]0;owned\u{07}\u{1B}[2J\nJOB 99 forged"
        job.state = "failed"
        job.error = "bad\u{1B}[31m\nline"
        let jobs = ClientFormatting.jobsTable(StatusReport(jobs: [job]))
        #expect(!jobs.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
        #expect(jobs.split(separator: "\n").count == 3, "a name must not add lines: \(jobs)")
        #expect(jobs.contains("evil\\u{1B}]0;owned\\u{7}\\u{1B}[2J\\u{A}JOB 99 forged"))
        #expect(jobs.hasSuffix("job 7 failed: bad\\u{1B}[31m\\u{A}line\n"))

        var agent = ClientCommandTests.sampleAgents.agents[0]
        agent.name = "render\u{202E}10-"
        agent.host = "host\u{9B}2J"
        let agents = ClientFormatting.agentsTable(AgentsReport(agents: [agent]))
        #expect(agents.contains("render\\u{202E}10-") && agents.contains("host\\u{9B}2J"))
        // An ordinary non-ASCII name is shown as it is.
        agent.name = "渲染节点-01"
        #expect(ClientFormatting.agentsTable(AgentsReport(agents: [agent])).contains("渲染节点-01"))
    }

    @Test func submissionSizeLimitIsCheckedOnTheFileAndOnTheEncodedDocument() throws {
        let limit = 64 << 20
        try SubmissionSize.checkComposition("c.json", bytes: Int64(limit))
        #expect { try SubmissionSize.checkComposition("c.json", bytes: Int64(limit) + 1) } throws: {
            "\($0)" == "c.json is 67.1 MB; a composition can be at most 64 MiB — move large data (e.g. embedded images) into asset files"
        }
        try SubmissionSize.checkDocument(bytes: limit)
        #expect { try SubmissionSize.checkDocument(bytes: 80_000_000) } throws: {
            "\($0)".hasPrefix("the submission is 80.0 MB once the composition is escaped as JSON text; it can be at most 64 MiB")
        }
    }

    @Test(arguments: [(0.0, "0%"), (0.42, "42%"), (0.999, "99%"), (1.0, "100%"), (1.7, "100%"), (-0.5, "0%"), (.nan, "0%")])
    func percentNeverRoundsAnUnfinishedJobUpToAHundred(fraction: Double, expected: String) {
        #expect(ClientFormatting.percent(fraction) == expected)
    }

    @Test(arguments: [(0.0, "0:00"), (59.6, "1:00"), (94.3, "1:34"), (3599, "59:59"), (3725, "1:02:05")])
    func clock(seconds: Double, expected: String) {
        #expect(ClientFormatting.clock(seconds) == expected)
    }

    @Test(arguments: [(0.44, "0.4s"), (12.9, "12s"), (185, "3m05s"), (7620, "2h07m")])
    func heartbeatAge(seconds: Double, expected: String) {
        #expect(ClientFormatting.age(seconds) == expected)
    }

    @Test(arguments: [(Int64(512), "512 B"), (3 << 20, "3.0 MiB"), (1536, "1.5 KiB")])
    func bytes(count: Int64, expected: String) {
        #expect(ClientFormatting.bytes(count) == expected)
    }
}
