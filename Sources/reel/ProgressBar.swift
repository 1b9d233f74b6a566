import Foundation
import ReelMedia
import Synchronization

/// A one-line progress bar with speed and ETA on stderr. On a terminal it redraws in place;
/// otherwise (logs, CI) it prints a line every 10 %. Safe to update from several render workers.
final class ProgressBar: Sendable {
    /// What was drawn last; held while drawing, so lines from several workers never interleave.
    private struct Drawn {
        var at = Date.distantPast
        var decile = -1
    }

    private let drawn = Mutex(Drawn())
    private let label: String
    private let start = Date()
    private let tty = Terminal.stderrIsTTY

    init(label: String) { self.label = label }

    func update(_ p: RenderProgress) {
        drawn.withLock { drawn in
            let now = Date()
            let done = p.framesDone == p.frameCount
            if tty {
                guard done || now.timeIntervalSince(drawn.at) >= 0.1 else { return }
                drawn.at = now
                FileHandle.standardError.write(Data(("\r" + line(p, now: now) + (done ? "\n" : "")).utf8))
            } else {
                let decile = Int(p.fraction * 10)
                guard decile > drawn.decile else { return }
                drawn.decile = decile
                Terminal.error(line(p, now: now))
            }
        }
    }

    private func line(_ p: RenderProgress, now: Date) -> String {
        let bar = Self.bar(p.fraction)
        let elapsed = now.timeIntervalSince(start)
        let fps = elapsed > 0 ? Double(p.framesDone) / elapsed : 0
        let remaining = fps > 0 ? Double(p.frameCount - p.framesDone) / fps : 0
        let percent = String(format: "%3d%%", Int(p.fraction * 100))
        return "\(label) \(bar) \(percent) \(p.framesDone)/\(p.frameCount) frames  \(String(format: "%.1f", fps)) fps  "
            + (p.framesDone == p.frameCount ? "took \(Self.clock(elapsed))" : "ETA \(Self.clock(remaining))")
    }

    /// `fraction` (0…1) as a bar of `width` blocks.
    static func bar(_ fraction: Double, width: Int = 30) -> String {
        let filled = max(0, min(width, Int(fraction * Double(width))))
        return String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
    }

    static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
    }
}
