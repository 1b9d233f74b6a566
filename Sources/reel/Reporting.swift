import ArgumentParser
import Foundation
import ReelCore

/// A mistake the user can fix; printed as one sentence, exit status 1.
struct UserError: Error, CustomStringConvertible {
    var description: String
    /// Set when the coordinator, not the request, is the problem (it restarts, its database is
    /// down): the same request may succeed later, so `ReconnectingClient` tries again.
    var transient: CoordinatorTrouble?
    init(_ description: String, transient: CoordinatorTrouble? = nil) { self.description = description; self.transient = transient }
}

enum Terminal {
    static func error(_ message: String) {
        FileHandle.standardError.write(Data((message.hasSuffix("\n") ? message : message + "\n").utf8))
    }
    static var stderrIsTTY: Bool { isatty(STDERR_FILENO) == 1 }
}

/// Runs a command body and maps failures onto Reel's exit statuses: every composition
/// problem on its own line and 1 for what the user can fix, 2 for internal errors.
func reportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch where Interruption.shared.isInterrupted {
        // Stopped by Ctrl-C or SIGTERM: `interrupted` is said already; whatever the render threw
        // on its way out is a consequence, not news.
        throw ExitCode(Interruption.shared.exitStatus)
    } catch let error as CompositionError {
        for problem in error.problems { Terminal.error("\(problem)") }
        throw ExitCode(1)
    } catch let error as UserError {
        // Escaped: a job's error and the coordinator's ERR text can carry peer-chosen text.
        Terminal.error("error: \(error.description.escapingControlCharacters)")
        throw ExitCode(1)
    } catch let error as ExitCode {
        throw error
    } catch {
        Terminal.error("internal error: \(error)")
        throw ExitCode(2)
    }
}

/// Checks that an input file exists and is readable, with a message that says what to fix.
func requireReadableFile(_ path: String, what: String) throws {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        throw UserError("\(what) \(path) does not exist")
    }
    guard !isDirectory.boolValue else { throw UserError("\(what) \(path) is a directory; give a file") }
    guard FileManager.default.isReadableFile(atPath: path) else { throw UserError("\(what) \(path) is not readable") }
}

/// Checks an output path before anything is rendered or downloaded, so a long render does not
/// fail at the end: its name must name a file (`OutputName`: not `..`, `.` or `renders/`), no
/// directory may exist under it (a finished file cannot be renamed over one), and the
/// directory it goes in must exist and be writable. `example`: a file name of the kind the
/// command writes, offered when the path names a directory.
func requireWritableOutput(_ path: String, example: String = "out.mp4") throws {
    if case .failure(let problem) = OutputName.parse(path, example: example) { throw UserError(problem.message) }
    var existing: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &existing), existing.boolValue {
        throw UserError(OutputNameError.directory(path, example: example).message)
    }
    let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
        throw UserError("the output directory \(directory) does not exist; create it or choose another -o")
    }
    guard FileManager.default.isWritableFile(atPath: directory) else {
        throw UserError("the output directory \(directory) is not writable")
    }
}

/// Parses a time argument: seconds as a decimal (`2.5`) or an exact fraction (`1001/30000`).
func parseTime(_ text: String, option: String) throws -> Rational {
    guard let t = Rational(parsing: text), t >= .zero else {
        throw UserError("\(option) takes seconds as a decimal (2.5) or a fraction (1001/30000), ≥ 0; got \"\(text)\"")
    }
    return t
}
