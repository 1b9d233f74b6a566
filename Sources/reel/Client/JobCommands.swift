import ArgumentParser
import Foundation
import ReelCore
import ReelProtocol

/// `reel agents`: the agents the coordinator knows.
struct AgentsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agents",
        abstract: "List the farm's agents: state, threads, heartbeat age, current task.")

    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the coordinator's AGENTS report as JSON.") var json = false

    func run() async throws {
        try await reportingErrorsAsync {
            let client = try await OperatorClient.connect(connection)
            let (report, raw) = try await client.agents()
            await client.close()
            print(json ? String(decoding: raw, as: UTF8.self) : ClientFormatting.agentsTable(report), terminator: json ? "\n" : "")
        }
    }
}

/// `reel drain AGENT`.
struct DrainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drain",
        abstract: "Ask an agent to drain: it claims nothing more, finishes its chunks within its --drain-seconds, hands back the rest and exits.",
        discussion: """
            The agent is told by the coordinator it is connected to, whichever of the farm's coordinators this \
            command reaches. An agent with several render slots (--threads) drains them all: name the agent \
            as 'reel agents' lists it, without the /N of a slot. 'reel agents' shows it draining, then offline.
            """)

    @Argument(help: "The agent's name, as 'reel agents' lists it.") var agent: String
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await reportingErrorsAsync {
            let client = try await OperatorClient.connect(connection)
            let report = try await client.drain(agent: agent)
            await client.close()
            print("draining: \(report.agents.joined(separator: ", "))")
        }
    }
}

/// One request about one job (cancel, retry, delete): connect, ask, close; errors reported
/// as every command reports them.
private func runJobAction(_ connection: ConnectionOptions,
                          _ action: (OperatorClient) async throws -> Void) async throws {
    try await reportingErrorsAsync {
        let client = try await OperatorClient.connect(connection)
        try await action(client)
        await client.close()
    }
}

/// `reel cancel JOB`.
struct CancelCommand: AsyncParsableCommand, JobCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel a job: its queued chunks are dropped and running ones abandoned.")

    @OptionGroup var target: JobArgument
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await runJobAction(connection) { try await $0.cancel(job: job) }
        print("job \(job) cancelled")
    }
}

/// `reel retry JOB`.
struct RetryCommand: AsyncParsableCommand, JobCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: "Queue a failed or cancelled job's unfinished chunks again.")

    @OptionGroup var target: JobArgument
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await runJobAction(connection) { try await $0.retry(job: job) }
        print("job \(job) queued again")
    }
}

/// `reel delete JOB`.
struct DeleteCommand: AsyncParsableCommand, JobCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete a finished, failed or cancelled job with its output, chunks and history.",
        discussion: "A job that has not ended is refused: cancel it first. Sources only it used are removed by the next storage sweep.")

    @OptionGroup var target: JobArgument
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await runJobAction(connection) { try await $0.delete(job: job) }
        print("job \(job) deleted")
    }
}

/// `reel fetch JOB -o OUT`.
struct FetchCommand: AsyncParsableCommand, JobCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Download a finished job's output.",
        discussion: """
            The file is written under a temporary name, flushed and renamed: OUT appears only when complete. \
            If the coordinator restarts meanwhile, fetch says so once, reconnects for up to 5 minutes and \
            continues at the byte it reached. With the farm's storage in S3 the output comes straight from the \
            bucket through a presigned URL the coordinator hands out (a failed download starts again from its first byte).
            """)

    @OptionGroup var target: JobArgument
    @Option(name: .shortAndLong, help: "Where to write the output.") var output: String
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "No progress output.") var quiet = false

    func run() async throws {
        try await reportingErrorsAsync {
            try HLSOutput.makeFolder(for: output)
            try requireWritableOutput(output)
            let client = ReconnectingClient(try await OperatorClient.connect(connection), options: connection)
            client.giveUpHint = "run the same `reel fetch` again once the coordinator is back"
            // The name must say what the file is: MP4 under .mov (or .mkv) misleads every player.
            let report = try await client.perform { try await $0.status(job: job).report }
            if let type = report.jobs.first(where: { $0.id == job })?.outputFileType.flatMap(FileType.init(rawValue:)) {
                if case .failure(let problem) = OutputContainer.fileType(forOutput: output, written: type, writtenBy: .jobOutput) {
                    let what = type == .hls ? "an HLS folder (-o DIR/master.m3u8)"
                        : type == .png ? "a PNG sequence (-o \(FrameSequenceName.example))" : "\(type.withArticle) .\(type.rawValue) file"
                    throw UserError("job \(job)'s output is \(what): " + problem.message)
                }
            }
            try await OutputDownload.run(job: job, to: output, via: client, quiet: quiet)
            await client.close()
            if !quiet { Terminal.error("\(output): job \(job)'s output") }
        }
    }
}

extension FileType {
    /// "a QuickTime", "an MP4", …: the container's name after its article.
    var withArticle: String {
        let name = displayName
        return (["A", "E", "I", "O", "U", "M"].contains(name.prefix(1)) ? "an " : "a ") + name
    }
}
