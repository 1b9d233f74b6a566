import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1

/// What the server says about a stored object (`HeadObject`).
public struct ObjectInfo: Hashable, Sendable {
    public var key: String
    public var size: Int64
    /// As the server sent it, quotes included (`"9b2cf535f27731c974343645a3985328"`).
    public var etag: String
    /// The object's SHA-256 (hex) if the server keeps a full-object checksum for it (a single
    /// `PUT` with `x-amz-checksum-sha256`); `nil` for multipart objects, whose checksum is a
    /// checksum of part checksums, and for servers that keep none.
    public var sha256: String?
    public var lastModified: Date?
}

/// The answer to a `PUT`.
public struct PutObjectResult: Hashable, Sendable {
    public var etag: String
    /// Whether the server confirmed the SHA-256 it checked the body against.
    public var serverVerifiedSHA256: Bool
}

/// Bytes of an object read into memory, and the object's whole size (from `Content-Range`).
public struct ObjectBytes: Sendable {
    public var bytes: ByteBuffer
    public var objectSize: Int64
    public var etag: String?
}

extension S3Client {
    /// Stores `bytes` under `key` with one `PUT`. The body is signed by its SHA-256 and carries
    /// `x-amz-checksum-sha256`: the server refuses it if a byte differs.
    @discardableResult
    public func putObject(key: String, bytes: [UInt8], contentType: String? = nil) async throws -> PutObjectResult {
        var buffer = ByteBufferAllocator().buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        let sha256 = Self.sha256Hex(buffer)
        return try await put(key: key, body: .bytes(buffer, sha256: sha256), sha256: sha256, contentType: contentType)
    }

    /// Stores the file at `path` under `key` with one `PUT`, streamed from disk.
    /// - Parameter sha256: the file's SHA-256 (hex) if known (content-addressed files are named
    ///   by it); else the file is read once to hash it before it is sent. Either way, the bytes
    ///   sent are hashed again as they stream and must match.
    @discardableResult
    public func putObject(key: String, file path: String, sha256: String? = nil, contentType: String? = nil) async throws -> PutObjectResult {
        let file = try LocalFile.openForReading(path)
        let size = try file.size
        let digest: String
        if let sha256 { digest = sha256 } else { digest = try await Self.sha256(of: file, range: 0..<size) }
        return try await put(key: key, body: .file(file, 0..<size, sha256: digest), sha256: digest, contentType: contentType)
    }

    private func put(key: String, body: Body, sha256: String, contentType: String?) async throws -> PutObjectResult {
        var headers = ["x-amz-checksum-sha256": try Self.base64(hex: sha256)]
        if let contentType { headers["content-type"] = contentType }
        let call = Call(operation: "PutObject", method: .PUT, key: key, headers: headers, body: body)
        return try await send(call) { response in
            let echoed = response.headers.first(name: "x-amz-checksum-sha256")
            if let echoed, Self.hex(base64: echoed) != sha256 {
                throw ObjectStoreError(.integrity, "PutObject \(call.target(self.configuration.bucket)): the server stored SHA-256 "
                                       + "\(Self.hex(base64: echoed) ?? echoed), not \(sha256)")
            }
            return PutObjectResult(etag: response.headers.first(name: "etag") ?? "", serverVerifiedSHA256: echoed != nil)
        }
    }

    /// The object's size, ETag and SHA-256 (when the server keeps one); `nil` if there is no such object.
    public func headObject(key: String) async throws -> ObjectInfo? {
        let call = Call(operation: "HeadObject", method: .HEAD, key: key, headers: ["x-amz-checksum-mode": "ENABLED"])
        do {
            return try await send(call) { response in
                guard let length = response.headers.first(name: "content-length").flatMap(Int64.init) else {
                    throw ObjectStoreError(.protocolViolation, "HeadObject \(call.target(self.configuration.bucket)): no Content-Length in the answer")
                }
                return ObjectInfo(key: key, size: length, etag: response.headers.first(name: "etag") ?? "",
                                  sha256: response.headers.first(name: "x-amz-checksum-sha256").flatMap { Self.hex(base64: $0) },
                                  lastModified: response.headers.first(name: "last-modified").flatMap(Self.httpDate))
            }
        } catch let error as ObjectStoreError where error.code == .notFound {
            return nil
        }
    }

    /// Reads the object, or the bytes `range` of it, into memory.
    /// - Parameter maxBytes: the most this will hold; a larger answer is an error (use
    ///   `download` for whole large objects).
    /// - Throws: `.notFound`; `.server` with S3 code `InvalidRange` for a range starting past the end.
    public func getObject(key: String, range: Range<Int64>? = nil, maxBytes: Int = 64 << 20) async throws -> ObjectBytes {
        var headers: [String: String] = [:]
        if let range {
            guard !range.isEmpty, range.lowerBound >= 0 else {
                throw ObjectStoreError(.invalidArgument, "GetObject \(configuration.bucket)/\(key): the range \(range) is empty or negative")
            }
            headers["range"] = "bytes=\(range.lowerBound)-\(range.upperBound - 1)"
        }
        let call = Call(operation: "GetObject", method: .GET, key: key, headers: headers)
        return try await send(call) { response in
            var body = try await response.body.collect(upTo: maxBytes)
            self.bodyBytesRead(Int64(body.readableBytes))
            let etag = response.headers.first(name: "etag")
            if response.status == .partialContent {
                guard let total = response.headers.first(name: "content-range").flatMap(Self.contentRangeTotal) else {
                    throw ObjectStoreError(.protocolViolation, "GetObject \(call.target(self.configuration.bucket)): a partial answer without Content-Range")
                }
                return ObjectBytes(bytes: body, objectSize: total, etag: etag)
            }
            let total = Int64(body.readableBytes)
            if let range {
                // The server sent the whole object: keep the part asked for.
                let start = Int(min(range.lowerBound, total)), end = Int(min(range.upperBound, total))
                body = body.getSlice(at: body.readerIndex + start, length: end - start) ?? ByteBuffer()
            }
            return ObjectBytes(bytes: body, objectSize: total, etag: etag)
        }
    }

    /// Downloads the object to `path`, streamed to disk: written to a temporary name beside it,
    /// checked (size, and SHA-256 when `expectedSHA256` is given), flushed, then renamed, so
    /// `path` holds the whole verified object or is not touched. A connection that drops
    /// mid-body is resumed with a `Range` request (`VerifiedDownload`).
    /// - Parameter assetName: hash as assets are named (`AssetAddress`: the tree hash past
    ///   16 MiB) instead of plain SHA-256; `expectedSHA256` and the result are then that name.
    /// - Returns: the object's size and SHA-256 (hex), computed from the bytes received.
    @discardableResult
    public func download(key: String, to path: String, expectedSHA256: String? = nil,
                         assetName: Bool = false) async throws -> (size: Int64, sha256: String) {
        let call = Call(operation: "GetObject", method: .GET, key: key)
        let download = VerifiedDownload(to: path, what: "GetObject \(call.target(configuration.bucket))", assetName: assetName)
        try await send(call, amend: { call in
            if let range = download.rangeHeader { call.headers["range"] = range }
        }) { response in
            try await download.receive(response)
        }
        let got = try await download.commit(to: path, expectedSHA256: expectedSHA256)
        bodyBytesRead(got.size)
        return got
    }

    /// Deletes the object. Deleting an object that does not exist succeeds (as S3 answers it).
    public func deleteObject(key: String) async throws {
        do {
            try await send(Call(operation: "DeleteObject", method: .DELETE, key: key)) { _ in }
        } catch let error as ObjectStoreError where error.code == .notFound && error.s3Code != "NoSuchBucket" {
            return
        }
    }

    // MARK: Parsing

    /// The total of `bytes 0-9/1234`; `nil` when unknown (`*`) or malformed.
    static func contentRangeTotal(_ header: String) -> Int64? {
        guard let slash = header.lastIndex(of: "/") else { return nil }
        return Int64(header[header.index(after: slash)...].trimmingCharacters(in: .whitespaces))
    }

    /// An HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`).
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }

    /// An ISO 8601 date as S3's XML has it (`2026-11-25T18:48:30.000Z`, fraction optional).
    static func isoDate(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    /// SHA-256 (hex) of a range of `file`, read in 1 MiB chunks.
    static func sha256(of file: LocalFile, range: Range<Int64>) async throws -> String {
        var hasher = SHA256()
        var offset = range.lowerBound
        while offset < range.upperBound {
            let count = Int(min(Int64(FileBodyStream.chunkSize), range.upperBound - offset))
            let chunk = try await file.read(offset: offset, count: count)
            guard chunk.readableBytes == count else {
                throw ObjectStoreError(.localFile, "\(file.path) is shorter than \(range.upperBound) bytes")
            }
            chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            offset += Int64(count)
        }
        return SigV4Signer.hex(hasher.finalize())
    }
}

extension S3Client {
    /// Reads the whole object, streamed, and hashes it without keeping it: what the coordinator
    /// does to learn a multipart object's SHA-256, which S3 reports only as a checksum of its
    /// parts' checksums.
    /// - Returns: the bytes read and their SHA-256 (hex).
    public func sha256(ofObject key: String) async throws -> (size: Int64, sha256: String) {
        let call = Call(operation: "GetObject", method: .GET, key: key)
        return try await send(call) { response in
            var hasher = SHA256()
            var size: Int64 = 0
            for try await chunk in response.body {
                chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
                size += Int64(chunk.readableBytes)
            }
            self.bodyBytesRead(size)
            if let length = response.headers.first(name: "content-length").flatMap(Int64.init), length != size {
                throw ObjectStoreError(.integrity, "GetObject \(call.target(self.configuration.bucket)): received \(size) of \(length) bytes")
            }
            return (size, SigV4Signer.hex(hasher.finalize()))
        }
    }
}
