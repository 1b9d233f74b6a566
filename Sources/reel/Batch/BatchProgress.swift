import Foundation
import Synchronization

/// The progress of `reel batch` on stderr: one bar for the whole batch — rows done, failed,
/// rendering, and the time left — redrawn in place on a terminal, with a line above it for
/// each row that fails. Elsewhere (logs, CI) one plain line per row as it finishes. A failed
/// row's line is printed even when quiet: it is news the person must act on.
final class BatchProgress: Sendable {
    private struct State {
        var done = 0
        var failed = 0
        var rendering = 0
        /// Rows finished in this run (those done before it take no time now).
        var finishedHere = 0
        var started: Date?
    }

    private let state = Mutex(State())
    /// Rows this run renders.
    private let total: Int
    private let quiet: Bool
    private let tty = Terminal.stderrIsTTY

    init(total: Int, quiet: Bool) {
        self.total = total; self.quiet = quiet
    }

    func rowStarted() {
        state.withLock { state in
            if state.started == nil { state.started = Date() }
            state.rendering += 1
            draw(state)
        }
    }

    /// A row ended: `detail` says how (its output and figures, or its error).
    func rowFinished(row: Int, failed: Bool, stopped: Bool = false, detail: String) {
        state.withLock { state in
            state.rendering -= 1
            if stopped {
                draw(state)
                return
            }
            state.finishedHere += 1
            if failed { state.failed += 1 } else { state.done += 1 }
            let finished = state.done + state.failed
            let line = "row \(row) \(failed ? "failed" : "done") (\(finished)/\(total)): \(detail)"
            if tty {
                if failed { FileHandle.standardError.write(Data(("\r\u{1B}[K" + line + "\n").utf8)) }
                draw(state)
            } else if failed || !quiet {
                Terminal.error(line)
            }
        }
    }

    /// Ends the bar's line on a terminal.
    func finish() {
        state.withLock { state in
            guard tty, !quiet, state.started != nil else { return }
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + line(state) + "\n").utf8))
            state.started = nil
        }
    }

    private func draw(_ state: State) {
        guard tty, !quiet else { return }
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + line(state)).utf8))
    }

    private func line(_ state: State) -> String {
        let finished = state.done + state.failed
        let fraction = total > 0 ? Double(finished) / Double(total) : 1
        var text = "batch \(ProgressBar.bar(fraction)) \(finished)/\(total) rows: \(state.done) done, \(state.failed) failed"
        if state.rendering > 0 { text += ", \(state.rendering) rendering" }
        let elapsed = state.started.map { Date().timeIntervalSince($0) } ?? 0
        if finished == total {
            text += "  took \(ProgressBar.clock(elapsed))"
        } else if state.finishedHere > 0 {
            text += "  ETA \(ProgressBar.clock(elapsed / Double(state.finishedHere) * Double(total - finished)))"
        }
        return text
    }
}
