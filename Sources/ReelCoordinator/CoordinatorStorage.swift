import Foundation
import ReelObjectStore
import ReelProtocol
import Synchronization

/// The coordinator's files under one root, in the layout of a `LocalBlobStore`
/// (docs/object-storage.md): `assets/sha256/XX/<sha256>` (verified sources, served by `FETCH`),
/// `results/sha256/XX/<sha256>` (verified task results, content-addressed),
/// `outputs/<job>.<fileType>` (finished jobs), `posters/<job>.jpg`, `previews/` (remuxed pieces of
/// finished chunks for the console's preview, `CoordinatorStorage+Previews.swift`), where `XX` is the hash's
/// first two hex digits; and beside them what is no blob yet: `assets/<sha256>.partial`
/// (uploads in progress), `results/<task>-<epoch>-<sha256>.partial` (results uploaded in parts,
/// in progress), `tmp/`. A root in the older flat layout (`assets/<sha256>`,
/// `results/<sha256>`) is moved into this one by `prepare()`.
///
/// Every file reaches its final name by rename after verification, so a crash never leaves a
/// wrong file under a final name. Appends to partial uploads are serialised by a lock, which
/// also guards their running SHA-256 digests (uploads are hashed as their ranges arrive). A
/// class, so that everything handed the coordinator's storage shares that one lock.
///
/// Owner-only: the sources, results and outputs are the farm's customers' media, so the four
/// folders are mode 0700 (enforced at every start, which also fixes folders an older version
/// created 0755) and the files written here 0600. The root is 0700 when this creates it; an
/// existing root (a mount point, a systemd `StateDirectory`) keeps its mode — nothing in it is
/// reachable through the private folders anyway. Files the finaliser's muxer writes into
/// `outputs/` and `tmp/` get the process umask but sit behind those folders.
final class CoordinatorStorage: Sendable {
    let root: String
    /// The same root as a blob store: the keys' paths, where uploads over `reel/1` are
    /// assembled and renamed into place.
    let local: LocalBlobStore
    /// Where the blobs live (`CoordinatorStorage+Blobs.swift`): `local`, or an S3 bucket whose
    /// blobs `local` then keeps copies of (what the coordinator reads as files: sources while
    /// planning, chunks while finalising, outputs it made).
    let blobs: any BlobStore
    /// Whether the blobs are elsewhere than `local` (then `local` holds copies).
    let isRemote: Bool
    /// The upload lock, over the running digest of every partial upload (asset or result) by path.
    let uploadState = Mutex<[String: ContentDigest]>([:])
    /// Downloads into the directory in flight, by path (`localCopy`).
    let downloads = Mutex<[String: Task<Void, any Error>]>([:])

    /// - Parameter blobs: where the blobs live; `nil`: in the directory at `root` itself.
    init(root: String, blobs: (any BlobStore)? = nil) {
        self.root = URL(fileURLWithPath: root).standardizedFileURL.path
        self.local = LocalBlobStore(root: self.root)
        self.blobs = blobs ?? local
        self.isRemote = blobs != nil
    }

    /// Runs `body` while no `PUT` can touch an asset file: the sweep deletes assets and
    /// `SUBMIT` removes damaged ones under it, so an upload never completes onto a file that is
    /// about to be deleted.
    func withUploadLock<T>(_ body: () throws -> T) rethrows -> T {
        try uploadState.withLock { _ in try body() }
    }

    /// The folders under the root, each private to the coordinator's user.
    static let folders = ["assets", "results", "outputs", "posters", "previews", "tmp"]

    /// The content-addressed folders, each with its 256 prefix folders `sha256/00` … `sha256/ff`.
    static let contentFolders = ["assets", "results"]
    static let hashPrefixes = (0..<256).map { String(format: "%02x", $0) }

    /// Creates the root and the folders, owner-only (see the type's documentation), and moves
    /// the blobs of a root in the older flat layout to their keys' paths.
    /// - Returns: how many blobs were moved.
    @discardableResult
    func prepare() throws -> Int {
        try Self.makePrivateDirectory(root, enforce: false)
        for sub in Self.folders {
            try Self.makePrivateDirectory(root + "/" + sub, enforce: true)
        }
        // Every prefix folder exists from the start, so a verified upload is renamed into place
        // without creating folders under the upload lock.
        for sub in Self.contentFolders {
            try Self.makePrivateDirectory(root + "/" + sub + "/sha256", enforce: true)
            for prefix in Self.hashPrefixes {
                try Self.makePrivateDirectory(root + "/" + sub + "/sha256/" + prefix, enforce: false)
            }
        }
        return try moveFlatLayout()
    }

    /// Moves `assets/<sha256>` and `results/<sha256>` (the layout before blob keys) to
    /// `…/sha256/XX/<sha256>`; a blob already at its new path wins and the old copy goes.
    private func moveFlatLayout() throws -> Int {
        var moved = 0
        for sub in Self.contentFolders {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: root + "/" + sub)) ?? [] where Self.isValidHash(name) {
                let old = root + "/" + sub + "/" + name
                guard Self.fileSize(old) != nil else { continue }
                let new = sub == "assets" ? assetPath(name) : resultPath(name)
                if Self.fileSize(new) != nil {
                    unlink(old)
                } else if rename(old, new) != 0 {
                    throw CoordinatorStartupError(description: "cannot move \(old) to \(new) (the storage layout of blob keys): "
                                                  + "\(String(cString: strerror(errno)))")
                }
                moved += 1
            }
        }
        return moved
    }

    /// Creates `path` (and missing parents, with default modes) if it does not exist; the
    /// directory itself is then mode 0700, and so is an existing one if `enforce`.
    static func makePrivateDirectory(_ path: String, enforce: Bool) throws {
        var isDirectory: ObjCBool = false
        let existed = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        if existed && !isDirectory.boolValue {
            throw CoordinatorStartupError(description: "the storage path \(path) is a file, not a folder; give --storage a folder")
        }
        if !existed { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        if !existed || enforce, chmod(path, 0o700) != 0 {
            throw CoordinatorStartupError(description: "cannot make the storage folder \(path) private (chmod 700): "
                                          + "\(String(cString: strerror(errno))); is it owned by the coordinator's user?")
        }
    }

    func assetPath(_ hash: String) -> String { local.path(of: .asset(sha256: hash)) }
    func partialAssetPath(_ hash: String) -> String { "\(root)/assets/\(hash).partial" }
    func resultPath(_ hash: String) -> String { local.path(of: .result(sha256: hash)) }
    func outputPath(job: Int64, fileType: String) -> String { local.path(of: .output(job: job, fileType: fileType)) }

    /// 64 lower-case hex digits: the only form a hash may take, so it is safe in a path.
    static func isValidHash(_ hash: String) -> Bool {
        hash.utf8.count == 64 && hash.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// Appends `bytes` at `offset` of the upload of `hash` (in order: `offset` must equal the
    /// bytes held). When the upload reaches `total`, verifies its SHA-256 and renames it into place.
    /// - Returns: bytes held afterwards and whether the asset is now complete.
    func put(hash: String, offset: Int64, total: Int64, bytes: [UInt8]) throws -> (have: Int64, complete: Bool) {
        try uploadState.withLock { digests in
            let final = assetPath(hash)
            if let size = Self.fileSize(final) {
                return (size, true)
            }
            let partial = partialAssetPath(hash)
            let have = Self.fileSize(partial) ?? 0
            guard offset == have else {
                throw ReelProtocolError.outOfOrder(have: have, "upload of \(hash) holds \(have) bytes; the next PUT must start at offset \(have), not \(offset)")
            }
            guard offset + Int64(bytes.count) <= total else {
                throw ReelProtocolError(.badRange, "PUT of \(bytes.count) bytes at \(offset) goes past total \(total)")
            }
            let digest = try appendHashed(bytes, to: partial, of: .asset(sha256: hash), holding: have, total: total, digests: &digests)
            guard digest.byteCount == total else { return (digest.byteCount, false) }
            digests[partial] = nil
            guard digest.hex == hash else {
                unlink(partial)
                throw ReelProtocolError(.checksumMismatch, "uploaded bytes have content hash \(digest.hex), not \(hash); upload discarded")
            }
            guard rename(partial, final) == 0 else {
                throw ReelProtocolError(.internal, "cannot move \(partial) into place: \(String(cString: strerror(errno)))")
            }
            return (total, true)
        }
    }

    /// Appends `bytes` to the partial upload at `partial` of `key`'s `total` bytes, which holds
    /// `have` bytes, and feeds them to its running digest of the key's content name (an
    /// asset's `AssetAddress` name, a result's SHA-256; rebuilt from the file when it does not
    /// cover exactly `have` bytes of that total: after a restart, or for a file it never saw).
    /// Call under the upload lock.
    /// - Returns: the digest of the whole partial file, also kept in `digests`.
    func appendHashed(_ bytes: [UInt8], to partial: String, of key: BlobKey, holding have: Int64, total: Int64,
                      digests: inout [String: ContentDigest]) throws -> ContentDigest {
        let fresh = key.contentDigest(total: total) ?? ContentDigest(total: total, partSize: nil)
        var digest = digests[partial] ?? fresh
        if digest.byteCount != have || digest.total != total || digest.partSize != fresh.partSize {
            digest = fresh
            if have > 0 {
                do { try digest.update(file: partial, upTo: have) } catch let error as ObjectStoreError {
                    throw ReelProtocolError(.internal, error.message)
                }
            }
        }
        try append(bytes, to: partial)
        digest.update(bytes)
        digests[partial] = digest
        return digest
    }

    /// Reads up to `length` bytes of the file at `path` from `offset`.
    /// - Throws: `not_found` when the file is missing, `bad_range` when `offset` is past its end.
    static func readRange(path: String, offset: Int64, length: Int64) throws -> (total: Int64, bytes: [UInt8]) {
        guard let total = fileSize(path) else { throw ReelProtocolError(.notFound, "no such stored object") }
        guard offset >= 0, offset <= total else { throw ReelProtocolError(.badRange, "offset \(offset) is past the end (\(total) bytes)") }
        let count = Int(min(length, total - offset))
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw ReelProtocolError(.internal, "cannot open a stored object: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw ReelProtocolError(.internal, "short read of a stored object") }
            done += n
        }
        return (total, bytes)
    }

    private func append(_ bytes: [UInt8], to path: String, create: Bool = true) throws {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o600)
        guard fd >= 0 else { throw ReelProtocolError(.internal, "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw ReelProtocolError(.internal, "cannot write \(path): \(String(cString: strerror(errno)))") }
            done += n
        }
    }
}
