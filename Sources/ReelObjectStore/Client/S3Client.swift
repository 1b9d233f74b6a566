import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// What an `S3Client` talks to and how. Every parameter has a default but the endpoint and bucket.
public struct S3ClientConfiguration: Sendable {
    /// The server, addressed path-style (`http://HOST:PORT/BUCKET/KEY`).
    public var endpoint: S3Endpoint
    /// The bucket every request of the client goes to.
    public var bucket: String
    /// The region in the signature's scope. S3-compatible servers that have no regions accept
    /// `us-east-1`.
    public var region: String
    public var retry: RetryPolicy
    /// How long one attempt may take, its body included.
    public var requestTimeout: Duration
    /// The size of each part of a multipart upload (the last may be smaller). S3 wants at least
    /// 5 MiB and at most 10,000 parts: 16 MiB parts reach 160 GB. Files no larger than one part
    /// are sent with one `PUT`.
    public var partSize: Int

    public static let minimumPartSize = 5 << 20

    public init(endpoint: S3Endpoint, bucket: String, region: String = "us-east-1", retry: RetryPolicy = RetryPolicy(),
                requestTimeout: Duration = .seconds(600), partSize: Int = 16 << 20) {
        self.endpoint = endpoint; self.bucket = bucket; self.region = region; self.retry = retry
        self.requestTimeout = requestTimeout; self.partSize = partSize
    }
}

/// A client for one bucket of an S3-compatible server, on AsyncHTTPClient: objects (put, ranged
/// get, head, delete, list), multipart uploads that resume, and presigned URLs.
///
/// Every request is signed with SigV4 in the `Authorization` header; a request that fails for a
/// passing reason (a broken connection, a 5xx, `SlowDown`) is signed afresh and tried again under
/// the `RetryPolicy`. Bodies of files stream from disk; downloads stream to disk. Uploads carry
/// `x-amz-checksum-sha256`, so the server itself refuses bytes that are not the ones hashed.
///
/// Logs at debug level, never a secret, a signature or a presigned URL: the logger sees the
/// operation, bucket, key, status and attempt, and AsyncHTTPClient is given no logger.
public final class S3Client: Sendable {
    public let configuration: S3ClientConfiguration
    let signer: SigV4Signer
    let http: HTTPClient
    let logger: Logger
    let now: @Sendable () -> Date
    let sleep: @Sendable (Duration) async throws -> Void
    /// Told the bytes of every object body received (`GetObject`: ranged reads, downloads,
    /// hashing reads): what the coordinator counts as `reel_object_store_bytes_read_total`.
    let bodyBytesRead: @Sendable (Int64) -> Void

    /// The process's HTTP client for S3, made on first use and never shut down (it lives as
    /// long as the process, as its connection pool should). No decompression (an object stored
    /// with `Content-Encoding` must come back byte for byte), no redirects (a signed request
    /// must not be replayed elsewhere), a 5 s connect timeout (within which AsyncHTTPClient
    /// itself keeps trying to connect: a server restarting is waited for, a dead one is reported
    /// after the retry policy's attempts of 5 s each).
    public static let sharedHTTPClient: HTTPClient = {
        var settings = HTTPClient.Configuration()
        settings.timeout.connect = .seconds(5)
        settings.decompression = .disabled
        settings.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: settings)
    }()

    /// - Parameters:
    ///   - httpClient: the HTTP client to send with; its owner shuts it down.
    ///   - now: the signing clock (tests sign "in the past" to check expiry).
    ///   - sleep: waits between retries.
    ///   - bodyBytesRead: told the size of every object body received.
    public init(configuration: S3ClientConfiguration, credentials: S3Credentials, httpClient: HTTPClient = S3Client.sharedHTTPClient,
                logger: Logger = Logger(label: "reel.s3"), now: @escaping @Sendable () -> Date = { Date() },
                sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
                bodyBytesRead: @escaping @Sendable (Int64) -> Void = { _ in }) {
        self.configuration = configuration
        self.signer = SigV4Signer(credentials: credentials, region: configuration.region)
        self.http = httpClient
        self.logger = logger
        self.now = now
        self.sleep = sleep
        self.bodyBytesRead = bodyBytesRead
    }

    // MARK: Requests

    enum Body: Sendable {
        case empty
        /// In memory, with its SHA-256 (hex).
        case bytes(ByteBuffer, sha256: String)
        /// A range of a local file, streamed; its SHA-256 (hex) when known ahead.
        case file(LocalFile, Range<Int64>, sha256: String?)
    }

    /// One S3 API call, before signing.
    struct Call: Sendable {
        /// The S3 operation's name, for logs and errors (`PutObject`).
        var operation: String
        var method: HTTPMethod
        /// `nil` for bucket-level calls (`ListObjectsV2`).
        var key: String?
        var query: [String: String] = [:]
        var headers: [String: String] = [:]
        var body: Body = .empty

        /// `bucket/key` or `bucket`, for messages.
        func target(_ bucket: String) -> String { key.map { "\(bucket)/\($0)" } ?? bucket }
    }

    /// Sends `call`, retrying under the policy, and hands a 2xx response to `handle` (which may
    /// run again on a later attempt if it fails for a passing reason). Other statuses become
    /// `ObjectStoreError`s with the server's S3 code and message.
    /// `amend` changes the call before each attempt is signed (a resumed download's `Range`).
    func send<T: Sendable>(_ call: Call, amend: @Sendable (inout Call) -> Void = { _ in },
                           _ handle: @Sendable (HTTPClientResponse) async throws -> T) async throws -> T {
        let policy = configuration.retry
        var attempt = 0
        while true {
            attempt += 1
            let started = ContinuousClock.now
            do {
                var call = call
                amend(&call)
                let response = try await http.execute(try prepare(call), deadline: .now() + TimeAmount(configuration.requestTimeout))
                logger.debug("s3 request", metadata: [
                    "operation": "\(call.operation)", "target": "\(call.target(configuration.bucket))",
                    "status": "\(response.status.code)", "attempt": "\(attempt)", "elapsed": "\(ContinuousClock.now - started)"])
                guard (200..<300).contains(Int(response.status.code)) else { throw try await serverError(call, response) }
                return try await handle(response)
            } catch {
                let failure = classify(error, call)
                guard attempt < policy.maxAttempts, failure.retryable, !Task.isCancelled else { throw failure.error }
                let delay = policy.delay(afterAttempt: attempt, random: Double.random(in: 0..<1))
                logger.warning("s3 request failed; retrying", metadata: [
                    "operation": "\(call.operation)", "target": "\(call.target(configuration.bucket))", "attempt": "\(attempt)",
                    "retryIn": "\(delay)", "error": "\(failure.error)"])
                try await sleep(delay)
            }
        }
    }

    /// The signed AsyncHTTPClient request for `call`, signed now.
    func prepare(_ call: Call) throws -> HTTPClientRequest {
        let bucket = configuration.bucket
        let path = call.key.map { SigV4Encoding.objectPath(bucket: bucket, key: $0) } ?? SigV4Encoding.bucketPath(bucket)
        let signable = SignableRequest(method: call.method.rawValue, endpoint: configuration.endpoint, path: path,
                                       query: call.query, headers: call.headers)
        let payload: PayloadHash
        switch call.body {
        case .empty: payload = .empty
        case .bytes(_, let sha256): payload = .sha256(sha256)
        case .file(_, _, let sha256): payload = sha256.map(PayloadHash.sha256) ?? .unsigned
        }
        let signed = signer.sign(signable, payload: payload, at: AmzDate(now()))
        var request = HTTPClientRequest(url: signable.url)
        request.method = call.method
        for (name, value) in signed.headers { request.headers.replaceOrAdd(name: name, value: value) }
        switch call.body {
        case .empty:
            if call.method == .PUT || call.method == .POST { request.headers.replaceOrAdd(name: "content-length", value: "0") }
        case .bytes(let buffer, _):
            request.body = .bytes(buffer)
        case .file(let file, let range, let sha256):
            request.body = .stream(FileBodyStream(file: file, range: range, expectedSHA256: sha256), length: .known(range.count))
        }
        return request
    }

    /// An error answer as an `ObjectStoreError`: the S3 code and message from its XML body (HEAD
    /// answers have none: the status alone says what happened).
    func serverError(_ call: Call, _ response: HTTPClientResponse) async throws -> ObjectStoreError {
        let body = (try? await response.body.collect(upTo: 1 << 16)).map { Array($0.readableBytesView) } ?? []
        let xml = S3XMLElement.parse(body)
        return Self.error(status: Int(response.status.code), xml: xml?.name == "Error" ? xml : nil,
                          call: call, bucket: configuration.bucket)
    }

    static func error(status: Int, xml: S3XMLElement?, call: Call, bucket: String) -> ObjectStoreError {
        let code: ObjectStoreError.Code = status == 404 ? .notFound : status == 403 ? .accessDenied : .server
        let s3Code = xml?.value("Code")
        var message = "\(call.operation) \(call.target(bucket)) failed"
        if let s3Code { message += ": \(s3Code)" }
        if let text = xml?.value("Message"), !text.isEmpty { message += ": \(text)" }
        if s3Code == nil && xml == nil {
            message += ": " + (status == 404 ? "no such object" : status == 403 ? "access denied (wrong credentials, or an expired or tampered signature)"
                               : "HTTP \(status)")
        }
        return ObjectStoreError(code, message, status: status, s3Code: s3Code)
    }

    /// Whether `error` from an attempt is worth another, and what to report if it is the last.
    func classify(_ error: Error, _ call: Call) -> (error: Error, retryable: Bool) {
        switch error {
        case let error as ObjectStoreError:
            return (error, error.status.map { RetryPolicy.isRetryable(status: $0, s3Code: error.s3Code) } ?? false)
        case is CancellationError:
            return (error, false)
        default:
            // AsyncHTTPClient and NIO errors: refused, reset or timed-out connections. They name
            // hosts and ports, never the request's headers.
            return (ObjectStoreError(.transport, "\(call.operation) \(call.target(configuration.bucket)): cannot complete the request "
                                     + "to \(configuration.endpoint): \(error)"), true)
        }
    }

    // MARK: Helpers

    /// Base64 of the digest whose hex is `hex` (the form of `x-amz-checksum-sha256`).
    static func base64(hex: String) throws -> String {
        guard hex.utf8.count == 64 else { throw ObjectStoreError(.invalidArgument, "a SHA-256 is 64 hex digits, not \(hex.utf8.count) characters") }
        var bytes: [UInt8] = []
        var iterator = hex.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            guard let h = nibble(high), let l = nibble(low) else {
                throw ObjectStoreError(.invalidArgument, "a SHA-256 is 64 hex digits; \(hex.debugDescription) is not")
            }
            bytes.append(h << 4 | l)
        }
        return Data(bytes).base64EncodedString()
    }

    /// Hex of a base64 SHA-256 (the server's `x-amz-checksum-sha256`); `nil` for anything that
    /// is not one (a multipart object's composite checksum ends in `-N`).
    static func hex(base64: String) -> String? {
        guard let data = Data(base64Encoded: base64), data.count == 32 else { return nil }
        return SigV4Signer.hex(data)
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    static func sha256Hex(_ buffer: ByteBuffer) -> String {
        buffer.withUnsafeReadableBytes { SigV4Signer.hex(SHA256.hash(data: $0)) }
    }

    /// Reads a whole XML answer (bounded) and parses it.
    func xml(_ response: HTTPClientResponse, _ call: Call) async throws -> S3XMLElement {
        let body = try await response.body.collect(upTo: 16 << 20)
        guard let xml = S3XMLElement.parse(Array(body.readableBytesView)) else {
            throw ObjectStoreError(.protocolViolation, "\(call.operation) \(call.target(configuration.bucket)): the server's answer is not XML")
        }
        // S3 may answer 200 and put an error in the body (CompleteMultipartUpload does).
        if xml.name == "Error" {
            throw Self.error(status: Int(response.status.code), xml: xml, call: call, bucket: configuration.bucket)
        }
        return xml
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
