import ArgumentParser
import Foundation

/// How an operator command reaches the coordinator: shared by `submit`, `status`, `agents`,
/// `cancel`, `retry` and `fetch`. Flags win over the environment (`REEL_COORDINATOR`,
/// `REEL_SECRET_FILE`), so a shell can export the farm once and still override per command.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The coordinator as HOST:PORT (default: $REEL_COORDINATOR).", valueName: "host:port"))
    var coordinator: String?

    @Option(name: .long, help: ArgumentHelp("The farm's shared secret file (default: $REEL_SECRET_FILE).", valueName: "path"))
    var secretFile: String?

    @Option(name: .long, help: ArgumentHelp("Use TLS and trust this CA certificate (PEM) for the coordinator.", valueName: "path"))
    var tlsCa: String?

    @Option(name: .long, help: ArgumentHelp("Server name to verify in the coordinator's certificate (default: HOST).", valueName: "name"))
    var tlsServerName: String?

    /// The resolved endpoint, or a `UserError` saying which flag or variable to set.
    func endpoint(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Endpoint {
        guard let text = coordinator ?? environment["REEL_COORDINATOR"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            throw UserError("no coordinator given: pass --coordinator HOST:PORT or set REEL_COORDINATOR")
        }
        guard let endpoint = Endpoint(parsing: text) else {
            throw UserError("--coordinator takes HOST:PORT (like 10.0.0.5:7400 or [::1]:7400); got \"\(text)\"")
        }
        return endpoint
    }

    /// The secret file's path, or a `UserError` saying which flag or variable to set.
    func secretPath(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        guard let path = secretFile ?? environment["REEL_SECRET_FILE"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            throw UserError("no shared secret given: pass --secret-file PATH or set REEL_SECRET_FILE")
        }
        return path
    }
}

/// A `HOST:PORT` pair. IPv6 literals are written in brackets (`[::1]:7400`).
struct Endpoint: Hashable, Sendable, CustomStringConvertible {
    var host: String
    var port: Int

    init(host: String, port: Int) { self.host = host; self.port = port }

    /// Parses `HOST:PORT`; `nil` when the port is missing or not 1…65535.
    init?(parsing text: String) {
        let host: Substring, portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (1...65_535).contains(port) else { return nil }
        self.host = String(host)
        self.port = port
    }

    var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
