import Crypto
import Foundation

/// AWS Signature Version 4 for S3, pure: no clock, no I/O. The caller passes the instant, and
/// gets back the headers to send (header signing) or the URL to hand out (query presigning),
/// together with the intermediate strings, so tests compare each against an independent
/// implementation (botocore).
///
/// The rules, as AWS's "Create a signed AWS API request" and "Authenticating Requests: Using
/// Query Parameters" state them:
/// - canonical request = method, canonical URI, canonical query, canonical headers, a blank
///   line, signed header names, payload hash, joined by `\n`;
/// - S3's canonical URI is the path exactly as sent: each segment encoded once, never
///   normalised (`SigV4Encoding`);
/// - canonical query: names and values encoded (`/` too), sorted by name then value, `name=`
///   for a flag;
/// - canonical headers: names lower-cased and sorted, values trimmed with inner runs of white
///   space collapsed to one space; hop-by-hop headers and `user-agent` are never signed;
/// - the signing key is HMAC chained over the day, region, service and `aws4_request`;
/// - presigned URLs sign `UNSIGNED-PAYLOAD` and carry `X-Amz-Algorithm`, `X-Amz-Credential`,
///   `X-Amz-Date`, `X-Amz-Expires` (1 s to 7 days), `X-Amz-SignedHeaders` and, for temporary
///   credentials, `X-Amz-Security-Token` in the signed query; `X-Amz-Signature` is appended.
public struct SigV4Signer: Sendable {
    public let credentials: S3Credentials
    public let region: String
    public let service: String

    /// The longest a presigned URL may live: 7 days (S3's own limit).
    public static let maximumPresignExpiry = 604_800
    /// Presigned URLs live 15 minutes unless asked otherwise: long enough to start a transfer
    /// (the server checks expiry when a request starts, not while its body streams), short
    /// enough that a leaked URL is soon worthless.
    public static let defaultPresignExpiry = 900

    /// Headers never signed (hop-by-hop, or changed by proxies and clients), as botocore has it.
    static let unsignedHeaders: Set<String> = [
        "connection", "expect", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
        "transfer-encoding", "upgrade", "user-agent", "x-amzn-trace-id", "authorization",
    ]

    public init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials; self.region = region; self.service = service
    }

    /// Signs `request` with an `Authorization` header.
    /// - Returns: the headers to send (the request's own, plus `host`, `x-amz-date`,
    ///   `x-amz-content-sha256`, `x-amz-security-token` if any, and `authorization`) and the
    ///   intermediate strings.
    public func sign(_ request: SignableRequest, payload: PayloadHash, at date: AmzDate) -> SigV4Signature {
        var headers = request.headers
        headers["host"] = request.endpoint.hostHeader
        headers["x-amz-date"] = date.timestamp
        headers["x-amz-content-sha256"] = payload.value
        if let token = credentials.sessionToken { headers["x-amz-security-token"] = token.revealed }
        headers["authorization"] = nil
        let parts = signature(method: request.method, path: request.path, query: request.query,
                              headers: headers, payload: payload.value, date: date)
        headers["authorization"] = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope(date)), "
            + "SignedHeaders=\(parts.signedHeaders), Signature=\(parts.signature)"
        return SigV4Signature(canonicalRequest: parts.canonicalRequest, stringToSign: parts.stringToSign,
                              signature: parts.signature, signedHeaders: parts.signedHeaders, headers: headers)
    }

    /// A presigned URL for `request`, valid `expires` seconds from `date`. The request's
    /// headers are signed too (`X-Amz-SignedHeaders`): whoever uses the URL must send them with
    /// exactly these values (e.g. `x-amz-checksum-sha256`, so the server refuses other bytes).
    /// - Throws: `.invalidArgument` when `expires` is not in 1...604800.
    public func presign(_ request: SignableRequest, expires: Int = SigV4Signer.defaultPresignExpiry,
                        at date: AmzDate) throws -> PresignedRequest {
        guard (1...Self.maximumPresignExpiry).contains(expires) else {
            throw ObjectStoreError(.invalidArgument, "a presigned URL's expiry must be 1 to \(Self.maximumPresignExpiry) seconds (7 days), not \(expires)")
        }
        var headers = request.headers
        headers["host"] = request.endpoint.hostHeader
        headers["authorization"] = nil
        var query = request.query
        query["X-Amz-Algorithm"] = "AWS4-HMAC-SHA256"
        query["X-Amz-Credential"] = "\(credentials.accessKeyID)/\(scope(date))"
        query["X-Amz-Date"] = date.timestamp
        query["X-Amz-Expires"] = String(expires)
        query["X-Amz-SignedHeaders"] = Self.signedHeaderNames(headers)
        if let token = credentials.sessionToken { query["X-Amz-Security-Token"] = token.revealed }
        let parts = signature(method: request.method, path: request.path, query: query, headers: headers,
                              payload: PayloadHash.unsigned.value, date: date)
        let url = request.endpoint.origin + request.path + "?" + SignableRequest.canonicalQuery(query)
            + "&X-Amz-Signature=" + parts.signature
        headers["host"] = nil
        return PresignedRequest(method: request.method, url: url, headers: headers,
                                expiresAt: AmzDate(epochSeconds: date.epochSeconds + Int64(expires)),
                                canonicalRequest: parts.canonicalRequest, stringToSign: parts.stringToSign)
    }

    /// `DAY/REGION/SERVICE/aws4_request`.
    public func scope(_ date: AmzDate) -> String { "\(date.day)/\(region)/\(service)/aws4_request" }

    private func signature(method: String, path: String, query: [String: String], headers: [String: String],
                           payload: String, date: AmzDate)
        -> (canonicalRequest: String, stringToSign: String, signature: String, signedHeaders: String) {
        let signed = headers.filter { !Self.unsignedHeaders.contains($0.key) }
        let names = signed.keys.sorted { Array($0.utf8).lexicographicallyPrecedes($1.utf8) }
        let canonicalHeaders = names.map { "\($0):\(Self.trimAll(signed[$0]!))\n" }.joined()
        let signedHeaders = names.joined(separator: ";")
        let canonicalRequest = [method, path, SignableRequest.canonicalQuery(query), canonicalHeaders, signedHeaders, payload]
            .joined(separator: "\n")
        let stringToSign = ["AWS4-HMAC-SHA256", date.timestamp, scope(date), Self.hex(SHA256.hash(data: Data(canonicalRequest.utf8)))]
            .joined(separator: "\n")
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: signingKey(date)))
        return (canonicalRequest, stringToSign, signature, signedHeaders)
    }

    /// HMAC chained over the day, region, service and `aws4_request`, keyed first by `AWS4` + secret.
    func signingKey(_ date: AmzDate) -> SymmetricKey {
        var key = SymmetricKey(data: Data(("AWS4" + credentials.secretAccessKey.revealed).utf8))
        for part in [date.day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return key
    }

    static func signedHeaderNames(_ headers: [String: String]) -> String {
        headers.keys.filter { !unsignedHeaders.contains($0) }
            .sorted { Array($0.utf8).lexicographicallyPrecedes($1.utf8) }
            .joined(separator: ";")
    }

    /// Trims the value and collapses every inner run of white space to one space.
    static func trimAll(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\u{0B}" || $0 == "\u{0C}" })
            .joined(separator: " ")
    }

    static func hex<D: Sequence>(_ digest: D) -> String where D.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in digest { out.append(digits[Int(byte >> 4)]); out.append(digits[Int(byte & 0x0F)]) }
        return String(decoding: out, as: UTF8.self)
    }
}

/// The result of header signing. Its description leaves out the signature and the headers that
/// carry it or a session token.
public struct SigV4Signature: Sendable, CustomStringConvertible {
    public let canonicalRequest: String
    public let stringToSign: String
    /// 64 hex digits.
    public let signature: String
    /// `host;x-amz-content-sha256;x-amz-date`, …
    public let signedHeaders: String
    /// Every header to send, lower-case names, `authorization` included.
    public let headers: [String: String]

    public var description: String { "SigV4Signature(signedHeaders: \(signedHeaders), signature: <redacted>)" }
}

/// A presigned request: the URL (a bearer credential until `expiresAt`: hand it only to whoever
/// should do this one thing) and the headers it was signed with, which must be sent as they are.
/// Its description shows the URL with the signature and session token redacted.
public struct PresignedRequest: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let method: String
    public let url: String
    /// Signed headers besides `host` (lower-case names): send exactly these.
    public let headers: [String: String]
    public let expiresAt: AmzDate
    public let canonicalRequest: String
    public let stringToSign: String

    public var description: String { "\(method) \(Self.redacting(url))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["method": method, "url": Self.redacting(url)], displayStyle: .struct) }

    /// `url` with the values of `X-Amz-Signature`, `X-Amz-Security-Token` and `X-Amz-Credential`'s
    /// key id kept but the signature and token replaced by `REDACTED`.
    public static func redacting(_ url: String) -> String {
        guard let question = url.firstIndex(of: "?") else { return url }
        let query = url[url.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map { item -> String in
            let name = item.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            switch name.lowercased() {
            case "x-amz-signature", "x-amz-security-token": return name + "=REDACTED"
            default: return String(item)
            }
        }
        return String(url[..<question]) + "?" + query.joined(separator: "&")
    }
}
