import Foundation
import ReelCore
import ReelMedia
import ReelObjectStore
import ReelProtocol

/// The coordinator's blobs through the `BlobStore` interface (docs/object-storage.md): what
/// reads, writes, checks and deletes stored sources, results, posters and outputs goes through
/// `blobs`, so the same code serves the local directory and an S3 bucket. Uploads over `reel/1`
/// are assembled in the local directory first (`.partial` files, hashed as they arrive).
extension CoordinatorStorage {
    /// The name the database keeps for a stored blob (`result_key`, `output_key`): the file's
    /// path for the local directory (as before blob keys), the key's path under the store's
    /// root otherwise.
    func storedKey(_ key: BlobKey) -> String {
        isRemote ? key.relativePath : local.path(of: key)
    }

    /// The blob a database key names: a path under the local root (either layout's output
    /// path is the same), or a key's relative path; `nil` for anything else (never touched).
    func blobKey(storedKey text: String) -> BlobKey? {
        if text.hasPrefix(root + "/") { return BlobKey(relativePath: String(text.dropFirst(root.count + 1))) }
        return text.hasPrefix("/") ? nil : BlobKey(relativePath: text)
    }

    /// Why the stored blob `key` is not `size` bytes with SHA-256 `sha256` (when given: its bytes
    /// are read and hashed), or `nil` when it is. `storedSHA256`: compared with the SHA-256 the
    /// store reports on a HEAD, where it reports one (no bytes read).
    func problem(_ key: BlobKey, size: Int64, sha256: String?, storedSHA256: String? = nil) async -> String? {
        do {
            guard let info = try await blobs.info(key) else { return "missing" }
            guard info.size == size else { return "\(info.size) bytes instead of \(size)" }
            if let storedSHA256, let reported = info.sha256, reported != storedSHA256 {
                return "the store reports SHA-256 \(reported) instead of \(storedSHA256)"
            }
            guard let sha256 else { return nil }
            let path: String
            do {
                path = try await localCopy(key, size: size)
            } catch let error as ObjectStoreError where error.code == .integrity {
                return "its bytes do not have the content hash \(sha256)"
            }
            let actual = try await offload { try key.contentName(ofFile: path, size: size) ?? FileDigest.sha256(path: path).hex }
            return actual == sha256 ? nil : "content hash \(actual) instead of \(sha256)"
        } catch {
            return "unreadable (\(error))"
        }
    }

    /// The local file of a blob `size` bytes long, for what reads blobs as files (planning's
    /// probes, the finaliser): the directory's own file, or with an object store a copy in the
    /// directory, downloaded (and, for content keys, verified) when there is none of that size.
    func localCopy(_ key: BlobKey, size: Int64) async throws -> String {
        let path = local.path(of: key)
        guard isRemote, Self.fileSize(path) != size else { return path }
        // One download per blob however many ask at once (a job planned twice at the same time
        // would otherwise fetch its sources twice).
        let blobs = blobs
        let download = downloads.withLock { running -> Task<Void, any Error> in
            if let task = running[path] { return task }
            let task = Task { _ = try await blobs.download(key, to: path) }
            running[path] = task
            return task
        }
        defer { downloads.withLock { running in if running[path] == download { running[path] = nil } } }
        try await download.value
        return path
    }

    /// What planning probes the sources `assets` through: nothing (`MediaSources.local`, the
    /// directory's own files) for the local directory; with an object store, a byte-range
    /// source per asset under its `assetPath`, reading blocks of the stored object by ranged
    /// GETs with a small cache, so a probe moves only the headers and index libav reads
    /// (docs/object-storage.md). - Returns: the sources, and each one's counters (logs, tests).
    func planningSources(_ assets: [AssetManifestEntry]) -> (sources: MediaSources, blocks: [BlockCachedSource]) {
        guard isRemote else { return (.local, []) }
        var sources = MediaSources()
        var blocks: [BlockCachedSource] = []
        let blobs = blobs
        for entry in Set(assets.map(\.sha256)).sorted() {
            guard let size = assets.first(where: { $0.sha256 == entry })?.size else { continue }
            let key = BlobKey.asset(sha256: entry)
            let source = BlockCachedSource(size: size) { range in
                try awaitBlocking { try await blobs.read(key, range: range) }
            }
            sources.add(source, for: assetPath(entry))
            blocks.append(source)
        }
        return (sources, blocks)
    }

    /// Stores the local file of `key` (an upload completed and verified in the directory, an
    /// output the finaliser wrote) in the object store; nothing to do without one. A content
    /// key the store already holds is not sent again.
    func publish(_ key: BlobKey, sha256: String) async throws {
        guard isRemote else { return }
        do {
            try await blobs.write(key, file: local.path(of: key), sha256: sha256)
        } catch let error as ObjectStoreError {
            throw ReelProtocolError(.internal, "cannot store \(key) in the object store: \(error.message)")
        }
    }

    /// The size of a stored output named by its database key.
    func outputSize(storedKey text: String) async -> Int64? {
        guard let key = blobKey(storedKey: text) else { return nil }
        if let size = Self.fileSize(local.path(of: key)) { return size }
        return isRemote ? (try? await blobs.info(key))?.size : nil
    }

    /// Removes a damaged or unneeded asset: the directory's file under the upload lock, and
    /// the object store's copy.
    func removeAssetEverywhere(_ hash: String) async {
        removeAsset(hash)
        if isRemote { await delete([.asset(sha256: hash)]) }
    }

    /// Bytes held in sources, results and outputs: the directory's (`usage()`), or the object
    /// store's listing.
    func blobUsage() async throws -> StorageUsage {
        guard isRemote else { return try await offload { self.usage() } }
        var bytes: [BlobKind: Int64] = [:]
        for kind in [BlobKind.assets, .results, .outputs] {
            try await blobs.list(kind) { page in bytes[kind, default: 0] += page.reduce(0) { $0 + $1.size } }
        }
        return StorageUsage(assetBytes: bytes[.assets] ?? 0, resultBytes: bytes[.results] ?? 0, outputBytes: bytes[.outputs] ?? 0)
    }

    /// Up to `length` bytes of the stored blob from `offset`, and its size.
    /// - Throws: `not_found` when it is not stored, `bad_range` when `offset` is past its end.
    func readRange(_ key: BlobKey, offset: Int64, length: Int64) async throws -> (total: Int64, bytes: [UInt8]) {
        guard let info = try await blobs.info(key) else { throw ReelProtocolError(.notFound, "no such stored object") }
        guard offset >= 0, offset <= info.size else { throw ReelProtocolError(.badRange, "offset \(offset) is past the end (\(info.size) bytes)") }
        let end = offset + min(max(length, 0), info.size - offset)
        do {
            let bytes = try await blobs.read(key, range: offset..<end)
            guard Int64(bytes.count) == end - offset else { throw ReelProtocolError(.internal, "short read of a stored object") }
            return (info.size, bytes)
        } catch let error as ObjectStoreError where error.code == .notFound {
            throw ReelProtocolError(.notFound, "no such stored object")
        }
    }

    /// The whole stored blob, or `nil` when it is not stored (posters).
    func readWhole(_ key: BlobKey) async throws -> [UInt8]? {
        do {
            return try await readRange(key, offset: 0, length: Int64.max).bytes
        } catch let error as ReelProtocolError where error.code == .notFound {
            return nil
        }
    }

    /// Verifies a task result held in memory and stores it under its content key (once: the
    /// same bytes are already there when another task made them). - Returns: its stored key.
    func storeResult(_ bytes: [UInt8], sha256: String) async throws -> String {
        let digest = FileDigest.sha256(bytes: bytes)
        guard digest == sha256 else {
            throw ReelProtocolError(.checksumMismatch, "result has SHA-256 \(digest) (\(bytes.count) bytes), not the declared \(sha256)")
        }
        try await store(.result(sha256: sha256), bytes: bytes)
        return storedKey(.result(sha256: sha256))
    }

    /// Stores `bytes` under `key`; a store's failure is an internal error that names the key.
    func store(_ key: BlobKey, bytes: [UInt8]) async throws {
        do {
            try await blobs.write(key, bytes: bytes)
        } catch let error as ObjectStoreError {
            throw ReelProtocolError(.internal, "cannot store \(key): \(error.message)")
        }
    }

    /// The job's newest poster, or `nil` when it has none (yet).
    func poster(job: Int64) async throws -> [UInt8]? { try await readWhole(.poster(job: job)) }

    /// Stores the job's newest poster in place of the last (a reader sees a whole picture).
    func storePoster(job: Int64, jpeg: [UInt8]) async throws { try await store(.poster(job: job), bytes: jpeg) }

    /// Deletes stored blobs; a failure is logged by the caller's caller at most (retention
    /// sweeps and deletions retry by themselves), so it is reported, not thrown.
    /// - Returns: the keys that could not be deleted, with why.
    @discardableResult
    func delete(_ keys: [BlobKey]) async -> [(BlobKey, Error)] {
        var failed: [(BlobKey, Error)] = []
        for key in keys {
            do {
                try await blobs.delete(key)
                if isRemote { unlink(local.path(of: key)) }
            } catch {
                failed.append((key, error))
            }
        }
        return failed
    }
}
