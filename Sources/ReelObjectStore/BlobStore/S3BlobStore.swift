import Crypto
import Foundation

/// Where in S3 the farm keeps its bytes: `s3://BUCKET/PREFIX` (the prefix may be empty).
public struct ObjectStoreLocation: Hashable, Sendable, CustomStringConvertible {
    public let bucket: String
    /// No leading or trailing slash; empty for the bucket's root.
    public let prefix: String

    /// Parses `s3://BUCKET` or `s3://BUCKET/PREFIX`.
    /// - Throws: `.invalidArgument` saying what to fix.
    public init(_ text: String) throws {
        guard text.hasPrefix("s3://") else {
            throw ObjectStoreError(.invalidArgument, "\(text.debugDescription) is not an S3 location; write s3://BUCKET or s3://BUCKET/PREFIX")
        }
        let rest = text.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        let prefix = rest.dropFirst(bucket.count).split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
        try self.init(bucket: bucket, prefix: prefix)
    }

    public init(bucket: String, prefix: String) throws {
        // S3's bucket naming rules: 3–63 characters, lower-case letters, digits, dots and
        // hyphens, starting and ending with a letter or digit.
        let allowed = bucket.utf8.allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == 46 || $0 == 45 }
        guard (3...63).contains(bucket.utf8.count), allowed, let first = bucket.first, let last = bucket.last,
              first.isLetter || first.isNumber, last.isLetter || last.isNumber else {
            throw ObjectStoreError(.invalidArgument, "\(bucket.debugDescription) is not a valid S3 bucket name: 3 to 63 lower-case "
                                   + "letters, digits, dots and hyphens, starting and ending with a letter or digit")
        }
        guard !prefix.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }) else {
            throw ObjectStoreError(.invalidArgument, "the S3 prefix \(prefix.debugDescription) must not contain . or .. segments")
        }
        self.bucket = bucket
        self.prefix = prefix.split(separator: "/").joined(separator: "/")
    }

    /// The object key of `relativePath` under the prefix.
    public func objectKey(_ relativePath: String) -> String { prefix.isEmpty ? relativePath : prefix + "/" + relativePath }

    public var description: String { prefix.isEmpty ? "s3://\(bucket)" : "s3://\(bucket)/\(prefix)" }
}

/// The farm's bytes in an S3-compatible bucket, under `s3://BUCKET/PREFIX/` with `BlobKey`'s
/// layout. Whole-object writes go up with one `PUT` carrying `x-amz-checksum-sha256`, or as a
/// multipart upload past one part; content keys are checked against their hash before a byte
/// is sent and again by the server. Several coordinators may share one location.
public struct S3BlobStore: BlobStore {
    public let client: S3Client
    public let location: ObjectStoreLocation

    /// - Parameter client: a client of `location.bucket`.
    public init(client: S3Client, location: ObjectStoreLocation) throws {
        guard client.configuration.bucket == location.bucket else {
            throw ObjectStoreError(.invalidArgument, "the S3 client is for bucket \(client.configuration.bucket), not \(location.bucket)")
        }
        self.client = client; self.location = location
    }

    func objectKey(_ key: BlobKey) -> String { location.objectKey(key.relativePath) }

    public func info(_ key: BlobKey) async throws -> BlobInfo? {
        guard let object = try await client.headObject(key: objectKey(key)) else { return nil }
        return BlobInfo(size: object.size, sha256: Self.vouched(key, object), modified: object.lastModified)
    }

    public func read(_ key: BlobKey, range: Range<Int64>) async throws -> [UInt8] {
        guard !range.isEmpty else { return [] }
        do {
            return Array(try await client.getObject(key: objectKey(key), range: range).bytes.readableBytesView)
        } catch let error as ObjectStoreError where error.s3Code == "InvalidRange" {
            return []  // at or past the end: no bytes, as a file read there gives none
        }
    }

    @discardableResult
    public func write(_ key: BlobKey, bytes: [UInt8]) async throws -> BlobInfo {
        let sha256 = key.contentName(of: bytes) ?? SigV4Signer.hex(SHA256.hash(data: bytes))
        try Self.check(key, sha256: sha256)
        if let stored = try await alreadyStored(key, size: Int64(bytes.count)) { return stored }
        try await client.putObject(key: objectKey(key), bytes: bytes)
        return BlobInfo(size: Int64(bytes.count), sha256: sha256, modified: nil)
    }

    @discardableResult
    public func write(_ key: BlobKey, file path: String, sha256: String?) async throws -> BlobInfo {
        let expected = sha256 ?? key.contentSHA256
        if let expected { try Self.check(key, sha256: expected) }
        guard let size = Self.fileSize(path) else { throw ObjectStoreError(.localFile, "\(path) is not a file; \(key) not stored") }
        if let stored = try await alreadyStored(key, size: size) { return stored }
        guard let expected, !key.namesPlainSHA256(size: size), key.contentDigest(total: size) != nil else {
            let result = try await client.uploadFile(at: path, key: objectKey(key), sha256: expected)
            return BlobInfo(size: result.size, sha256: result.sha256, modified: nil)
        }
        // A large asset is named by its tree hash, which the upload cannot check as it goes
        // (the client checks a plain SHA-256): hash the file first, then upload it unchecked.
        let named = try AssetAddress.name(ofFile: path)
        guard named.size == size, named.name == expected else {
            throw ObjectStoreError(.integrity, "\(path) has content hash \(named.name), not the expected \(expected); nothing uploaded")
        }
        let result = try await client.uploadFile(at: path, key: objectKey(key), sha256: nil)
        return BlobInfo(size: result.size, sha256: expected, modified: nil)
    }

    @discardableResult
    public func download(_ key: BlobKey, to path: String) async throws -> BlobInfo {
        guard case .asset(let named) = key else {
            let got = try await client.download(key: objectKey(key), to: path, expectedSHA256: key.contentSHA256)
            return BlobInfo(size: got.size, sha256: got.sha256, modified: nil)
        }
        // An asset's name is its SHA-256 or, past `AssetAddress.basePartSize`, its tree hash:
        // the download computes whichever the object's size calls for as the bytes arrive.
        let got: (size: Int64, sha256: String)
        do {
            got = try await client.download(key: objectKey(key), to: path, expectedSHA256: named, assetName: true)
        } catch let error as ObjectStoreError where error.code == .integrity {
            throw ObjectStoreError(.integrity, "\(key): the stored blob is damaged (\(error.message))")
        }
        return BlobInfo(size: got.size, sha256: named, modified: nil)
    }

    public func delete(_ key: BlobKey) async throws {
        try await client.deleteObject(key: objectKey(key))
    }

    public func list(_ kind: BlobKind, _ body: ([StoredBlob]) async throws -> Void) async throws {
        let root = location.objectKey("")
        try await client.forEachPage(prefix: location.objectKey(kind.rawValue + "/")) { page in
            let blobs = page.compactMap { object -> StoredBlob? in
                guard object.key.hasPrefix(root), let key = BlobKey(relativePath: String(object.key.dropFirst(root.count))) else { return nil }
                return StoredBlob(key: key, size: object.size, modified: object.lastModified)
            }
            try await body(blobs)
        }
    }

    @discardableResult
    public func removeAbandonedUploads(startedBefore cutoff: Date) async throws -> Int {
        var removed = 0
        for upload in try await client.listMultipartUploads(prefix: location.objectKey("")) {
            guard let started = upload.initiated, started < cutoff else { continue }
            try await client.abortMultipartUpload(key: upload.key, uploadID: upload.uploadID)
            removed += 1
        }
        return removed
    }

    public func presign(_ key: BlobKey, _ access: BlobAccess, expires: Int) throws -> PresignedRequest? {
        switch access {
        case .read:
            return try client.presign(.getObject(key: objectKey(key)), expires: expires)
        case .write(let sha256):
            let expected = sha256 ?? key.contentSHA256
            if let expected { try Self.check(key, sha256: expected) }
            return try client.presign(.putObject(key: objectKey(key), sha256: expected), expires: expires)
        }
    }

    public func openUpload(_ key: BlobKey, total: Int64, partSize: Int64) async throws -> BlobUpload? {
        let name = objectKey(key)
        let existing = try await client.listMultipartUploads(prefix: name).filter { $0.key == name }
            .max { ($0.initiated ?? .distantPast) < ($1.initiated ?? .distantPast) }
        guard let existing else {
            return BlobUpload(id: try await client.createMultipartUpload(key: name), total: total, partSize: partSize, held: [])
        }
        var upload = BlobUpload(id: existing.uploadID, total: total, partSize: partSize, held: [])
        let parts: [UploadedPart]
        do {
            parts = try await client.listParts(key: name, uploadID: existing.uploadID)
        } catch let error as ObjectStoreError where error.code == .notFound {
            // Completed or aborted between the two calls: start another.
            return BlobUpload(id: try await client.createMultipartUpload(key: name), total: total, partSize: partSize, held: [])
        }
        // Parts of another layout (another part size) are not reported: they are sent again,
        // which replaces them.
        upload.held = parts.filter { $0.number <= upload.partCount && $0.size == Int64(upload.range(ofPart: $0.number).count) }
            .map(\.number)
        return upload
    }

    public func presignPart(_ key: BlobKey, upload: BlobUpload, part: Int, sha256: String, expires: Int) throws -> PresignedRequest? {
        try client.presign(.uploadPart(key: objectKey(key), uploadID: upload.id, partNumber: part, sha256: sha256), expires: expires)
    }

    @discardableResult
    public func completeUpload(_ key: BlobKey, upload: BlobUpload, partSHA256s: [String]) async throws -> BlobInfo {
        let name = objectKey(key)
        guard partSHA256s.count == upload.partCount else {
            throw ObjectStoreError(.invalidArgument, "\(key): \(partSHA256s.count) part SHA-256s for an upload of \(upload.partCount) parts")
        }
        if case .asset(let named) = key {
            // The asset's name must be the tree of the parts' SHA-256s in its own layout; the
            // store then checks each part against its SHA-256 (below), so the object is the
            // one the name stands for, and nothing is read back (AssetAddress).
            guard let layout = AssetAddress.partSize(total: upload.total), layout == upload.partSize else {
                throw ObjectStoreError(.invalidArgument, "\(key): an asset of \(upload.total) bytes goes up "
                                       + (AssetAddress.partSize(total: upload.total).map { "in parts of \($0) bytes" } ?? "in one PUT")
                                       + ", not in parts of \(upload.partSize)")
            }
            let tree = AssetAddress.tree(partSize: layout, total: upload.total, partSHA256s: partSHA256s)
            guard tree == named else {
                throw ObjectStoreError(.integrity, "\(key): the parts' SHA-256s make the content hash \(tree ?? "(malformed part SHA-256s)"), "
                                       + "not the asset's; nothing was completed")
            }
        }
        let parts: [UploadedPart]
        do {
            parts = try await client.listParts(key: name, uploadID: upload.id)
        } catch let error as ObjectStoreError where error.code == .notFound {
            // Completed already (by another request for the same content), or aborted.
            if let object = try await client.headObject(key: name), object.size == upload.total {
                return BlobInfo(size: object.size, sha256: object.sha256, modified: object.lastModified)
            }
            throw ObjectStoreError(.notFound, "\(key): the multipart upload is gone and the object is not stored; upload it again")
        }
        let byNumber = Dictionary(parts.map { ($0.number, $0) }, uniquingKeysWith: { $1 })
        let missing = (1...upload.partCount).filter { byNumber[$0]?.size != Int64(upload.range(ofPart: $0).count) }
        guard missing.isEmpty else {
            throw ObjectStoreError(.notFound, "\(key): the store holds no part \(Self.ranges(missing)) of \(upload.partCount) "
                                   + "(\(upload.partSize)-byte parts of \(upload.total) bytes); upload them before completing")
        }
        // The parts' checksums go with the completion (the upload was started with SHA-256 part
        // checksums); a store that lists them (AWS) has them compared with the uploader's, one
        // that does not (SeaweedFS) gets the uploader's, which it checks against those it stored.
        // Parts of other bytes abort the upload, so that the next attempt starts a new one instead
        // of finding these parts again: listed with other checksums than the uploader's, or, under
        // a key that does not name its content (a job's output, where an earlier upload of other
        // bytes may have left them), refused by the store's completion (400).
        let completed = (1...upload.partCount).compactMap { number -> UploadedPart? in
            guard var part = byNumber[number] else { return nil }
            if part.sha256 == nil { part.sha256 = partSHA256s[number - 1] }
            return part
        }
        let differing = completed.filter { $0.sha256 != partSHA256s[$0.number - 1] }.map(\.number)
        do {
            guard differing.isEmpty else {
                throw ObjectStoreError(.integrity, "\(key): the store holds part \(Self.ranges(differing)) with other bytes than the uploader's")
            }
            try await client.completeMultipartUpload(key: name, uploadID: upload.id, parts: completed)
        } catch let error as ObjectStoreError where error.code == .integrity || error.status == 400 {
            try? await client.abortMultipartUpload(key: name, uploadID: upload.id)
            throw ObjectStoreError(.integrity, "\(error.message); the upload was aborted: upload the whole blob again")
        }
        guard let object = try await client.headObject(key: name), object.size == upload.total else {
            throw ObjectStoreError(.integrity, "\(key): the completed object is not \(upload.total) bytes")
        }
        return BlobInfo(size: object.size, sha256: Self.vouched(key, object), modified: object.lastModified)
    }

    /// Part numbers as ranges (`1-3,5`), for messages and the protocol's `have=`.
    public static func ranges(_ numbers: [Int]) -> String {
        var out: [String] = []
        var index = 0
        let sorted = numbers.sorted()
        while index < sorted.count {
            var end = index
            while end + 1 < sorted.count && sorted[end + 1] == sorted[end] + 1 { end += 1 }
            out.append(end == index ? "\(sorted[index])" : "\(sorted[index])-\(sorted[end])")
            index = end + 1
        }
        return out.joined(separator: ",")
    }

    /// The stored blob if `key` is content-addressed and already held with `size` bytes, and
    /// with the key's SHA-256 if the server keeps a full-object checksum (the write is then
    /// skipped: same key, same bytes). A damaged object, whose checksum differs, is written anew.
    private func alreadyStored(_ key: BlobKey, size: Int64) async throws -> BlobInfo? {
        guard let named = key.contentSHA256, let object = try await client.headObject(key: objectKey(key)), object.size == size,
              Self.vouched(key, object) == named else { return nil }
        return BlobInfo(size: object.size, sha256: named, modified: object.lastModified)
    }

    /// The content hash the store vouches for: the plain SHA-256 it keeps for an object written
    /// in one `PUT`, for a key named by it; otherwise (a multipart object, or a large asset,
    /// named by its tree hash) the key's own, checked when it was written.
    static func vouched(_ key: BlobKey, _ object: ObjectInfo) -> String? {
        guard key.namesPlainSHA256(size: object.size), let kept = object.sha256 else { return key.contentSHA256 }
        return kept
    }

    /// A content key takes only bytes whose SHA-256 it names.
    static func check(_ key: BlobKey, sha256: String) throws {
        if let named = key.contentSHA256, named != sha256 {
            throw ObjectStoreError(.integrity, "\(key) names SHA-256 \(named), but the bytes have \(sha256); nothing stored")
        }
    }

    static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }
}
