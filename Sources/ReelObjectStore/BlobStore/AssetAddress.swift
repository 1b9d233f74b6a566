import Crypto
import Foundation

/// How an asset is named in the content-addressed store (docs/object-storage.md, "Content
/// addresses"): an asset of at most `basePartSize` bytes by the SHA-256 of its bytes; a larger
/// one by its **tree hash**, the SHA-256 of a fixed header, its part size, its size and the
/// SHA-256 of each of its parts, in order.
///
/// Why a tree: a large asset goes to an object store in parts, each checked by the store against
/// the SHA-256 its presigned URL was signed with, and the whole object's SHA-256 is then known
/// to nobody but a reader of every byte. The tree hash is computed from the part hashes alone,
/// which the store has checked (once per part on upload, again on completion), so the
/// coordinator can tell that the object is the one its key names without reading it back.
///
/// The layout depends on the size alone, never on a coordinator's settings, so every client
/// names a file the same way, and the same file is stored (and its chunks reused) once.
///
///     tree = SHA-256( "reel-asset-tree-v1\n" ‖ partSize (8 bytes, big-endian)
///                     ‖ size (8 bytes, big-endian) ‖ SHA-256(part 1) ‖ … ‖ SHA-256(part N) )
///
/// The header keeps the two kinds of names apart: no file's plain SHA-256 is a tree hash of
/// other bytes unless SHA-256 itself is broken.
public enum AssetAddress {
    /// Assets up to this size are named by their SHA-256; larger ones are cut in parts of this
    /// size (every part but the last), raised to whole MiB so that no asset has more than
    /// `maximumParts` parts.
    public static let basePartSize: Int64 = 16 << 20
    /// S3's limit on the parts of one multipart upload.
    public static let maximumParts: Int64 = 10_000

    static let header = Array("reel-asset-tree-v1\n".utf8)

    /// The part size of an asset of `total` bytes, or `nil` for one named by its SHA-256.
    public static func partSize(total: Int64) -> Int64? {
        guard total > basePartSize else { return nil }
        let mebibyte: Int64 = 1 << 20
        let needed = (total + maximumParts - 1) / maximumParts
        return max(basePartSize, (needed + mebibyte - 1) / mebibyte * mebibyte)
    }

    /// The tree hash (lower-case hex) of an asset of `total` bytes cut in parts of `partSize`
    /// whose SHA-256s (lower-case hex, part 1 first) are `partSHA256s`; `nil` when one of them
    /// is not 64 hex digits.
    public static func tree(partSize: Int64, total: Int64, partSHA256s: [String]) -> String? {
        var hasher = SHA256()
        hasher.update(data: header)
        hasher.update(data: bigEndian(partSize) + bigEndian(total))
        for part in partSHA256s {
            guard let raw = bytes(hex: part) else { return nil }
            hasher.update(data: raw)
        }
        return hex(hasher.finalize())
    }

    /// The asset name of `bytes`.
    public static func name(of bytes: [UInt8]) -> String {
        var digest = ContentDigest(total: Int64(bytes.count), partSize: partSize(total: Int64(bytes.count)))
        digest.update(bytes)
        return digest.hex
    }

    /// The size and asset name of the file at `path`, read in 1 MiB blocks.
    public static func name(ofFile path: String) throws -> (size: Int64, name: String) {
        let file = try LocalFile.openForReading(path)
        let size = try file.size
        var digest = ContentDigest(total: size, partSize: partSize(total: size))
        try digest.update(file: path, upTo: size)
        guard digest.byteCount == size else {
            throw ObjectStoreError(.localFile, "\(path) changed while it was hashed (\(digest.byteCount) of \(size) bytes read)")
        }
        return (size, digest.hex)
    }

    static func bigEndian(_ value: Int64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: value) >> (56 - 8 * UInt64($0))) }
    }

    static func bytes(hex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == 64 else { return nil }
        var out = [UInt8](repeating: 0, count: 32)
        for index in 0..<32 {
            guard let high = nibble(digits[2 * index]), let low = nibble(digits[2 * index + 1]) else { return nil }
            out[index] = high << 4 | low
        }
        return out
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case 48...57: return digit - 48
        case 97...102: return digit - 87
        default: return nil
        }
    }

    static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 { SigV4Signer.hex(bytes) }
}

/// The running digest of one blob of known size, fed piece by piece: the SHA-256 of its bytes,
/// or (with a part size) its `AssetAddress` tree hash. What every store, upload and download
/// that checks a content key's bytes computes as they stream.
public struct ContentDigest: @unchecked Sendable {  // SHA256 is a plain value (its state is copied with it)
    public let total: Int64
    /// The tree's part size; `nil` for a plain SHA-256.
    public let partSize: Int64?
    private var hasher = SHA256()
    /// The SHA-256 of each whole part so far (tree only), raw.
    private var parts: [[UInt8]] = []
    /// Bytes fed into the current part (tree only).
    private var inPart: Int64 = 0
    /// Bytes fed so far.
    public private(set) var byteCount: Int64 = 0

    public init(total: Int64, partSize: Int64?) {
        self.total = total
        self.partSize = partSize
    }

    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    public mutating func update(_ buffer: UnsafeRawBufferPointer) {
        byteCount += Int64(buffer.count)
        guard let partSize else {
            hasher.update(bufferPointer: buffer)
            return
        }
        var rest = buffer[...]
        while !rest.isEmpty {
            let take = Int(min(Int64(rest.count), partSize - inPart))
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: rest.prefix(take)))
            inPart += Int64(take)
            rest = rest.dropFirst(take)
            if inPart == partSize {
                parts.append(Array(hasher.finalize()))
                hasher = SHA256()
                inPart = 0
            }
        }
    }

    /// Feeds the first `limit` bytes of the file at `path` (fewer if it is shorter), in 1 MiB
    /// blocks: to resume hashing a partial upload whose running digest was lost.
    public mutating func update(file path: String, upTo limit: Int64) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ObjectStoreError(.localFile, "cannot open \(path) to hash it: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var done: Int64 = 0
        while done < limit {
            let want = Int(min(Int64(buffer.count), limit - done))
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, want) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw ObjectStoreError(.localFile, "cannot read \(path) to hash it: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            buffer.withUnsafeBytes { update(UnsafeRawBufferPointer(rebasing: $0.prefix(n))) }
            done += Int64(n)
        }
    }

    /// Lower-case hex of the digest of everything fed so far (feeding may continue): the
    /// blob's name once `byteCount == total`.
    public var hex: String {
        guard let partSize else { return AssetAddress.hex(hasher.finalize()) }
        var tree = SHA256()
        tree.update(data: AssetAddress.header)
        tree.update(data: AssetAddress.bigEndian(partSize) + AssetAddress.bigEndian(total))
        for part in parts { tree.update(data: part) }
        if inPart > 0 { tree.update(data: Array(hasher.finalize())) }
        return AssetAddress.hex(tree.finalize())
    }
}

extension BlobKey {
    /// A running digest of `total` bytes for this key: an asset's `AssetAddress` name, a
    /// result's SHA-256; `nil` for keys that do not name their content.
    public func contentDigest(total: Int64) -> ContentDigest? {
        switch self {
        case .asset: return ContentDigest(total: total, partSize: AssetAddress.partSize(total: total))
        case .result: return ContentDigest(total: total, partSize: nil)
        case .output, .poster: return nil
        }
    }

    /// Whether the key names bytes of `size` by their plain SHA-256, the checksum S3 keeps for
    /// an object written in one `PUT` (an asset over `AssetAddress.basePartSize` is named by
    /// its tree hash instead).
    public func namesPlainSHA256(size: Int64) -> Bool {
        switch self {
        case .asset: return AssetAddress.partSize(total: size) == nil
        case .result: return true
        case .output, .poster: return false
        }
    }

    /// The content name of the first `size` bytes of the file at `path` under this key's kind
    /// (see `contentDigest`); `nil` for keys that do not name their content.
    public func contentName(ofFile path: String, size: Int64) throws -> String? {
        guard var digest = contentDigest(total: size) else { return nil }
        try digest.update(file: path, upTo: size)
        guard digest.byteCount == size else { throw ObjectStoreError(.localFile, "\(path) is shorter than \(size) bytes") }
        return digest.hex
    }

    /// The content name of `bytes` under this key's kind (see `contentDigest`).
    public func contentName(of bytes: [UInt8]) -> String? {
        guard var digest = contentDigest(total: Int64(bytes.count)) else { return nil }
        digest.update(bytes)
        return digest.hex
    }
}
