import ArgumentParser
import Foundation
import ReelConsole
import ReelProtocol

/// `reel token`: a console token signed with a key derived from the farm's secret file.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a token for the operator console (reel coordinator --http).",
        discussion: """
            The token is a JWT (HS256) signed with a key derived from the farm's secret file (never the secret \
            itself), so only someone who can read that file can make one. Open the console with \
            http://COORDINATOR:PORT/#token=TOKEN or paste it into the sign-in field; API clients send \
            `Authorization: Bearer TOKEN`. A --read-only token can look but not cancel, retry, pause, resume \
            or change priorities. Tokens are not stored anywhere: they stop working when they expire or when \
            the farm's secret changes.
            """)

    @Option(name: .long, help: ArgumentHelp("The farm's shared secret file (default: $REEL_SECRET_FILE).", valueName: "path"))
    var secretFile: String?
    @Flag(help: "A token that can only read (no cancel, retry, pause, resume or priority).") var readOnly = false
    @Option(help: ArgumentHelp("How long the token is valid: 30m, 12h, 7d, 4w (at most 366d).", valueName: "duration"))
    var expires: String = "12h"
    @Option(help: ArgumentHelp("Who the token is for (shown in the console; default: $USER@host).", valueName: "name"))
    var subject: String?

    func validate() throws {
        if ConsoleTokens.parseLifetime(expires) == nil {
            throw ValidationError("--expires takes a duration like 30m, 12h, 7d or 4w (at most 366d); got \"\(expires)\"")
        }
    }

    func run() async throws {
        try await reportingErrorsAsync {
            let options = try ConnectionOptions.parse(secretFile.map { ["--secret-file", $0] } ?? [])
            let path = try options.secretPath()
            let authenticator: Authenticator
            do {
                authenticator = try Authenticator(secretFile: path)
            } catch let error as SecretFileError {
                throw UserError(error.description)
            } catch {
                throw UserError("secret file \(path): \((error as? ReelProtocolError)?.message ?? "\(error)")")
            }
            let tokens = await ConsoleTokens.make(authenticator: authenticator)
            let token = try await tokens.issue(role: readOnly ? .readOnly : .operator_, subject: subject ?? OperatorClient.operatorName(),
                                               lifetime: ConsoleTokens.parseLifetime(expires)!)
            print(token)
        }
    }
}
