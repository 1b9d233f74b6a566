import Foundation

/// A multipart upload of one blob through presigned part URLs: its id, how the blob is cut
/// into parts, and which parts the store already holds (what a resumed upload skips).
public struct BlobUpload: Hashable, Sendable {
    public var id: String
    public var total: Int64
    /// Every part but the last has exactly this many bytes.
    public var partSize: Int64
    /// The part numbers (1-based) the store holds with their layout's size.
    public var held: [Int]

    public init(id: String, total: Int64, partSize: Int64, held: [Int]) {
        self.id = id; self.total = total; self.partSize = partSize; self.held = held
    }

    public var partCount: Int { Self.partCount(total: total, partSize: partSize) }

    /// The bytes of part `number` (1-based) of the blob.
    public func range(ofPart number: Int) -> Range<Int64> {
        let start = Int64(number - 1) * partSize
        return start..<min(start + partSize, total)
    }

    public static func partCount(total: Int64, partSize: Int64) -> Int {
        max(1, Int((total + partSize - 1) / partSize))
    }

    /// The part size for `total` bytes: `preferred`, raised to S3's 5 MiB minimum and to what
    /// keeps the blob within 10,000 parts.
    public static func partSize(total: Int64, preferred: Int64) -> Int64 {
        max(preferred, Int64(S3ClientConfiguration.minimumPartSize), (total + 9_999) / 10_000)
    }
}

extension BlobStore {
    public func openUpload(_ key: BlobKey, total: Int64, partSize: Int64) async throws -> BlobUpload? { nil }

    public func presignPart(_ key: BlobKey, upload: BlobUpload, part: Int, sha256: String, expires: Int) throws -> PresignedRequest? { nil }

    @discardableResult
    public func completeUpload(_ key: BlobKey, upload: BlobUpload, partSHA256s: [String]) async throws -> BlobInfo {
        throw ObjectStoreError(.invalidArgument, "\(key): this store takes no multipart uploads")
    }
}
