import Dispatch
import Foundation
import Synchronization

/// Ctrl-C (SIGINT) and SIGTERM for the commands that render (`render`, `concat`, `slideshow`).
///
/// The signals are received by dispatch sources on a global queue — never in a signal handler —
/// so the reaction may print, take locks and cancel tasks. The first signal prints
/// `interrupted` on stderr and calls what the command registered (`whenInterrupted`): the
/// render stops, the command takes away what it created and exits 128 + the signal's number
/// (130 for SIGINT, 143 for SIGTERM). A second signal does not wait for that clean-up.
final class Interruption: Sendable {
    static let shared = Interruption()

    private struct State {
        var received: Int32?
        var handlers: [@Sendable () -> Void] = []
        var sources: [DispatchSourceSignal] = []
    }

    private let state = Mutex(State())

    /// Starts receiving SIGINT and SIGTERM (idempotent). Until then they end the process at once.
    func install() {
        state.withLock { state in
            guard state.sources.isEmpty else { return }
            for number in [SIGINT, SIGTERM] {
                // Ignored by the default disposition, delivered to the dispatch source instead.
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global(qos: .userInitiated))
                source.setEventHandler { [weak self] in self?.receive(number) }
                source.resume()
                state.sources.append(source)
            }
        }
    }

    /// The signal received, if any.
    var receivedSignal: Int32? { state.withLock { $0.received } }
    var isInterrupted: Bool { receivedSignal != nil }

    /// The exit status after an interruption: 128 + the signal's number.
    var exitStatus: Int32 { 128 + (receivedSignal ?? SIGINT) }

    /// Runs `handler` on the first signal (at once if one was already received).
    func whenInterrupted(_ handler: @escaping @Sendable () -> Void) {
        let now: Bool = state.withLock {
            if $0.received != nil { return true }
            $0.handlers.append(handler)
            return false
        }
        if now { handler() }
    }

    private func receive(_ number: Int32) {
        let (first, toCall): (Bool, [@Sendable () -> Void]) = state.withLock { state in
            guard state.received == nil else { return (false, []) }
            state.received = number
            defer { state.handlers.removeAll() }
            return (true, state.handlers)
        }
        guard first else {
            Terminal.error("interrupted again: exiting without cleaning up")
            _exit(128 + number)
        }
        // On a terminal the progress bar holds the line: end it first.
        Terminal.error((Terminal.stderrIsTTY ? "\n" : "") + "interrupted")
        for handler in toCall { handler() }
    }
}

extension Interruption {
    /// Runs an in-process render (`LocalRender`, asked `isInterrupted` at every frame) to
    /// `output`. Interrupted, it has removed its work folder and written nothing; interrupted
    /// while the finished file was being joined, that file is removed unless it replaced one.
    func renderingLocally(to output: String, _ render: () throws -> Void) throws {
        let existed = FileManager.default.fileExists(atPath: output)
        try render()
        if isInterrupted {
            if !existed { unlink(output) }
            throw InterruptedError()
        }
    }
}

/// Thrown by a render that stopped because of `Interruption`.
struct InterruptedError: Error, CustomStringConvertible {
    var description: String { "interrupted" }
}
