import Foundation

/// Byte progress of an upload or download on stderr: redrawn in place on a terminal (at
/// most 10 times a second), a line per 25 % otherwise. Silent for small transfers, where a
/// progress line would only be noise.
final class TransferProgress {
    private let label: String
    private let total: Int64
    private let enabled: Bool
    private let tty = Terminal.stderrIsTTY
    private let start = Date()
    private var lastDraw = Date.distantPast
    private var lastQuarter = -1

    /// Transfers below this many bytes show no progress.
    static let threshold: Int64 = 16 << 20

    init(label: String, total: Int64, quiet: Bool = false) {
        self.label = label; self.total = total
        enabled = !quiet && total >= Self.threshold
    }

    func update(_ done: Int64) {
        guard enabled, total > 0 else { return }
        let now = Date()
        let finished = done >= total
        let fraction = Double(done) / Double(total)
        let seconds = now.timeIntervalSince(start)
        let rate = seconds > 0 ? Double(done) / seconds : 0
        let line = "\(label) \(ClientFormatting.percent(fraction)) \(ClientFormatting.bytes(done))/\(ClientFormatting.bytes(total))"
            + "  \(ClientFormatting.bytes(Int64(rate)))/s"
        if tty {
            guard finished || now.timeIntervalSince(lastDraw) >= 0.1 else { return }
            lastDraw = now
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + line + (finished ? "\n" : "")).utf8))
        } else {
            let quarter = Int(fraction * 4)
            guard quarter > lastQuarter else { return }
            lastQuarter = quarter
            Terminal.error(line)
        }
    }
}
