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
            done, 1 when it failed or was cancelled (the reason on stderr). \
            With a batch (bID, as `reel submit --batch` prints it): its rows queued, running, done and failed, \
            the ETA, the agents' time and the chunks reused; --rows lists every row with its job; --json prints \
            the BATCHSTATUS report; --watch ends when every row has (exit status 1 when any row did not end done).
            """)

    @Argument(help: ArgumentHelp("Show only this job (its id), or this batch (bID, as `reel submit --batch` prints it).", valueName: "job-or-batch"))
    var target: String?
    @Flag(help: "With a batch: list every row with its job, state, reuse and agent time.") var rows = false
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the raw JSON reports.") var json = false
    @Flag(help: "Redraw every second until interrupted, or with JOB until the job ends.") var watch = false

    /// The job asked for, if a job.
    var job: Int64? { target.flatMap { Int64($0) } }
    /// The batch asked for (`b12`), if a batch.
    var batch: Int64? {
        guard let target, target.first == "b" || target.first == "B", let id = Int64(target.dropFirst()), id > 0 else { return nil }
        return id
    }

    func validate() throws {
        guard let target else {
            if rows { throw ValidationError("--rows goes with a batch: reel status bID --rows") }
            return
        }
        if batch == nil, (job ?? 0) <= 0 {
            throw ValidationError("\(target) is neither a job id (a positive number, like 12) nor a batch (b and its id, like b3)")
        }
        if rows && batch == nil { throw ValidationError("--rows goes with a batch: reel status bID --rows") }
    }

    func run() async throws {
        if let batch { return try await runBatch(batch) }
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

    /// `reel status bID`: the batch's summary (with `--rows`, each row); `--json` prints the
    /// coordinator's `BATCHSTATUS` report; `--watch` redraws it every second until every row has ended.
    private func runBatch(_ batch: Int64) async throws {
        try await reportingErrorsAsync {
            let client = try await OperatorClient.connect(connection)
            let watching = watch ? ReconnectingClient(client, options: connection) : nil
            let tty = isatty(STDOUT_FILENO) == 1
            let rows = rows
            var ended: BatchReport?
            repeat {
                let (report, raw) = if let watching {
                    try await watching.perform { try await $0.batchStatusReport(batch, rows: rows) }
                } else {
                    try await client.batchStatusReport(batch, rows: rows)
                }
                var text = json ? String(decoding: raw, as: UTF8.self) + "\n" : ClientFormatting.batchSummary(report)
                if watch && tty && !json { text = "\u{1B}[H\u{1B}[2J" + text } else if watch { text += "\n" }
                FileHandle.standardOutput.write(Data(text.utf8))
                if watch, report.state == "done" || report.state == "failed" {
                    ended = report
                    break
                }
                if watch { try await Task.sleep(for: .seconds(1)) }
            } while watch
            if let watching { await watching.close() } else { await client.close() }
            if let ended, ended.state == "failed" {
                throw UserError("batch b\(batch) ended with \(ended.counts.failed) failed and \(ended.counts.cancelled) cancelled row(s) of \(ended.rows)")
            }
        }
    }
}
