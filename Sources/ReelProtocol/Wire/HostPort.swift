/// A `HOST:PORT` address as written on command lines and in `REEL_COORDINATOR`: where the
/// coordinator listens (`--listen`, `--metrics`, `--http`) and where agents and operators reach
/// it (`--coordinator`). An IPv6 literal is written in brackets, `[::1]:7400`; `host` holds it
/// without them, and `description` puts them back.
public struct HostPort: Sendable, Hashable, CustomStringConvertible {
    /// The coordinator's `reel/1` port unless told otherwise (`reel coordinator --listen`).
    public static let defaultPort = 7400

    /// What an address is for. Parsing differs in two ways: the ports allowed, and whether an
    /// IPv6 literal may go without brackets.
    public enum Purpose: Sendable {
        /// An address to bind: port 0 picks a free port, and a bare IPv6 literal is accepted
        /// (`::1:7400`: the last `:` separates the port).
        case listen
        /// An address to connect to: port 1…65535, and an IPv6 literal must be in brackets
        /// (`::1:7400` is refused rather than guessed at).
        case connect

        /// The ports an address for this purpose may name.
        public var ports: ClosedRange<Int> {
            switch self {
            case .listen: 0...65_535
            case .connect: 1...65_535
            }
        }
    }

    public var host: String
    /// 0, when listening, picks a free port.
    public var port: Int

    public init(host: String, port: Int) { self.host = host; self.port = port }

    /// Parses `HOST:PORT` or `[IPV6]:PORT` for `purpose`. - Returns: nil when the port is
    /// missing, not decimal digits or outside `purpose.ports`; when the host is empty or holds
    /// a space or `/`; or, for `.connect`, when an IPv6 literal is not in brackets.
    public init?(parsing text: String, for purpose: Purpose) {
        let host: Substring, port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
            guard purpose == .listen || !host.contains(":") else { return nil }
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" }),
              !port.isEmpty, port.allSatisfy({ $0.isASCII && $0.isNumber }),
              let number = Int(port), purpose.ports.contains(number) else { return nil }
        self.init(host: String(host), port: number)
    }

    /// `HOST:PORT`, with an IPv6 literal in brackets: what `init(parsing:for:)` reads back.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

extension HostPort {
    /// Parses a comma-separated list of `HOST:PORT` (`a:7400,b:7400`) to connect to: the
    /// coordinators of a farm that runs several. Spaces around a comma are ignored.
    /// - Returns: nil when the list is empty or any entry does not parse (`init(parsing:for:)`).
    public static func list(parsing text: String) -> [HostPort]? {
        let entries = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard !entries.isEmpty else { return nil }
        var out: [HostPort] = []
        for entry in entries {
            guard let endpoint = HostPort(parsing: entry, for: .connect) else { return nil }
            if !out.contains(endpoint) { out.append(endpoint) }
        }
        return out
    }
}
