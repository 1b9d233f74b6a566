import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1

/// Moves bytes through presigned URLs (proto/PROTOCOL.md §4.5) for those who hold no
/// credentials: agents reading source ranges and uploading results, clients uploading assets and
/// downloading outputs. Retries what fails for a passing reason (a broken connection, a 5xx,
/// `SlowDown`) under the `RetryPolicy`; a 403 (an expired or changed URL) is thrown at once as
/// `.accessDenied`, for the caller to ask for a new URL.
///
/// A presigned URL is a bearer credential: errors name the URL without its query, and nothing
/// here logs.
public struct PresignedTransfer: Sendable {
    let http: HTTPClient
    public var retry: RetryPolicy
    /// How long one attempt may take, its body included.
    public var requestTimeout: Duration

    public init(httpClient: HTTPClient = S3Client.sharedHTTPClient, retry: RetryPolicy = RetryPolicy(),
                requestTimeout: Duration = .seconds(600)) {
        self.http = httpClient; self.retry = retry; self.requestTimeout = requestTimeout
    }

    /// The bytes `range` of the object through a presigned `GET` (fewer only at its end).
    public func get(url: String, headers: [String: String] = [:], range: Range<Int64>) async throws -> [UInt8] {
        guard !range.isEmpty, range.lowerBound >= 0 else {
            throw ObjectStoreError(.invalidArgument, "GET \(Self.redacted(url)): the range \(range) is empty or negative")
        }
        var all = headers
        all["range"] = "bytes=\(range.lowerBound)-\(range.upperBound - 1)"
        return try await send("GET", url, all, body: nil) { response in
            var body = try await response.body.collect(upTo: max(range.count, 1) + (1 << 16))
            if response.status != .partialContent {
                // The whole object came back: keep the part asked for.
                let total = Int64(body.readableBytes)
                let start = Int(min(range.lowerBound, total)), end = Int(min(range.upperBound, total))
                body = body.getSlice(at: body.readerIndex + start, length: end - start) ?? ByteBuffer()
            }
            return Array(body.readableBytesView)
        }
    }

    /// Streams the file at `path` through a presigned `PUT` (sending `headers` as signed; a PUT
    /// bound to `x-amz-checksum-sha256` is refused by the store unless the bytes hash to it).
    public func put(url: String, headers: [String: String], file path: String) async throws {
        try await send("PUT", url, headers, body: path) { _ in }
    }

    /// Downloads the whole object through a presigned `GET` to `path`: written aside, checked
    /// (size, and SHA-256 when given), then renamed into place. A connection that drops
    /// mid-body is resumed from the bytes held with a `Range` request (within the retry
    /// policy's attempts), the hash continuing over them (`VerifiedDownload`).
    /// - Returns: its size and SHA-256 (hex).
    @discardableResult
    public func download(url: String, headers: [String: String] = [:], to path: String,
                         expectedSHA256: String? = nil) async throws -> (size: Int64, sha256: String) {
        try await download(url: url, headers: headers, to: path, expectedSHA256: expectedSHA256, report: nil)
    }

    /// `download`, telling `report` how many attempts resumed with a `Range` request and how
    /// many started again from byte 0 (a server that answered `200` to one).
    @discardableResult
    public func download(url: String, headers: [String: String] = [:], to path: String, expectedSHA256: String? = nil,
                         report: (@Sendable (_ resumes: Int, _ restarts: Int) -> Void)?) async throws -> (size: Int64, sha256: String) {
        let download = VerifiedDownload(to: path, what: "GET \(Self.redacted(url))")
        defer { report?(download.resumes, download.restarts) }
        try await send("GET", url, headers, body: nil, range: { download.rangeHeader }) { response in
            try await download.receive(response)
        }
        return try await download.commit(to: path, expectedSHA256: expectedSHA256)
    }

    /// `url` without its query (where the signature is): what errors may show.
    public static func redacted(_ url: String) -> String { url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url }

    /// Sends `bytes` through a presigned `PUT` (a part of a multipart upload).
    public func put(url: String, headers: [String: String], bytes: ByteBuffer) async throws {
        try await send("PUT", url, headers, body: nil, bytes: bytes) { _ in }
    }

    /// - Parameter range: the `Range` header of each attempt, asked anew before each (a
    ///   resumed download's).
    private func send<T: Sendable>(_ method: String, _ url: String, _ headers: [String: String], body path: String?,
                                   bytes: ByteBuffer? = nil, range: @Sendable () -> String? = { nil },
                                   _ handle: @Sendable (HTTPClientResponse) async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                var request = HTTPClientRequest(url: url)
                request.method = HTTPMethod(rawValue: method)
                for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
                if let range = range() { request.headers.replaceOrAdd(name: "range", value: range) }
                if let path {
                    let file = try LocalFile.openForReading(path)
                    let size = try file.size
                    request.body = .stream(FileBodyStream(file: file, range: 0..<size, expectedSHA256: nil), length: .known(size))
                } else if let bytes {
                    request.body = .bytes(bytes)
                } else if method == "PUT" {
                    request.headers.replaceOrAdd(name: "content-length", value: "0")
                }
                let response = try await http.execute(request, deadline: .now() + TimeAmount(requestTimeout))
                guard (200..<300).contains(Int(response.status.code)) else {
                    let bytes = (try? await response.body.collect(upTo: 1 << 16)).map { Array($0.readableBytesView) } ?? []
                    let xml = S3XMLElement.parse(bytes)
                    throw Self.error(method, url, status: Int(response.status.code), xml: xml?.name == "Error" ? xml : nil)
                }
                return try await handle(response)
            } catch {
                let retryable: Bool, failure: Error
                switch error {
                case let error as ObjectStoreError:
                    failure = error
                    retryable = error.status.map { RetryPolicy.isRetryable(status: $0, s3Code: error.s3Code) } ?? false
                case is CancellationError:
                    throw error
                default:
                    failure = ObjectStoreError(.transport, "\(method) \(Self.redacted(url)): cannot complete the request: \(error)")
                    retryable = true
                }
                guard attempt < retry.maxAttempts, retryable, !Task.isCancelled else { throw failure }
                try await Task.sleep(for: retry.delay(afterAttempt: attempt, random: Double.random(in: 0..<1)))
            }
        }
    }

    static func error(_ method: String, _ url: String, status: Int, xml: S3XMLElement?) -> ObjectStoreError {
        let code: ObjectStoreError.Code = status == 404 ? .notFound : status == 403 ? .accessDenied : .server
        let s3Code = xml?.value("Code")
        var message = "\(method) \(redacted(url)) failed"
        if let s3Code { message += ": \(s3Code)" }
        if let text = xml?.value("Message"), !text.isEmpty { message += ": \(text)" }
        if s3Code == nil { message += ": HTTP \(status)" }
        return ObjectStoreError(code, message, status: status, s3Code: s3Code)
    }
}
