import ArgumentParser
import Foundation
import ReelCore

/// The async twin of `reportingErrors`: composition problems and `UserError`s exit 1 with
/// their message, anything else exits 2 as an internal error.
func reportingErrorsAsync(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch where Interruption.shared.isInterrupted {
        throw ExitCode(Interruption.shared.exitStatus)
    } catch let error as UserError {
        // Escaped: a job's error and the coordinator's ERR text can carry peer-chosen text.
        Terminal.error("error: \(error.description.escapingControlCharacters)")
        throw ExitCode(1)
    } catch let error as ExitCode {
        throw error
    } catch {
        try reportingErrors { throw error }
    }
}
