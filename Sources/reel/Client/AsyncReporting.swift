import ArgumentParser
import Foundation

/// The async twin of `reportingErrors`: composition problems and `UserError`s exit 1 with
/// their message, anything else exits 2 as an internal error.
func reportingErrorsAsync(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as UserError {
        Terminal.error("error: \(error.description)")
        throw ExitCode(1)
    } catch let error as ExitCode {
        throw error
    } catch {
        try reportingErrors { throw error }
    }
}
