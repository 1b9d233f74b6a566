import Crypto
import Foundation
import Glibc
import NIOPosix

/// The farm's bytes in a directory on the coordinator's disk, with `BlobKey`'s layout under
/// `root` (`assets/sha256/9f/9f86…`, `outputs/42.mp4`, …): the default storage for one machine.
///
/// Every blob reaches its name by rename from a private file in `root/tmp/`, written (and for
/// content keys hashed) first and flushed to disk, so a reader sees a whole blob or none and a
/// crash leaves no wrong bytes under a key. Folders are created owner-only (0700), files 0600:
/// the blobs are the farm's customers' media. The file system's work runs on NIO's blocking
/// thread pool, never on Swift's cooperative threads.
///
/// There are no presigned URLs (`presign` gives `nil`): with a directory, bytes travel over the
/// farm's own protocol through the coordinator, and `path(of:)` gives the coordinator the file.
public struct LocalBlobStore: BlobStore {
    public let root: String

    /// Blobs are copied and hashed through a buffer of this size.
    static let bufferSize = 1 << 20

    public init(root: String) {
        self.root = URL(fileURLWithPath: root).standardizedFileURL.path
    }

    /// The file that holds `key` (whether or not it exists).
    public func path(of key: BlobKey) -> String { root + "/" + key.relativePath }

    /// Where writes in progress live until renamed into place.
    public var temporaryDirectory: String { root + "/tmp" }

    public func info(_ key: BlobKey) async throws -> BlobInfo? {
        let path = path(of: key)
        return try await Self.blocking {
            var info = stat()
            guard stat(path, &info) == 0 else {
                if errno == ENOENT || errno == ENOTDIR { return nil }
                throw LocalFile.error("cannot stat \(key)")
            }
            guard (info.st_mode & S_IFMT) == S_IFREG else { return nil }
            return BlobInfo(size: Int64(info.st_size), sha256: key.contentSHA256, modified: Self.modified(info))
        }
    }

    public func read(_ key: BlobKey, range: Range<Int64>) async throws -> [UInt8] {
        guard !range.isEmpty else { return [] }
        let path = path(of: key)
        return try await Self.blocking {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                if errno == ENOENT || errno == ENOTDIR { throw ObjectStoreError(.notFound, "\(key) is not stored") }
                throw LocalFile.error("cannot open \(key)")
            }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw LocalFile.error("cannot stat \(key)") }
            let end = min(range.upperBound, Int64(info.st_size))
            guard range.lowerBound < end else { return [] }
            let count = Int(end - range.lowerBound)
            var bytes = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(range.lowerBound) + off_t(done)) }
                if n < 0 && errno == EINTR { continue }
                if n < 0 { throw LocalFile.error("cannot read \(key)") }
                if n == 0 { break }
                done += n
            }
            return Array(bytes.prefix(done))
        }
    }

    @discardableResult
    public func write(_ key: BlobKey, bytes: [UInt8]) async throws -> BlobInfo {
        let sha256 = key.contentName(of: bytes) ?? SigV4Signer.hex(SHA256.hash(data: bytes))
        try S3BlobStore.check(key, sha256: sha256)
        let final = path(of: key)
        return try await Self.blocking { [self] in
            if key.contentSHA256 != nil, Self.fileSize(final) == Int64(bytes.count) {
                return BlobInfo(size: Int64(bytes.count), sha256: sha256, modified: nil)
            }
            try place(key, at: final) { fd in
                try Self.writeAll(fd, bytes, what: "\(key)")
            }
            return BlobInfo(size: Int64(bytes.count), sha256: sha256, modified: nil)
        }
    }

    @discardableResult
    public func write(_ key: BlobKey, file source: String, sha256: String?) async throws -> BlobInfo {
        let expected = sha256 ?? key.contentSHA256
        if let expected { try S3BlobStore.check(key, sha256: expected) }
        let final = path(of: key)
        return try await Self.blocking { [self] in
            if let named = key.contentSHA256, let size = Self.fileSize(source), Self.fileSize(final) == size {
                return BlobInfo(size: size, sha256: named, modified: nil)
            }
            var copied: (size: Int64, sha256: String)?
            try place(key, at: final) { fd in
                copied = try Self.copy(from: source, to: fd, what: "\(key)", key: key)
                if let expected, copied?.sha256 != expected {
                    throw ObjectStoreError(.integrity, "\(source) has content hash \(copied?.sha256 ?? "?"), not the expected \(expected); "
                                           + "\(key) not stored")
                }
            }
            return BlobInfo(size: copied?.size ?? 0, sha256: copied?.sha256, modified: nil)
        }
    }

    /// Stores the file at `source`, whose SHA-256 the caller has verified to be `sha256`, by
    /// renaming it into place (no copy): for uploads the coordinator assembled and hashed as
    /// they arrived. `source` must be on the same file system (the coordinator's staging
    /// folders under the root are). A content key already held with the same size is kept, and
    /// `source` removed.
    @discardableResult
    public func adopt(_ key: BlobKey, file source: String, sha256: String) async throws -> BlobInfo {
        try S3BlobStore.check(key, sha256: sha256)
        let final = path(of: key)
        return try await Self.blocking { [self] in
            guard let size = Self.fileSize(source) else { throw ObjectStoreError(.localFile, "\(source) is not a file; \(key) not stored") }
            if key.contentSHA256 != nil, Self.fileSize(final) == size {
                unlink(source)
                return BlobInfo(size: size, sha256: sha256, modified: nil)
            }
            try makeFolders(for: key)
            guard chmod(source, 0o600) == 0, rename(source, final) == 0 else { throw LocalFile.error("cannot store \(key)") }
            return BlobInfo(size: size, sha256: sha256, modified: nil)
        }
    }

    @discardableResult
    public func download(_ key: BlobKey, to target: String) async throws -> BlobInfo {
        let source = path(of: key)
        return try await Self.blocking {
            let temporary = target + ".download-" + UUID().uuidString
            let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw LocalFile.error("cannot create \(temporary)") }
            var closed = false
            defer { if !closed { close(fd) }; unlink(temporary) }
            guard Self.fileSize(source) != nil else { throw ObjectStoreError(.notFound, "\(key) is not stored") }
            let copied = try Self.copy(from: source, to: fd, what: "\(key)", key: key)
            if let named = key.contentSHA256, copied.sha256 != named {
                throw ObjectStoreError(.integrity, "\(key) holds bytes with content hash \(copied.sha256): the stored blob is damaged")
            }
            closed = true
            guard close(fd) == 0, rename(temporary, target) == 0 else { throw LocalFile.error("cannot move the download to \(target)") }
            return BlobInfo(size: copied.size, sha256: copied.sha256, modified: nil)
        }
    }

    public func delete(_ key: BlobKey) async throws {
        let path = path(of: key)
        try await Self.blocking {
            guard unlink(path) == 0 || errno == ENOENT || errno == ENOTDIR else { throw LocalFile.error("cannot delete \(key)") }
        }
    }

    public func list(_ kind: BlobKind, _ body: ([StoredBlob]) async throws -> Void) async throws {
        let folder = root + "/" + kind.rawValue
        // Content folders hold sha256/XX/HASH; the others their files directly.
        let directories: [(path: String, relative: String)]
        switch kind {
        case .assets, .results:
            let prefixes = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/sha256")) ?? []
            directories = prefixes.sorted().map { (folder + "/sha256/" + $0, kind.rawValue + "/sha256/" + $0) }
        case .outputs, .posters:
            directories = [(folder, kind.rawValue)]
        }
        for directory in directories {
            let page = try await Self.blocking { () -> [StoredBlob] in
                let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
                return names.sorted().compactMap { name in
                    guard let key = BlobKey(relativePath: directory.relative + "/" + name) else { return nil }
                    var info = stat()
                    guard stat(directory.path + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
                    return StoredBlob(key: key, size: Int64(info.st_size), modified: Self.modified(info))
                }
            }
            if !page.isEmpty { try await body(page) }
        }
    }

    /// Removes files in `tmp/` older than `cutoff`: writes a crash interrupted (a write in
    /// progress is always younger than the upload grace).
    @discardableResult
    public func removeAbandonedUploads(startedBefore cutoff: Date) async throws -> Int {
        let folder = temporaryDirectory
        return try await Self.blocking {
            var removed = 0
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                var info = stat()
                guard stat(folder + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
                      Self.modified(info) < cutoff, unlink(folder + "/" + name) == 0 else { continue }
                removed += 1
            }
            return removed
        }
    }

    public func presign(_ key: BlobKey, _ access: BlobAccess, expires: Int) throws -> PresignedRequest? { nil }

    // MARK: Files

    /// Creates the root's folders owner-only where missing (an existing root keeps its mode).
    public func prepare() throws {
        try Self.makeFolder(root, ownerOnly: false)
        for folder in BlobKind.allCases.map(\.rawValue) + ["tmp"] {
            try Self.makeFolder(root + "/" + folder, ownerOnly: true)
        }
    }

    func makeFolders(for key: BlobKey) throws {
        var folder = root
        for part in key.relativePath.split(separator: "/").dropLast() {
            folder += "/" + part
            try Self.makeFolder(folder, ownerOnly: true)
        }
    }

    static func makeFolder(_ path: String, ownerOnly: Bool) throws {
        if mkdir(path, ownerOnly ? 0o700 : 0o755) == 0 { return }
        guard errno == EEXIST else { throw LocalFile.error("cannot create the folder \(path)") }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw ObjectStoreError(.localFile, "\(path) is a file, not a folder")
        }
    }

    /// Writes a private temporary file with `fill`, flushes it and renames it to `final`.
    private func place(_ key: BlobKey, at final: String, _ fill: (Int32) throws -> Void) throws {
        try Self.makeFolder(temporaryDirectory, ownerOnly: true)
        try makeFolders(for: key)
        let temporary = temporaryDirectory + "/write-" + UUID().uuidString
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw LocalFile.error("cannot create a temporary file for \(key)") }
        var closed = false
        defer { if !closed { close(fd) }; unlink(temporary) }
        try fill(fd)
        guard fsync(fd) == 0 else { throw LocalFile.error("cannot flush \(key)") }
        closed = true
        guard close(fd) == 0, rename(temporary, final) == 0 else { throw LocalFile.error("cannot store \(key)") }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], what: String) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw LocalFile.error("cannot write \(what)") }
            done += n
        }
    }

    /// Copies the file at `source` to `fd`, hashing it as `key` names its content (an asset's
    /// `AssetAddress` name; else its SHA-256). - Returns: its size and that hash.
    static func copy(from source: String, to fd: Int32, what: String, key: BlobKey) throws -> (size: Int64, sha256: String) {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else {
            if errno == ENOENT { throw ObjectStoreError(.localFile, "\(source) does not exist; \(what) not stored") }
            throw LocalFile.error("cannot open \(source)")
        }
        defer { close(input) }
        var info = stat()
        guard fstat(input, &info) == 0 else { throw LocalFile.error("cannot read \(source)") }
        var hasher = key.contentDigest(total: Int64(info.st_size)) ?? ContentDigest(total: Int64(info.st_size), partSize: nil)
        var buffer = [UInt8](repeating: 0, count: bufferSize)
        var size: Int64 = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress!, bufferSize) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw LocalFile.error("cannot read \(source)") }
            if n == 0 { break }
            let chunk = Array(buffer[0..<n])
            hasher.update(chunk)
            try writeAll(fd, chunk, what: what)
            size += Int64(n)
        }
        guard size == hasher.total else { throw ObjectStoreError(.localFile, "\(source) changed while it was copied; \(what) not stored") }
        return (size, hasher.hex)
    }

    static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    static func modified(_ info: stat) -> Date {
        Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec) + TimeInterval(info.st_mtim.tv_nsec) / 1e9)
    }

    static func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(body)
    }
}
