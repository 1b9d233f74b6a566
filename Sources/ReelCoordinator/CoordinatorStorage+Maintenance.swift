import Foundation
import ReelMedia
import ReelProtocol

/// Checking stored files against what the database says about them, listing and sizing the
/// storage directories (issue 8). Asset files are verified by SHA-256 once, when their upload
/// completes; afterwards existence and size are checked at `SUBMIT` and at planning (cheap,
/// and what a lost or truncated file shows), and chunk results are checked by SHA-256 again at
/// finalising, where a wrong byte would otherwise end up in the output.
extension CoordinatorStorage {
    /// Why the file at `path` is not `size` bytes with SHA-256 `sha256`, or `nil` when it is.
    static func problem(path: String, size: Int64, sha256: String?) -> String? {
        guard let actual = fileSize(path) else { return "missing" }
        guard actual == size else { return "\(actual) bytes instead of \(size)" }
        guard let sha256 else { return nil }
        guard let digest = try? FileDigest.sha256(path: path) else { return "unreadable" }
        return digest.1 == sha256 ? nil : "SHA-256 \(digest) instead of \(sha256)"
    }

    /// Removes a damaged or unneeded asset file, under the upload lock.
    func removeAsset(_ hash: String) {
        withUploadLock { _ = unlink(assetPath(hash)) }
    }

    /// Regular files directly in `sub` (`assets`, `results`, `outputs`, `tmp`) with their
    /// modification times.
    func list(_ sub: String) -> [StoredFile] {
        let directory = root + "/" + sub
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return names.compactMap { name in
            var info = stat()
            guard stat(directory + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
            return StoredFile(name: name, modifiedMillis: Int64(info.st_mtim.tv_sec) * 1000 + Int64(info.st_mtim.tv_nsec) / 1_000_000)
        }
    }

    /// Bytes held in each directory (`.partial` uploads count as assets).
    func usage() -> StorageUsage {
        func bytes(_ sub: String) -> Int64 {
            list(sub).reduce(0) { $0 + (Self.fileSize(root + "/" + sub + "/" + $1.name) ?? 0) }
        }
        return StorageUsage(assetBytes: bytes("assets"), resultBytes: bytes("results"), outputBytes: bytes("outputs"))
    }
}
