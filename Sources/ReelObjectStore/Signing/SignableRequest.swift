/// An HTTP request as SigV4 sees it, before signing: method, endpoint, the path as sent (already
/// encoded, see `SigV4Encoding`), the query's names and values (not encoded: the signer encodes
/// them), and the headers to sign besides the ones the signer adds itself (`host`,
/// `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token`).
public struct SignableRequest: Hashable, Sendable {
    public var method: String
    public var endpoint: S3Endpoint
    /// The encoded absolute path, e.g. `/bucket/a%20b/c.mp4`. Signed exactly as sent.
    public var path: String
    /// Query names to values, unencoded. A flag such as `?uploads` is `["uploads": ""]`.
    public var query: [String: String]
    /// Header names (any case; lower-cased when stored) to values.
    public private(set) var headers: [String: String]

    public init(method: String, endpoint: S3Endpoint, path: String, query: [String: String] = [:], headers: [String: String] = [:]) {
        self.method = method.uppercased(); self.endpoint = endpoint; self.path = path; self.query = query
        self.headers = [:]
        for (name, value) in headers { self.headers[name.lowercased()] = value }
    }

    /// A request for `key` in `bucket` (path-style).
    public init(method: String, endpoint: S3Endpoint, bucket: String, key: String,
                query: [String: String] = [:], headers: [String: String] = [:]) {
        self.init(method: method, endpoint: endpoint, path: SigV4Encoding.objectPath(bucket: bucket, key: key), query: query, headers: headers)
    }

    public mutating func setHeader(_ name: String, _ value: String?) { headers[name.lowercased()] = value }

    /// The encoded query in canonical order (`name=value&…`, sorted by encoded name, then value),
    /// which is also a valid order to send it in.
    public var canonicalQuery: String { Self.canonicalQuery(query) }

    static func canonicalQuery(_ query: [String: String]) -> String {
        query.map { (SigV4Encoding.encode($0.key, keepSlash: false), SigV4Encoding.encode($0.value, keepSlash: false)) }
            .sorted { $0.0 == $1.0 ? Array($0.1.utf8).lexicographicallyPrecedes($1.1.utf8) : Array($0.0.utf8).lexicographicallyPrecedes($1.0.utf8) }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// `scheme://host[:port]/path[?query]`: the URL to send the request to.
    public var url: String {
        let query = canonicalQuery
        return endpoint.origin + path + (query.isEmpty ? "" : "?" + query)
    }
}

/// What SigV4 signs for the body (`x-amz-content-sha256` and the canonical request's last line).
public enum PayloadHash: Hashable, Sendable {
    /// A body of no bytes: the SHA-256 of nothing.
    case empty
    /// The body's SHA-256, 64 lower-case hex digits.
    case sha256(String)
    /// `UNSIGNED-PAYLOAD`: the body is not part of the signature (presigned URLs; streamed
    /// bodies whose integrity another header carries, such as `x-amz-checksum-sha256`).
    case unsigned

    public static let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    public var value: String {
        switch self {
        case .empty: return Self.emptySHA256
        case .sha256(let hex): return hex
        case .unsigned: return "UNSIGNED-PAYLOAD"
        }
    }
}
