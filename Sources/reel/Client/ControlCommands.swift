import ArgumentParser
import Foundation
import ReelProtocol
import ReelScheduling

// `reel pause`, `resume`, `budget`, `priority`, `events`: steering a job and reading its history.

/// One request about one job: connect, ask, close; errors reported as every command reports them.
private func withClient<T>(_ connection: ConnectionOptions, _ body: (OperatorClient) async throws -> T) async throws -> T {
    var value: T?
    try await reportingErrorsAsync {
        let client = try await OperatorClient.connect(connection)
        value = try await body(client)
        await client.close()
    }
    return value!
}

/// `reel pause JOB`.
struct PauseCommand: AsyncParsableCommand, JobCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Pause a job: no more of its chunks are handed out; chunks rendering now finish.",
        discussion: "`reel resume JOB` continues it. Pausing a paused job changes nothing.")

    @OptionGroup var target: JobArgument
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await withClient(connection) { try await $0.pause(job: job) }
        print("job \(job) paused")
    }
}

/// `reel resume JOB`.
struct ResumeCommand: AsyncParsableCommand, JobCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Resume a paused job: its chunks are handed out again.",
        discussion: "A job paused by its budget is resumed by raising the budget: `reel budget JOB AMOUNT`.")

    @OptionGroup var target: JobArgument
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await withClient(connection) { try await $0.resume(job: job) }
        print("job \(job) resumed")
    }
}

/// `reel budget JOB AMOUNT`.
struct BudgetCommand: AsyncParsableCommand, JobCommand {
    static let configuration = CommandConfiguration(
        commandName: "budget",
        abstract: "Set or raise a job's budget; a job its budget paused resumes.",
        discussion: """
            AMOUNT is money like 12.50 (in the currency of the agents' prices) or agent-hours like 3.5h. \
            From 90 % of the budget spent the job gets no new chunks (its running ones finish), from 100 % its \
            running chunks are handed back to the queue; a budget that puts it under 90 % again resumes it.
            """)

    @OptionGroup var target: JobArgument
    @Argument(help: ArgumentHelp("The budget: money like 12.50, or agent-hours like 3.5h.", valueName: "amount")) var amount: String
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        if JobBudget(parsing: amount) == nil { throw ValidationError("'\(amount)' is not a budget: give \(JobBudget.syntax)") }
    }

    func run() async throws {
        let report = try await withClient(connection) { try await $0.setBudget(job: job, amount: amount) }
        let spent = ClientFormatting.budgetAmount(report.spent, of: report.budget)
        if report.pausedByBudget {
            print("job \(job) budget \(report.budget), \(spent) spent: still 90 % or more, so it stays paused; give more to resume it")
        } else {
            print("job \(job) budget \(report.budget), \(spent) spent")
        }
    }
}

/// `reel priority JOB N`.
struct PriorityCommand: AsyncParsableCommand, JobCommand {
    static let configuration = CommandConfiguration(
        commandName: "priority",
        abstract: "Set a job's priority: chunks of higher-priority jobs are handed out first.",
        discussion: "N is -1000…1000; jobs start at 0 (or `reel submit --priority N`). Equal priorities go oldest job first.")

    @OptionGroup var target: JobArgument
    /// One value; collected this way so a negative priority (`-5`) is not taken for an option.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The new priority, -1000…1000 (higher runs first).", valueName: "n"))
    var values: [String] = []
    @OptionGroup var connection: ConnectionOptions

    var priority: Int { Int(values.first ?? "") ?? 0 }

    func validate() throws {
        guard values.count == 1, let value = Int(values[0]), JobPriority.range.contains(value) else {
            throw ValidationError("give one priority, a whole number in -1000…1000 (like `reel priority 42 10` or `reel priority 42 -5`)")
        }
    }

    func run() async throws {
        try await withClient(connection) { try await $0.setPriority(job: job, priority: priority) }
        print("job \(job) priority \(priority)")
    }
}

/// `reel events JOB`.
struct EventsCommand: AsyncParsableCommand, JobCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Show a job's history: submitted, planned, each chunk claimed, completed, failed or expired, paused, cancelled…")

    @OptionGroup var target: JobArgument
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the events as one JSON document ({\"job\": ID, \"events\": [...]}).") var json = false

    func run() async throws {
        let events = try await withClient(connection) { try await $0.events(job: job) }
        if json {
            print(String(decoding: try JSONCoding.encode(EventsReport(job: job, events: events)), as: UTF8.self))
        } else {
            print(ClientFormatting.eventsTable(events, job: job), terminator: "")
        }
    }
}
