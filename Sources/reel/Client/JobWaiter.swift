import Foundation
import ReelProtocol

/// Follows one job until it is done, failed or cancelled (`submit --wait`), polling `STATUS`
/// every `interval` and drawing its progress on stderr. A lost connection (a coordinator
/// restart, which the farm survives) is retried for up to `reconnectWindow` before giving up.
/// Used from one task at a time.
final class JobWaiter {
    private(set) var client: OperatorClient
    private let connection: ConnectionOptions
    private let job: Int64
    private let quiet: Bool
    private let tty = Terminal.stderrIsTTY

    static let interval: Duration = .milliseconds(500)
    static let reconnectWindow: TimeInterval = 120

    init(client: OperatorClient, connection: ConnectionOptions, job: Int64, quiet: Bool) {
        self.client = client; self.connection = connection; self.job = job; self.quiet = quiet
    }

    /// Polls until the job reaches a final state and returns that status.
    func waitUntilFinished() async throws -> JobStatus {
        var lastLine = ""
        var lastPrinted = Date.distantPast
        while true {
            let status = try await pollOnce()
            let finished = ClientFormatting.finishedStates.contains(status.state)
            if !quiet {
                let line = ClientFormatting.progressLine(status)
                if tty {
                    FileHandle.standardError.write(Data(("\r\u{1B}[K" + line + (finished ? "\n" : "")).utf8))
                } else if finished || (line != lastLine && Date().timeIntervalSince(lastPrinted) >= 5) {
                    // Logs get a line when something changed, at most every 5 s.
                    Terminal.error(line)
                    lastPrinted = Date()
                }
                lastLine = line
            }
            if finished { return status }
            try await Task.sleep(for: Self.interval)
        }
    }

    private func pollOnce() async throws -> JobStatus {
        let deadline = Date().addingTimeInterval(Self.reconnectWindow)
        while true {
            do {
                let (report, _) = try await client.status(job: job)
                guard let status = report.jobs.first(where: { $0.id == job }) else {
                    throw UserError("the coordinator no longer knows job \(job)")
                }
                return status
            } catch let error as UserError where error.description.hasPrefix("lost the connection") && Date() < deadline {
                if !quiet { Terminal.error("\n\(error.description); reconnecting…") }
                try await Task.sleep(for: .seconds(2))
                if let fresh = try? await OperatorClient.connect(connection) { client = fresh }
            }
        }
    }

    /// `OUTPUT` in ranges into `path` (temporary name, fsync, rename).
    static func download(job: Int64, to path: String, client: OperatorClient, quiet: Bool) async throws {
        let file = try OutputFile(path: path)
        var progress: TransferProgress?
        try await client.output(job: job, into: { try file.write($0) }) { done, total in
            if progress == nil { progress = TransferProgress(label: "download", total: total, quiet: quiet) }
            progress?.update(done)
        }
        try file.commit()
    }
}
