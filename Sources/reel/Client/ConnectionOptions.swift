import ArgumentParser
import Foundation
import ReelProtocol

/// How an operator command reaches the coordinator: shared by `submit`, `status`, `agents`,
/// `cancel`, `retry` and `fetch`. Flags win over the environment (`REEL_COORDINATOR`,
/// `REEL_SECRET_FILE`), so a shell can export the farm once and still override per command.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The coordinator as HOST:PORT, or several as A:PORT,B:PORT (default: $REEL_COORDINATOR).", valueName: "host:port"))
    var coordinator: String?

    @Option(name: .long, help: ArgumentHelp("The farm's shared secret file (default: $REEL_SECRET_FILE).", valueName: "path"))
    var secretFile: String?

    @Option(name: .long, help: ArgumentHelp("Use TLS and trust this CA certificate (PEM) for the coordinator.", valueName: "path"))
    var tlsCa: String?

    @Option(name: .long, help: ArgumentHelp("Server name to verify in the coordinator's certificate (default: HOST).", valueName: "name"))
    var tlsServerName: String?

    /// The coordinators (`HOST:PORT`, or several separated by commas), or a `UserError` saying
    /// which flag or variable to set.
    func endpoints(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> [HostPort] {
        guard let text = coordinator ?? environment["REEL_COORDINATOR"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            throw UserError("no coordinator given: pass --coordinator HOST:PORT or set REEL_COORDINATOR")
        }
        guard let endpoints = HostPort.list(parsing: text) else {
            let port = HostPort.defaultPort
            throw UserError("--coordinator takes HOST:PORT (like 10.0.0.5:\(port) or [::1]:\(port)), or several separated by commas "
                            + "(a:\(port),b:\(port)); got \"\(text)\"")
        }
        return endpoints
    }

    /// The first coordinator (`endpoints`).
    func endpoint(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> HostPort {
        try endpoints(environment: environment)[0]
    }

    /// The secret file's path, or a `UserError` saying which flag or variable to set.
    func secretPath(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        guard let path = secretFile ?? environment["REEL_SECRET_FILE"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            throw UserError("no shared secret given: pass --secret-file PATH or set REEL_SECRET_FILE")
        }
        return path
    }
}
