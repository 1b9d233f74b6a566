import Foundation
import ReelCore
import ReelProtocol
import ReelScheduling

/// Plain-text tables and numbers for `reel status` and `reel agents`. Pure: reports in,
/// strings out, so they are tested without a coordinator.
enum ClientFormatting {
    /// Job states after which nothing changes any more.
    static let finishedStates: Set<String> = ["done", "failed", "cancelled"]

    /// One row per job: id, name, state, task counts, progress, speed, ETA.
    static func jobsTable(_ report: StatusReport) -> String {
        guard !report.jobs.isEmpty else { return "no jobs\n" + storageLine(report.storage) }
        var table = TextTable(headers: ["JOB", "NAME", "STATE", "PRI", "CHUNKS done/run/queue/fail", "PROGRESS", "FPS", "ETA"],
                              rightAligned: [0, 3, 4, 5, 6, 7])
        for job in report.jobs {
            let t = job.tasks
            table.add([
                String(job.id), job.name, stateText(job),
                String(job.priority),
                // Cancelled chunks (the job was cancelled, or failed elsewhere) are not failures.
                "\(t.done)/\(t.running)/\(t.queued)/\(t.failed) of \(t.total)" + (t.cancelled > 0 ? ", \(t.cancelled) cancelled" : "")
                    + (t.reused > 0 ? ", \(t.reused) reused" : ""),
                percent(job.progress),
                job.framesPerSecond.map { String(format: "%.1f", $0) } ?? "-",
                finishedStates.contains(job.state) ? "-" : (job.etaSeconds.map(clock) ?? "-"),
            ])
        }
        var text = table.render()
        for job in report.jobs {
            if let error = job.error, !error.isEmpty {
                text += "job \(job.id) \(job.state): \(error.escapingControlCharacters)\n"
            }
            if let encoder = job.needsEncoder {
                text += "job \(job.id) waits for an agent with \(encoder.escapingControlCharacters): no connected agent has it (reel agents)\n"
            }
            if let loudness = job.loudness {
                text += "job \(job.id) loudness: \(loudness.escapingControlCharacters)\n"
            }
            if let line = costLine(job) { text += line + "\n" }
        }
        return text + storageLine(report.storage)
    }

    /// The STATE column: `running`, `running (paused)` when the operator paused it, `running,
    /// paused (budget)` when its budget did.
    static func stateText(_ job: JobStatus) -> String {
        guard job.paused && !finishedStates.contains(job.state) else { return job.state }
        return job.pauseReason == "budget" ? "\(job.state), paused (budget)" : "\(job.state) (paused)"
    }

    /// "job 7 cost so far: 0.0213 (91.8 agent-s)", "job 7 cost: …" once it has ended, with the
    /// tasks of agents without a price said, and its budget's share spent ("budget 3.5h: 92 %
    /// spent, paused: raise it with `reel budget 7 AMOUNT`"); nil when the report has no agent
    /// time (an older coordinator, or the farm overview).
    static func costLine(_ job: JobStatus) -> String? {
        guard let seconds = job.agentSeconds else { return nil }
        let ended = finishedStates.contains(job.state)
        var line = "job \(job.id) cost\(ended ? "" : " so far"): \(job.cost.map(money) ?? "-") (\(String(format: "%.1f", seconds)) agent-s"
        if let unpriced = job.unpricedTasks, unpriced > 0 {
            line += job.cost == nil ? ", no agent has a price: reel agent --cost-per-hour" : ", \(unpriced) task\(unpriced == 1 ? "" : "s") on agents without a price"
        }
        line += ")"
        if let budget = job.budget, let spent = job.budgetSpent, let limit = JobBudget(parsing: budget) {
            line += "; budget \(budget): \(String(format: "%.0f", spent / limit.amount * 100)) % spent"
            if job.pauseReason == "budget" && !ended { line += ", paused: raise it with `reel budget \(job.id) AMOUNT`" }
        }
        return line
    }

    /// What `submit --wait` says, once, when the job it follows is paused by
    /// its budget: it will not end by itself, so the waiter says why it waits and what ends the
    /// wait ("job 7 is paused by its budget (3.5h, 92 % spent): raise it with `reel budget 7
    /// AMOUNT` and this wait goes on; Ctrl-C stops waiting, the job stays"). Nil for any other job.
    static func budgetPauseNotice(_ job: JobStatus) -> String? {
        guard job.paused, job.pauseReason == "budget", !finishedStates.contains(job.state) else { return nil }
        var share = ""
        if let budget = job.budget {
            share = " (\(budget)"
            if let spent = job.budgetSpent, let limit = JobBudget(parsing: budget), limit.amount > 0 {
                share += ", \(String(format: "%.0f", spent / limit.amount * 100)) % spent"
            }
            share += ")"
        }
        return "job \(job.id) is paused by its budget\(share): raise it with `reel budget \(job.id) AMOUNT` and this wait goes on; "
            + "Ctrl-C stops waiting, the job stays"
    }

    /// An amount spent of `budget` in its unit: money (`money`), or agent-hours ("1.25h").
    static func budgetAmount(_ spent: Double, of budget: String) -> String {
        JobBudget(parsing: budget)?.unit == .agentHours ? String(format: "%.2fh", spent) : money(spent)
    }

    /// A cost with 4 significant places below 1 (0.002133), else 2 decimals (12.40).
    static func money(_ amount: Double) -> String {
        amount >= 1 || amount == 0 ? String(format: "%.2f", amount) : String(format: "%.4g", amount)
    }

    /// A batch in a few lines: its rows by state, ETA, agent time and reuse; with the report's
    /// rows (`--rows`), a table of them below.
    static func batchSummary(_ report: BatchReport) -> String {
        let c = report.counts
        var text = "batch b\(report.id) \(report.name.escapingControlCharacters): \(report.state)\n"
        text += "rows: \(report.rows) — \(c.queued) queued, \(c.running) running, \(c.done) done, \(c.failed) failed"
            + (c.cancelled > 0 ? ", \(c.cancelled) cancelled" : "")
            + (report.rows > c.submitted ? ", \(report.rows - c.submitted) not submitted" : "") + "\n"
        text += "ETA: \(report.etaSeconds.map(clock) ?? "-")  agent time: \(String(format: "%.1f", report.agentSeconds)) s  "
            + "chunks: \(report.reusedChunks) of \(report.chunks) reused\n"
        guard let rows = report.rowStatuses else { return text }
        var table = TextTable(headers: ["ROW", "JOB", "STATE", "PROGRESS", "REUSED", "AGENT-S", "ERROR"], rightAligned: [0, 1, 3, 4, 5])
        for row in rows {
            table.add([String(row.row), String(row.job), row.state, percent(row.progress), "\(row.reusedChunks)/\(row.chunks)",
                       String(format: "%.1f", row.agentSeconds), (row.error ?? "").escapingControlCharacters])
        }
        return text + table.render()
    }

    /// `job N loudness: …` for a done job whose output still misses its loudness target
    /// (`LoudnessMiss`), for `reel render` and `reel submit --wait` to print when the job ends:
    /// the warning must reach whoever waited for the file, not only `reel status`. Nil otherwise.
    static func loudnessWarning(_ job: JobStatus) -> String? {
        guard let loudness = job.loudness, loudness.contains(LoudnessMiss.warningPrefix) else { return nil }
        return "job \(job.id) loudness: \(loudness.escapingControlCharacters)"
    }

    /// `3 of 13 tasks reused, 10 rendered`: how much of a finished job came from earlier renders.
    static func reuse(_ tasks: TaskCounts) -> String {
        "\(tasks.reused) of \(tasks.total) tasks reused, \(tasks.total - tasks.reused) rendered"
    }

    /// The job's history, one event a line: local date and time, kind, task, agent, message.
    static func eventsTable(_ events: [JobEvent], job: Int64) -> String {
        guard !events.isEmpty else { return "job \(job) has no events\n" }
        var table = TextTable(headers: ["TIME", "EVENT", "TASK", "AGENT", "DETAIL"], rightAligned: [])
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        for event in events {
            table.add([
                formatter.string(from: Date(timeIntervalSince1970: Double(event.atMillis) / 1000)),
                event.kind.replacingOccurrences(of: "_", with: " "),
                event.taskLabel ?? "-",
                event.agent?.escapingControlCharacters ?? "-",
                event.message.isEmpty ? "" : event.message.escapingControlCharacters,
            ])
        }
        return table.render()
    }

    /// `storage: assets 1.2 GiB, results 300.0 MiB, outputs 4.0 GiB` (when the report has it).
    static func storageLine(_ usage: StorageUsage?) -> String {
        guard let usage else { return "" }
        return "storage: assets \(bytes(usage.assetBytes)), results \(bytes(usage.resultBytes)), outputs \(bytes(usage.outputBytes))\n"
    }

    /// One row per coordinator, when the farm runs several (or one has stopped or gone silent).
    static func coordinatorsTable(_ report: AgentsReport) -> String {
        guard let coordinators = report.coordinators, coordinators.count > 1 || coordinators.contains(where: { $0.state != "alive" }) else {
            return ""
        }
        var table = TextTable(headers: ["COORDINATOR", "HOST", "STATE", "HEARTBEAT", "STARTED"], rightAligned: [3])
        for coordinator in coordinators {
            table.add([coordinator.address + (coordinator.answering ? " *" : ""), coordinator.host, coordinator.state,
                       age(coordinator.heartbeatAgeSeconds), timeOfDay(coordinator.startedAtMillis)])
        }
        return table.render() + "\n"
    }

    /// One row per agent: name, host, state, threads, heartbeat age, failures, current task;
    /// the farm's coordinators above them when it runs several (`coordinatorsTable`).
    static func agentsTable(_ report: AgentsReport) -> String {
        coordinatorsTable(report) + agentsOnly(report)
    }

    private static func agentsOnly(_ report: AgentsReport) -> String {
        guard !report.agents.isEmpty else { return "no agents\n" }
        var table = TextTable(headers: ["AGENT", "HOST", "STATE", "THREADS", "HEARTBEAT", "FAILURES", "ENCODERS", "TASK"], rightAligned: [3, 4, 5])
        for agent in report.agents {
            table.add([
                agent.name, agent.host, agent.state, String(agent.threads),
                agent.heartbeatAgeSeconds.map { age($0) } ?? "never",
                agent.failures.map(String.init) ?? "-",
                agent.encoders.map { $0.isEmpty ? "none" : $0.joined(separator: ",") } ?? "-",
                agent.currentTask ?? "-",
            ])
        }
        var text = table.render()
        for agent in report.agents where agent.state == "quarantined" || agent.lastError != nil {
            var line = "agent \(agent.name)"
            if agent.state == "quarantined", let until = agent.quarantinedUntilMillis {
                line += " quarantined until \(timeOfDay(until))"
            }
            if let error = agent.lastError { line += (agent.state == "quarantined" ? "; " : " ") + "last error: \(error)" }
            text += line + "\n"
        }
        return text
    }

    /// The one-line progress of a job being waited for (`submit --wait`).
    static func progressLine(_ job: JobStatus, width: Int = 30) -> String {
        let fraction = min(max(job.progress, 0), 1)
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        var line = "job \(job.id) \(job.state) \(bar) \(percent(fraction)) \(job.framesDone)/\(job.frameCount) frames"
        if let fps = job.framesPerSecond { line += "  \(String(format: "%.1f", fps)) fps" }
        if !finishedStates.contains(job.state), let eta = job.etaSeconds { line += "  ETA \(clock(eta))" }
        return line
    }

    /// An instant as local `HH:mm:ss` (quarantine ends are minutes away, so the day is implied).
    static func timeOfDay(_ millis: Int64) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss"
        return formatter.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
    }

    /// `42%`: whole percent, never rounding an unfinished job up to 100.
    static func percent(_ fraction: Double) -> String {
        let clamped = min(max(fraction.isFinite ? fraction : 0, 0), 1)
        return "\(Int((clamped * 100).rounded(.down)))%"
    }

    /// `m:ss` or `h:mm:ss`.
    static func clock(_ seconds: Double) -> String {
        let s = Int(max(0, seconds.isFinite ? seconds : 0).rounded())
        return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
    }

    /// A heartbeat age: `0.4s`, `12s`, `3m05s`, `2h07m`.
    static func age(_ seconds: Double) -> String {
        let s = max(0, seconds.isFinite ? seconds : 0)
        if s < 10 { return String(format: "%.1fs", s) }
        let whole = Int(s.rounded(.down))
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return String(format: "%dm%02ds", whole / 60, whole % 60) }
        return String(format: "%dh%02dm", whole / 3600, whole / 60 % 60)
    }

    /// Bytes for humans: `512 B`, `3.2 MiB`.
    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count), unit = 0
        while value >= 1024, unit < units.count - 1 { value /= 1024; unit += 1 }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }
}

/// Columns padded to their widest cell (in characters), two spaces apart.
struct TextTable {
    let headers: [String]
    /// Column indices aligned right (numbers).
    let rightAligned: Set<Int>
    private var rows: [[String]] = []

    init(headers: [String], rightAligned: Set<Int> = []) {
        self.headers = headers; self.rightAligned = rightAligned
    }

    mutating func add(_ row: [String]) {
        precondition(row.count == headers.count, "a row has one cell per column")
        // Job and agent names are chosen by peers: escaped, a cell stays one line and cannot
        // drive the operator's terminal (ESC sequences, bidi overrides).
        rows.append(row.map(\.escapingControlCharacters))
    }

    func render() -> String {
        let all = [headers] + rows
        let widths = headers.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.indices.map { column in
                let cell = row[column]
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return rightAligned.contains(column) ? pad + cell : cell + pad
            }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }.joined(separator: "\n") + "\n"
    }
}
