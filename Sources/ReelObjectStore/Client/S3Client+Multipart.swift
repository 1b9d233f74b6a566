import Crypto
import Foundation
import NIOCore

/// A part of a multipart upload, as uploaded or as `ListParts` reports it.
public struct UploadedPart: Hashable, Sendable {
    public var number: Int
    public var etag: String
    public var size: Int64
    /// The part's SHA-256 (hex), when known (from our upload, or from a server that lists it).
    public var sha256: String?

    public init(number: Int, etag: String, size: Int64, sha256: String?) {
        self.number = number; self.etag = etag; self.size = size; self.sha256 = sha256
    }
}

/// A multipart upload in progress (`ListMultipartUploads`).
public struct MultipartUploadSummary: Hashable, Sendable {
    public var key: String
    public var uploadID: String
    public var initiated: Date?
}

/// How a file upload ended.
public struct FileUploadResult: Hashable, Sendable {
    public var key: String
    public var size: Int64
    /// The file's SHA-256 (hex), from the bytes read while uploading.
    public var sha256: String
    public var etag: String
    /// The multipart upload it went through (`nil`: one `PUT`).
    public var uploadID: String?
    /// Parts already on the server that a resumed upload kept instead of sending again.
    public var partsReused: Int = 0
    public var partsUploaded: Int = 0
}

extension S3Client {
    /// Starts a multipart upload of `key` whose parts carry SHA-256 checksums.
    /// - Returns: the upload id, which every later call of the upload names.
    public func createMultipartUpload(key: String, contentType: String? = nil) async throws -> String {
        var headers = ["x-amz-checksum-algorithm": "SHA256"]
        if let contentType { headers["content-type"] = contentType }
        let call = Call(operation: "CreateMultipartUpload", method: .POST, key: key, query: ["uploads": ""], headers: headers)
        return try await send(call) { response in
            guard let id = try await self.xml(response, call).value("UploadId"), !id.isEmpty else {
                throw ObjectStoreError(.protocolViolation, "CreateMultipartUpload \(call.target(self.configuration.bucket)): no UploadId in the answer")
            }
            return id
        }
    }

    /// Uploads part `number` (1...10000) of an upload. The part is signed by its SHA-256 and
    /// carries `x-amz-checksum-sha256`, so the server refuses it if a byte differs.
    public func uploadPart(key: String, uploadID: String, number: Int, bytes: ByteBuffer) async throws -> UploadedPart {
        guard (1...10_000).contains(number) else {
            throw ObjectStoreError(.invalidArgument, "UploadPart \(configuration.bucket)/\(key): part numbers are 1 to 10000, not \(number)")
        }
        let sha256 = Self.sha256Hex(bytes)
        let call = Call(operation: "UploadPart", method: .PUT, key: key, query: ["partNumber": String(number), "uploadId": uploadID],
                        headers: ["x-amz-checksum-sha256": try Self.base64(hex: sha256)], body: .bytes(bytes, sha256: sha256))
        return try await send(call) { response in
            guard let etag = response.headers.first(name: "etag"), !etag.isEmpty else {
                throw ObjectStoreError(.protocolViolation, "UploadPart \(call.target(self.configuration.bucket)) part \(number): no ETag in the answer")
            }
            if let echoed = response.headers.first(name: "x-amz-checksum-sha256"), Self.hex(base64: echoed) != sha256 {
                throw ObjectStoreError(.integrity, "UploadPart \(call.target(self.configuration.bucket)) part \(number): the server stored "
                                       + "another SHA-256 than the part's \(sha256)")
            }
            return UploadedPart(number: number, etag: etag, size: Int64(bytes.readableBytes), sha256: sha256)
        }
    }

    /// The parts the server holds for an upload, by part number (every page).
    /// - Throws: `.notFound` (S3 code `NoSuchUpload`) when the upload was completed or aborted.
    public func listParts(key: String, uploadID: String) async throws -> [UploadedPart] {
        var parts: [UploadedPart] = []
        var marker: String?
        repeat {
            var query = ["uploadId": uploadID, "max-parts": "1000"]
            if let marker { query["part-number-marker"] = marker }
            let call = Call(operation: "ListParts", method: .GET, key: key, query: query)
            let page: ([UploadedPart], String?) = try await send(call) { response in
                let xml = try await self.xml(response, call)
                let parts = try xml.all("Part").map { part -> UploadedPart in
                    guard let number = part.value("PartNumber").flatMap(Int.init), let size = part.value("Size").flatMap(Int64.init),
                          let etag = part.value("ETag") else {
                        throw ObjectStoreError(.protocolViolation, "ListParts \(call.target(self.configuration.bucket)): a part without number, size or ETag")
                    }
                    return UploadedPart(number: number, etag: etag, size: size, sha256: part.value("ChecksumSHA256").flatMap { Self.hex(base64: $0) })
                }
                let truncated = xml.value("IsTruncated") == "true"
                return (parts, truncated ? xml.value("NextPartNumberMarker") : nil)
            }
            parts += page.0
            // A server that says "truncated" but does not move the marker would loop forever.
            marker = page.1 == marker ? nil : page.1
        } while marker != nil
        return parts.sorted { $0.number < $1.number }
    }

    /// Completes an upload from its parts, in part-number order.
    /// - Returns: the object's ETag.
    @discardableResult
    public func completeMultipartUpload(key: String, uploadID: String, parts: [UploadedPart]) async throws -> String {
        var body = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        for part in parts.sorted(by: { $0.number < $1.number }) {
            body += "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(S3XMLElement.escape(part.etag))</ETag>"
            if let sha256 = part.sha256 { body += "<ChecksumSHA256>\(try Self.base64(hex: sha256))</ChecksumSHA256>" }
            body += "</Part>"
        }
        body += "</CompleteMultipartUpload>"
        let buffer = ByteBuffer(string: body)
        let call = Call(operation: "CompleteMultipartUpload", method: .POST, key: key, query: ["uploadId": uploadID],
                        headers: ["content-type": "application/xml"], body: .bytes(buffer, sha256: Self.sha256Hex(buffer)))
        return try await send(call) { response in try await self.xml(response, call).value("ETag") ?? "" }
    }

    /// Abandons an upload and frees its parts. An upload that no longer exists is not an error.
    public func abortMultipartUpload(key: String, uploadID: String) async throws {
        do {
            try await send(Call(operation: "AbortMultipartUpload", method: .DELETE, key: key, query: ["uploadId": uploadID])) { _ in }
        } catch let error as ObjectStoreError where error.code == .notFound && error.s3Code != "NoSuchBucket" {
            return
        }
    }

    /// Uploads in progress whose keys start with `prefix` (every page): for resuming an upload
    /// whose id was lost, and for sweeping abandoned ones.
    public func listMultipartUploads(prefix: String) async throws -> [MultipartUploadSummary] {
        var uploads: [MultipartUploadSummary] = []
        var markers: (key: String, upload: String)?
        repeat {
            var query = ["uploads": "", "prefix": prefix]
            if let markers { query["key-marker"] = markers.key; query["upload-id-marker"] = markers.upload }
            let call = Call(operation: "ListMultipartUploads", method: .GET, key: nil, query: query)
            let page: ([MultipartUploadSummary], (String, String)?) = try await send(call) { response in
                let xml = try await self.xml(response, call)
                let uploads = xml.all("Upload").compactMap { upload -> MultipartUploadSummary? in
                    guard let key = upload.value("Key"), let id = upload.value("UploadId") else { return nil }
                    return MultipartUploadSummary(key: key, uploadID: id, initiated: upload.value("Initiated").flatMap(Self.isoDate))
                }
                guard xml.value("IsTruncated") == "true", let key = xml.value("NextKeyMarker"), let id = xml.value("NextUploadIdMarker") else {
                    return (uploads, nil)
                }
                return (uploads, (key, id))
            }
            uploads += page.0
            markers = page.1.flatMap { next in markers.map { $0 == next } == true ? nil : next }
        } while markers != nil
        return uploads
    }

    /// Uploads the file at `path` to `key`: one streamed `PUT` if it fits in one part, else a
    /// multipart upload of `configuration.partSize` parts, one part in memory at a time.
    ///
    /// Resuming: pass the `uploadID` of an upload that was interrupted (the caller keeps it from
    /// `onUploadCreated`, or finds it with `listMultipartUploads`). The parts the server already
    /// holds are listed and each kept if its size and content match the file's bytes there (its
    /// listed SHA-256, or else its ETag as the MD5 that S3 makes it for unencrypted parts); the
    /// others are sent again.
    ///
    /// - Parameters:
    ///   - sha256: the file's expected SHA-256 (hex). Checked against the bytes read before the
    ///     upload is completed; on a mismatch the upload is aborted and nothing is stored.
    ///   - onUploadCreated: called with a new upload's id before its first part is sent, so the
    ///     caller can record it for resuming.
    public func uploadFile(at path: String, key: String, sha256: String? = nil, contentType: String? = nil,
                           resuming uploadID: String? = nil,
                           onUploadCreated: @Sendable (String) async throws -> Void = { _ in }) async throws -> FileUploadResult {
        let file = try LocalFile.openForReading(path)
        let size = try file.size
        let partSize = Int64(max(configuration.partSize, Self.minimumPartSizeForCount(size)))
        if uploadID == nil && size <= partSize {
            let digest = try await Self.sha256(of: file, range: 0..<size)
            if let sha256, sha256 != digest {
                throw ObjectStoreError(.integrity, "\(path) has SHA-256 \(digest), not the expected \(sha256); nothing uploaded")
            }
            let put = try await putObject(key: key, file: path, sha256: digest, contentType: contentType)
            return FileUploadResult(key: key, size: size, sha256: digest, etag: put.etag, uploadID: nil, partsUploaded: 1)
        }

        guard partSize >= Int64(S3ClientConfiguration.minimumPartSize) else {
            throw ObjectStoreError(.invalidArgument, "the part size \(partSize) is below S3's minimum of 5 MiB "
                                   + "(\(S3ClientConfiguration.minimumPartSize) bytes) for every part but the last")
        }
        let id: String
        var existing: [Int: UploadedPart] = [:]
        if let uploadID {
            id = uploadID
            for part in try await listParts(key: key, uploadID: uploadID) { existing[part.number] = part }
        } else {
            id = try await createMultipartUpload(key: key, contentType: contentType)
            try await onUploadCreated(id)
        }

        var whole = SHA256()
        var parts: [UploadedPart] = []
        var reused = 0, uploaded = 0
        let count = Int((size + partSize - 1) / partSize)
        for number in 1...max(count, 1) {
            let start = Int64(number - 1) * partSize
            let length = Int(min(partSize, size - start))
            let bytes = try await file.read(offset: start, count: length)
            guard bytes.readableBytes == length else {
                throw ObjectStoreError(.localFile, "\(path) became shorter than \(size) bytes during the upload")
            }
            bytes.withUnsafeReadableBytes { whole.update(bufferPointer: $0) }
            if let held = existing[number], Self.matches(held, bytes) {
                parts.append(UploadedPart(number: number, etag: held.etag, size: held.size, sha256: Self.sha256Hex(bytes)))
                reused += 1
                continue
            }
            parts.append(try await uploadPart(key: key, uploadID: id, number: number, bytes: bytes))
            uploaded += 1
        }
        let digest = SigV4Signer.hex(whole.finalize())
        if let sha256, sha256 != digest {
            try? await abortMultipartUpload(key: key, uploadID: id)
            throw ObjectStoreError(.integrity, "\(path) has SHA-256 \(digest), not the expected \(sha256); the upload was aborted")
        }
        let etag = try await completeMultipartUpload(key: key, uploadID: id, parts: parts)
        guard let stored = try await headObject(key: key), stored.size == size else {
            throw ObjectStoreError(.integrity, "CompleteMultipartUpload \(configuration.bucket)/\(key): the stored object is not \(size) bytes")
        }
        return FileUploadResult(key: key, size: size, sha256: digest, etag: etag, uploadID: id, partsReused: reused, partsUploaded: uploaded)
    }

    /// Whether a part the server holds has exactly `bytes`: by its SHA-256 if listed, else by its
    /// ETag when that is an MD5 (32 hex digits, as S3 makes it for unencrypted parts).
    static func matches(_ part: UploadedPart, _ bytes: ByteBuffer) -> Bool {
        guard part.size == Int64(bytes.readableBytes) else { return false }
        if let sha256 = part.sha256 { return sha256 == sha256Hex(bytes) }
        let etag = part.etag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        guard etag.utf8.count == 32 else { return false }
        let md5 = bytes.withUnsafeReadableBytes { SigV4Signer.hex(Insecure.MD5.hash(data: $0)) }
        return etag.lowercased() == md5
    }

    /// The smallest part size that keeps a file of `size` bytes within 10,000 parts.
    static func minimumPartSizeForCount(_ size: Int64) -> Int {
        Int((size + 9_999) / 10_000)
    }
}
