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
            let job = job
            let ended = try await show({ (try await $0.status(job: job), try await $0.agents()) }) { reports -> String in
                let ((status, statusJSON), (agents, agentsJSON)) = reports
                return json
                    ? "{\"status\":" + String(decoding: statusJSON, as: UTF8.self) + ",\"agents\":" + String(decoding: agentsJSON, as: UTF8.self) + "}\n"
                    : ClientFormatting.jobsTable(status) + "\n" + ClientFormatting.agentsTable(agents)
            } ended: { reports -> JobStatus? in
                // Watching one job: its end is the end of the watch.
                guard let job, let status = reports.0.report.jobs.first(where: { $0.id == job }),
                      ClientFormatting.finishedStates.contains(status.state) else { return nil }
                return status
            }
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
            let rows = rows
            let ended = try await show({ try await $0.batchStatusReport(batch, rows: rows) }) { report, raw in
                json ? String(decoding: raw, as: UTF8.self) + "\n" : ClientFormatting.batchSummary(report)
            } ended: { report, _ in
                report.state == "done" || report.state == "failed" ? report : nil
            }
            if let ended, ended.state == "failed" {
                throw UserError("batch b\(batch) ended with \(ended.counts.failed) failed and \(ended.counts.cancelled) cancelled row(s) of \(ended.rows)")
            }
        }
    }

    /// Prints what `fetch` reads from the coordinator, as `text` writes it: once, or with
    /// `--watch` every second (on a terminal, over the last one) through a coordinator or
    /// database restart, until `ended` finds what ends the watch. A one-shot status reports
    /// trouble at once. - Returns: what ended the watch (nil: not watching).
    private func show<Reports, Ended>(_ fetch: (OperatorClient) async throws -> Reports, text: (Reports) -> String,
                                      ended: (Reports) -> Ended?) async throws -> Ended? {
        let client = try await OperatorClient.connect(connection)
        let watching = watch ? ReconnectingClient(client, options: connection) : nil
        let tty = isatty(STDOUT_FILENO) == 1
        var end: Ended?
        repeat {
            let reports = if let watching { try await watching.perform(fetch) } else { try await fetch(client) }
            var out = text(reports)
            if watch && tty && !json { out = "\u{1B}[H\u{1B}[2J" + out } else if watch { out += "\n" }
            FileHandle.standardOutput.write(Data(out.utf8))
            if watch, let found = ended(reports) {
                end = found
                break
            }
            if watch { try await Task.sleep(for: .seconds(1)) }
        } while watch
        if let watching { await watching.close() } else { await client.close() }
        return end
    }
}
