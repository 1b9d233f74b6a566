import ArgumentParser
import Foundation
import ReelMedia

/// The `reel` command line. Exit status: 0 success, 1 a user error (the message says what to
/// fix), 2 an internal error.
@main
struct Reel: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reel",
        abstract: "Reel: render AVFoundation-style video compositions on Linux, on one machine or a farm.",
        discussion: "A composition is a JSON file (see README.md); editors' timelines (.otio, .edl) are read too. Start with `reel validate` and `reel render`.",
        subcommands: [
            RenderCommand.self, BatchCommand.self, ValidateCommand.self, ImportCommand.self, ProbeCommand.self, ThumbnailCommand.self,
            ConcatCommand.self, SlideshowCommand.self,
            CoordinatorCommand.self, AgentCommand.self,
            SubmitCommand.self, EstimateCommand.self, StatusCommand.self, AgentsCommand.self, DrainCommand.self, CancelCommand.self, RetryCommand.self,
            DeleteCommand.self, FetchCommand.self, PauseCommand.self, ResumeCommand.self, BudgetCommand.self, PriorityCommand.self,
            EventsCommand.self, TokenCommand.self, LoudnessCommand.self,
        ])

    /// ArgumentParser exits 64 on usage errors; Reel's contract is 1 for every user error.
    static func main() async {
        LibAVLogging.errorsOnly()
        do {
            var command = try parseAsRoot()
            // Farm commands (submit, status, …) talk to the network and run async.
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let code as ExitCode {
            Foundation.exit(code.rawValue)
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                print(message)
                Foundation.exit(0)
            }
            Terminal.error(message)
            Foundation.exit(1)
        }
    }
}
