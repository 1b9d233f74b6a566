import Foundation

/// Where an S3-compatible server listens: `http(s)://HOST[:PORT]`, addressed path-style
/// (`/BUCKET/KEY`), which every S3-compatible server accepts.
///
/// `hostHeader` is the `Host` value sent and signed: the host in lower case, IPv6 in brackets,
/// with the port only when it is not the scheme's default (what HTTP clients send and what
/// servers reconstruct when checking the signature).
public struct S3Endpoint: Hashable, Sendable, CustomStringConvertible {
    public let scheme: String
    /// Host name or address, lower case, without brackets.
    public let host: String
    public let port: Int

    /// Parses an endpoint URL such as `http://127.0.0.1:8333` or `https://s3.eu-west-1.amazonaws.com`.
    /// - Throws: `.invalidArgument` naming what is wrong (scheme, path, credentials in the URL).
    public init(_ text: String) throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              let host = components.host, !host.isEmpty else {
            throw ObjectStoreError(.invalidArgument, "S3 endpoint \(text.debugDescription) is not a URL such as http://127.0.0.1:8333")
        }
        guard scheme == "http" || scheme == "https" else {
            throw ObjectStoreError(.invalidArgument, "S3 endpoint \(text.debugDescription): the scheme must be http or https, not \(scheme)")
        }
        guard components.user == nil, components.password == nil else {
            throw ObjectStoreError(.invalidArgument, "S3 endpoint: credentials do not belong in the URL; use AWS_ACCESS_KEY_ID "
                                   + "and AWS_SECRET_ACCESS_KEY or a credentials file")
        }
        guard components.path.isEmpty || components.path == "/", components.query == nil, components.fragment == nil else {
            throw ObjectStoreError(.invalidArgument, "S3 endpoint \(text.debugDescription) must have no path or query: "
                                   + "the bucket and prefix go in the storage URL (s3://BUCKET/PREFIX)")
        }
        var bare = host.lowercased()
        if bare.hasPrefix("[") && bare.hasSuffix("]") { bare = String(bare.dropFirst().dropLast()) }
        try self.init(scheme: scheme, host: bare, port: components.port ?? (scheme == "https" ? 443 : 80))
    }

    public init(scheme: String, host: String, port: Int) throws {
        guard (1...65535).contains(port) else { throw ObjectStoreError(.invalidArgument, "S3 endpoint port \(port) is not in 1...65535") }
        self.scheme = scheme; self.host = host.lowercased(); self.port = port
    }

    private var isDefaultPort: Bool { (scheme == "http" && port == 80) || (scheme == "https" && port == 443) }
    private var bracketedHost: String { host.contains(":") ? "[\(host)]" : host }

    /// The `Host` header's value (see the type's documentation).
    public var hostHeader: String { isDefaultPort ? bracketedHost : "\(bracketedHost):\(port)" }

    /// `scheme://host[:port]`, without a trailing slash.
    public var origin: String { "\(scheme)://\(hostHeader)" }

    public var description: String { origin }
}
