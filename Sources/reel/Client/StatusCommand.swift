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
            sent them. --watch redraws every second until interrupted (Ctrl-C); it rides out a coordinator or \
            database restart, saying once that it is reconnecting and giving up after 5 minutes. \
            With JOB, --watch ends when the job does, after drawing it once more: exit status 0 when it is \
            done, 1 when it failed or was cancelled (the reason on stderr).
            """)

    @Argument(help: "Show only this job.") var job: Int64?
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the raw JSON reports.") var json = false
    @Flag(help: "Redraw every second until interrupted, or with JOB until the job ends.") var watch = false

    func validate() throws {
        if let job, job <= 0 { throw ValidationError("JOB is a job id, a positive number") }
    }

    func run() async throws {
        try await reportingErrorsAsync {
            let client = try await OperatorClient.connect(connection)
            // --watch keeps watching through a coordinator or database restart; a one-shot
            // status reports the trouble at once.
            let watching = watch ? ReconnectingClient(client, options: connection) : nil
            let tty = isatty(STDOUT_FILENO) == 1
            let job = job
            var ended: JobStatus?
            repeat {
                let reports: ((report: StatusReport, raw: [UInt8]), (report: AgentsReport, raw: [UInt8]))
                if let watching {
                    reports = try await watching.perform { (try await $0.status(job: job), try await $0.agents()) }
                } else {
                    reports = (try await client.status(job: job), try await client.agents())
                }
                let ((status, statusJSON), (agents, agentsJSON)) = reports
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
                // Watching one job: its end is the end of the watch.
                if watch, let job, let status = status.jobs.first(where: { $0.id == job }),
                   ClientFormatting.finishedStates.contains(status.state) {
                    ended = status
                    break
                }
                if watch { try await Task.sleep(for: .seconds(1)) }
            } while watch
            if let watching { await watching.close() } else { await client.close() }
            switch ended?.state {
            case "failed"?:
                throw UserError("job \(ended!.id) failed: \(ended!.error ?? "no reason given (see `reel events \(ended!.id)`)")")
            case "cancelled"?:
                throw UserError("job \(ended!.id) was cancelled")
            default:
                break
            }
        }
    }
}
