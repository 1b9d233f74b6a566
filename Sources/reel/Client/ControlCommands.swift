import ArgumentParser
import Foundation
import ReelProtocol

// `reel pause`, `resume`, `priority`, `events`: steering a job and reading its history.

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
        abstract: "Resume a paused job: its chunks are handed out again.")

    @OptionGroup var target: JobArgument
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await withClient(connection) { try await $0.resume(job: job) }
        print("job \(job) resumed")
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
