import Foundation
import ReelProtocol

/// Ranged result uploads (`RESULTPART`, proto/PROTOCOL.md §4.2): the parts of a result are
/// appended in order to `results/<task>-<epoch>-<sha256>.partial` and hashed as they arrive, so
/// a result of any size is never held in memory and checking it at the end costs nothing more
/// than its last part. When the upload reaches its total, the digest is compared with the
/// declared one and the file renamed to `results/<sha256>`, exactly where a one-payload `RESULT`
/// puts it.
///
/// The running digests live in memory under the upload lock, keyed by partial path. A digest
/// that does not match the file's length (the coordinator restarted, or the file was swept) is
/// rebuilt from the file, so a resumed upload is always checked against the bytes on disk.
extension CoordinatorStorage {
    /// What a part did to its upload.
    enum ResultPartOutcome: Equatable {
        /// Stored; this many bytes are held.
        case held(Int64)
        /// The result is complete and verified at this path (`results/<sha256>`).
        case complete(path: String)
    }

    func partialResultPath(task: Int64, epoch: Int64, sha256: String) -> String {
        "\(root)/results/\(task)-\(epoch)-\(sha256).partial"
    }

    /// The task and epoch of a partial result's file name (`<task>-<epoch>-<sha256>.partial`);
    /// `nil` for any other name.
    static func partialResult(named name: String) -> (task: Int64, epoch: Int64)? {
        guard name.hasSuffix(".partial") else { return nil }
        let fields = name.dropLast(8).split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count == 3, let task = Int64(fields[0]), let epoch = Int64(fields[1]), task > 0, epoch > 0,
              isValidHash(String(fields[2])) else { return nil }
        return (task, epoch)
    }

    /// Appends `bytes` at `offset` of the result upload of `task` under `epoch`, whose whole is
    /// `total` bytes with SHA-256 `sha256`. In order: `offset` must equal the bytes held, else
    /// `ERR bad_range have=B`. A result whose bytes are already stored (content-addressed) is
    /// complete at once, whatever part is sent.
    /// - Throws: `bad_range`, or `checksum_mismatch` when the complete upload has another digest
    ///   (the upload is discarded).
    func appendResultPart(task: Int64, epoch: Int64, sha256: String, offset: Int64, total: Int64,
                          bytes: [UInt8]) throws -> ResultPartOutcome {
        try uploadState.withLock { digests in
            let partial = partialResultPath(task: task, epoch: epoch, sha256: sha256)
            let final = resultPath(sha256)
            if Self.fileSize(final) == total {
                digests[partial] = nil
                unlink(partial)
                return .complete(path: final)
            }
            let have = Self.fileSize(partial) ?? 0
            guard offset == have else {
                throw ReelProtocolError.outOfOrder(have: have, "the result upload of task \(task) holds \(have) bytes; "
                                                   + "send the part at offset \(have), not \(offset)")
            }
            let digest = try appendHashed(bytes, to: partial, of: .result(sha256: sha256), holding: have, total: total, digests: &digests)
            guard digest.byteCount == total else { return .held(digest.byteCount) }
            digests[partial] = nil
            let actual = digest.hex
            guard actual == sha256 else {
                unlink(partial)
                throw ReelProtocolError(.checksumMismatch, "the result of task \(task) has SHA-256 \(actual) (\(total) bytes), "
                                        + "not the declared \(sha256); upload discarded, send it again from offset 0")
            }
            guard rename(partial, final) == 0 else {
                throw ReelProtocolError(.internal, "cannot store result \(sha256): \(String(cString: strerror(errno)))")
            }
            return .complete(path: final)
        }
    }

    /// Removes the partial result uploads of `task` under `epoch` (its lease is gone: they can
    /// never complete). - Returns: the bytes freed.
    @discardableResult
    func discardResultUploads(task: Int64, epoch: Int64) -> Int64 {
        let names = list("results").map(\.name).filter { Self.partialResult(named: $0).map { $0 == (task, epoch) } ?? false }
        return names.reduce(0) { $0 + removePartialUpload(at: root + "/results/" + $1) }
    }

    /// Removes a partial upload (asset or result) and forgets its running digest, under the
    /// upload lock. - Returns: the bytes it held.
    func removePartialUpload(at path: String) -> Int64 {
        uploadState.withLock { digests in
            digests[path] = nil
            let size = Self.fileSize(path) ?? 0
            return unlink(path) == 0 ? size : 0
        }
    }
}
