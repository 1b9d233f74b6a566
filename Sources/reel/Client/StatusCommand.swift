import ArgumentParser
import Foundation
import ReelProtocol

/// `reel status`: the farm at a glance — jobs with chunk counts, progress, speed and ETA, then
/// agents with heartbeat age and current task.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show jobs (chunks done/running/queued/failed, progress, speed, ETA) and agents.",
        discussion: """
            Without JOB: the coordinator's recent jobs, newest first. --json prints \
            {"status": <STATUS report>, "agents": <AGENTS report>}, the reports exactly as the coordinator \
            sent them. --watch redraws every second until interrupted (Ctrl-C).
            """)

    @Argument(help: "Show only this job.") var job: Int64?
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the raw JSON reports.") var json = false
    @Flag(help: "Redraw every second until interrupted.") var watch = false

    func validate() throws {
        if let job, job <= 0 { throw ValidationError("JOB is a job id, a positive number") }
    }

    func run() async throws {
        try await reportingErrorsAsync {
            let client = try await OperatorClient.connect(connection)
            let tty = isatty(STDOUT_FILENO) == 1
            repeat {
                let (status, statusJSON) = try await client.status(job: job)
                let (agents, agentsJSON) = try await client.agents()
                var text: String
                if json {
                    text = "{\"status\":" + String(decoding: statusJSON, as: UTF8.self)
                        + ",\"agents\":" + String(decoding: agentsJSON, as: UTF8.self) + "}\n"
                } else {
                    text = ClientFormatting.jobsTable(status) + "\n" + ClientFormatting.agentsTable(agents)
                }
                if watch && tty && !json { text = "\u{1B}[H\u{1B}[2J" + text }
                else if watch { text += "\n" }
                FileHandle.standardOutput.write(Data(text.utf8))
                if watch { try await Task.sleep(for: .seconds(1)) }
            } while watch
            await client.close()
        }
    }
}
