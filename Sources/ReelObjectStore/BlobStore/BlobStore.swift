import Foundation

/// What a store says about one stored blob.
public struct BlobInfo: Hashable, Sendable {
    public var size: Int64
    /// The SHA-256 (hex) the store vouches for: checked by the store when the blob was written
    /// (a content key's, or S3's full-object `x-amz-checksum-sha256`); `nil` when it keeps none.
    public var sha256: String?
    public var modified: Date?

    public init(size: Int64, sha256: String?, modified: Date?) { self.size = size; self.sha256 = sha256; self.modified = modified }
}

/// One blob of a listing.
public struct StoredBlob: Hashable, Sendable {
    public var key: BlobKey
    public var size: Int64
    public var modified: Date?

    public init(key: BlobKey, size: Int64, modified: Date?) { self.key = key; self.size = size; self.modified = modified }
}

/// What a presigned URL lets its holder do with one blob.
public enum BlobAccess: Hashable, Sendable {
    /// `GET`, byte ranges included.
    case read
    /// `PUT` of the whole blob; with a SHA-256 the store refuses any other bytes.
    case write(sha256: String?)
}

/// Where the farm keeps its bytes: sources, chunk results, outputs and posters, under
/// `BlobKey`s. Two implementations are designed (docs/object-storage.md): today's local
/// directory on the coordinator's disk (the default for one machine), and an S3-compatible
/// bucket (`S3BlobStore`) that several coordinators share and that agents and clients reach
/// directly through presigned URLs.
///
/// The contract every implementation keeps:
/// - A blob appears whole or not at all: a reader never sees part of a write.
/// - Content keys (`.asset`, `.result`) hold exactly the bytes whose SHA-256 they name: a write
///   whose bytes hash otherwise throws `.integrity` and stores nothing; a write of a content key
///   already stored with that size (and that SHA-256, where the store vouches for one) is
///   skipped, and a damaged one is written anew.
/// - `info` is cheap (no read of the bytes): what planning and `SUBMIT` check; results are
///   hashed again where they are read for the output (the finaliser).
/// - Deleting a blob that is not there succeeds (retention sweeps race with each other).
/// - Errors are `ObjectStoreError`s; none holds a secret or a presigned URL.
public protocol BlobStore: Sendable {
    /// The blob's size (and SHA-256 if the store vouches for one), or `nil` if it is not stored.
    func info(_ key: BlobKey) async throws -> BlobInfo?

    /// The bytes `range` of the blob (fewer at its end): ranged reads of sources, for agents'
    /// `ByteRangeSource`s and the coordinator's probing.
    func read(_ key: BlobKey, range: Range<Int64>) async throws -> [UInt8]

    /// Stores `bytes` (posters, small results), verified as the contract says.
    @discardableResult
    func write(_ key: BlobKey, bytes: [UInt8]) async throws -> BlobInfo

    /// Stores the file at `path`, streamed (in parts when large), verified as the contract says.
    /// - Parameter sha256: the file's SHA-256 if known; a content key's own otherwise.
    @discardableResult
    func write(_ key: BlobKey, file path: String, sha256: String?) async throws -> BlobInfo

    /// Copies the blob to `path` (written aside, verified, then renamed into place).
    @discardableResult
    func download(_ key: BlobKey, to path: String) async throws -> BlobInfo

    func delete(_ key: BlobKey) async throws

    /// Every blob of `kind`, a page at a time, for retention sweeps. Objects under the kind's
    /// folder whose names are of no key's form are not reported (and so never deleted).
    func list(_ kind: BlobKind, _ body: ([StoredBlob]) async throws -> Void) async throws

    /// Removes uploads that were started before `cutoff` and never finished (S3 multipart
    /// uploads; a directory's partial files). - Returns: how many were removed.
    @discardableResult
    func removeAbandonedUploads(startedBefore cutoff: Date) async throws -> Int

    /// A URL through which someone without credentials can do `access` on `key` alone, until
    /// `expires` seconds from now; `nil` when the store has no such thing (a local directory:
    /// bytes then travel over the farm's own protocol, through the coordinator).
    func presign(_ key: BlobKey, _ access: BlobAccess, expires: Int) throws -> PresignedRequest?

    // Uploads in parts through presigned URLs (docs/object-storage.md, "Multipart direct
    // uploads"); a store without them (a local directory) answers `nil` and throws.

    /// The multipart upload of `key` in progress (the newest, when several are) with the parts
    /// it holds that fit `total` cut in `partSize` parts, or a new one; `nil` when the store
    /// has no multipart uploads.
    func openUpload(_ key: BlobKey, total: Int64, partSize: Int64) async throws -> BlobUpload?

    /// A presigned `PUT` of part `part` of `upload`, bound to the part's SHA-256 (hex).
    func presignPart(_ key: BlobKey, upload: BlobUpload, part: Int, sha256: String, expires: Int) throws -> PresignedRequest?

    /// Completes `upload` from the parts the store holds (each of the layout's size; their
    /// SHA-256s, hex, part 1 first, as the uploader hashed them; the store checks each part's
    /// bytes against them) and checks the object's size. For an asset, the part SHA-256s must
    /// make its name (`AssetAddress`) in its own layout, so the completed object is the one the
    /// key names without a byte of it read back. An upload already completed (its object there
    /// with `total` bytes) is not an error.
    /// - Throws: `.notFound` when the upload is gone and the object not there, `.integrity`
    ///   when parts are missing or the bytes are not the key's.
    @discardableResult
    func completeUpload(_ key: BlobKey, upload: BlobUpload, partSHA256s: [String]) async throws -> BlobInfo
}
