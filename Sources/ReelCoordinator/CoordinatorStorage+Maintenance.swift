import Foundation
import ReelProtocol

/// Checking stored files against what the database says about them, listing and sizing the
/// storage directories. Asset files are verified by SHA-256 once, when their upload
/// completes; afterwards existence and size are checked at `SUBMIT` and at planning (cheap,
/// and what a lost or truncated file shows), and chunk results are checked by SHA-256 again at
/// finalising, where a wrong byte would otherwise end up in the output.
extension CoordinatorStorage {
    /// Removes a damaged or unneeded asset file, under the upload lock.
    func removeAsset(_ hash: String) {
        withUploadLock { _ = unlink(assetPath(hash)) }
    }

    /// Regular files in `sub` (`assets`, `results`, `outputs`, `tmp`) with their modification
    /// times: those directly in it (uploads in progress, outputs) and, in the content folders,
    /// the blobs in `sha256/XX/` named by their hash (so a name is a hash or a partial upload's).
    func list(_ sub: String) -> [StoredFile] {
        files(sub).map(\.file)
    }

    /// `list(sub)` with each file's path and size.
    private func files(_ sub: String) -> [(file: StoredFile, path: String, size: Int64)] {
        func regularFiles(in directory: String, where keep: (String) -> Bool) -> [(file: StoredFile, path: String, size: Int64)] {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
            return names.compactMap { name in
                var info = stat()
                let path = directory + "/" + name
                guard keep(name), stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
                let millis = Int64(info.st_mtim.tv_sec) * 1000 + Int64(info.st_mtim.tv_nsec) / 1_000_000
                return (StoredFile(name: name, modifiedMillis: millis), path, Int64(info.st_size))
            }
        }
        var found = regularFiles(in: root + "/" + sub) { _ in true }
        if Self.contentFolders.contains(sub) {
            for prefix in Self.hashPrefixes {
                found += regularFiles(in: root + "/" + sub + "/sha256/" + prefix) { Self.isValidHash($0) && $0.hasPrefix(prefix) }
            }
        }
        return found
    }

    /// Bytes held in each directory (`.partial` uploads count as assets).
    func usage() -> StorageUsage {
        func bytes(_ sub: String) -> Int64 { files(sub).reduce(0) { $0 + $1.size } }
        return StorageUsage(assetBytes: bytes("assets"), resultBytes: bytes("results"), outputBytes: bytes("outputs"))
    }
}
