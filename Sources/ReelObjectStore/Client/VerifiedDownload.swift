import AsyncHTTPClient
import Crypto
import Foundation
import Synchronization

/// A download written to a temporary name beside its destination, hashed as it arrives, checked
/// (its length against the object's size, and its SHA-256 when one is expected), flushed, then
/// renamed, so the destination holds the whole verified object or is not touched. Shared by the
/// S3 client's `GetObject` and by transfers through presigned URLs.
///
/// **Resumable.** One value lives across the attempts of one download. When the connection
/// drops mid-body, the next attempt asks only for the rest (`rangeHeader`: `Range: bytes=N-`,
/// which a presigned `GET` allows since the header is not signed), and the hash goes on from
/// the bytes already written, so the SHA-256 is still of the whole object. The rest must be of
/// the same object: a `206` whose `Content-Range` total or `ETag` differs from the first
/// answer's means the object was replaced mid-download, which fails with `.integrity` (nothing
/// is kept). A server that ignores `Range` and answers `200` with the whole object is read
/// again from byte 0 (`restarts`).
final class VerifiedDownload: Sendable {
    private struct State {
        var file: LocalFile?
        var hasher = SHA256()
        /// With `assetName`: the asset's content name as it arrives (`ContentDigest`: its
        /// SHA-256, or past 16 MiB its tree hash), instead of `hasher`.
        var digest: ContentDigest?
        var received: Int64 = 0
        /// The object's size and ETag, from the first answer.
        var total: Int64?
        var etag: String?
        var resumes = 0
        var restarts = 0
    }

    /// A body that ended (or broke) before the object's last byte: the transfer retries it,
    /// and the retry resumes.
    struct Cut: Error, CustomStringConvertible {
        var description: String
    }

    let temporary: String
    let what: String
    /// Hash as an asset is named (`AssetAddress`) rather than by plain SHA-256.
    let assetName: Bool
    private let state = Mutex(State())

    /// - Parameters:
    ///   - path: the destination; the download is written beside it.
    ///   - what: names the request in errors (never a presigned URL's signature).
    ///   - assetName: compute the asset's content name as the bytes arrive (one read of
    ///     them), which `commit` returns and checks in place of a plain SHA-256.
    init(to path: String, what: String, assetName: Bool = false) {
        temporary = path + ".download-" + UUID().uuidString
        self.what = what
        self.assetName = assetName
    }

    deinit { unlink(temporary) }

    /// The `Range` header for the next attempt: none for the first, `bytes=N-` once `N` bytes
    /// are held.
    var rangeHeader: String? {
        state.withLock { $0.received > 0 ? "bytes=\($0.received)-" : nil }
    }

    /// Attempts that continued with a `Range` request, and that started again from byte 0
    /// because the server answered `200`.
    var resumes: Int { state.withLock { $0.resumes } }
    var restarts: Int { state.withLock { $0.restarts } }

    /// Streams `response`'s body into the temporary file, after the bytes held (a `206` to the
    /// `rangeHeader` asked for) or from byte 0 (a `200`).
    /// - Throws: `Cut` when the body ends before the object's last byte (retryable);
    ///   `.integrity` when the object changed since the first answer.
    func receive(_ response: HTTPClientResponse) async throws {
        let etag = response.headers.first(name: "etag")
        let length = response.headers.first(name: "content-length").flatMap(Int64.init)
        let (file, start) = try state.withLock { state -> (LocalFile, Int64) in
            if state.received > 0, response.status == .partialContent {
                let range = response.headers.first(name: "content-range").flatMap(Self.contentRange)
                guard let range, range.start == state.received else {
                    throw ObjectStoreError(.protocolViolation, "\(what): asked for the bytes from \(state.received), the server answered "
                                           + "Content-Range \(response.headers.first(name: "content-range") ?? "(none)")")
                }
                if range.total != state.total || (etag != nil && state.etag != nil && etag != state.etag) {
                    throw ObjectStoreError(.integrity, "\(what): the object changed during the download (it was \(state.total.map(String.init) ?? "?") "
                                           + "bytes with ETag \(state.etag ?? "?"), and is now \(range.total.map(String.init) ?? "?") bytes with ETag "
                                           + "\(etag ?? "?")); download it again")
                }
                state.resumes += 1
            } else {
                // The first answer, or a server that ignored the Range: the whole object, from 0.
                if state.received > 0 { state.restarts += 1 }
                state.file = try LocalFile.create(temporary)
                state.hasher = SHA256()
                state.digest = assetName ? length.map { ContentDigest(total: $0, partSize: AssetAddress.partSize(total: $0)) } : nil
                state.received = 0
                state.total = length
                state.etag = etag
            }
            return (state.file!, state.received)
        }
        var offset = start
        do {
            for try await chunk in response.body {
                try await file.write(chunk, at: offset)
                offset += Int64(chunk.readableBytes)
                state.withLock { state in
                    chunk.withUnsafeReadableBytes { bytes in
                        if state.digest != nil { state.digest!.update(bytes) } else { state.hasher.update(bufferPointer: bytes) }
                    }
                    state.received = offset
                }
            }
        } catch let error as ObjectStoreError {
            throw error
        } catch {
            // Broken off: unless every byte is here already, the next attempt resumes.
            if let total = state.withLock({ $0.total }), offset == total { return }
            throw Cut(description: "the connection broke after \(offset) bytes: \(error)")
        }
        if let total = state.withLock({ $0.total }), offset < total {
            throw Cut(description: "the body ended after \(offset) of \(total) bytes")
        }
    }

    /// Checks the bytes received against the object's size and `expectedSHA256`, flushes them
    /// and moves the temporary file onto `path`.
    /// - Returns: the object's size and SHA-256 (hex).
    func commit(to path: String, expectedSHA256: String?) async throws -> (size: Int64, sha256: String) {
        let (file, received, total, streamed) = state.withLock { state in
            (state.file, state.received, state.total, state.digest?.hex ?? (assetName ? nil : SigV4Signer.hex(state.hasher.finalize())))
        }
        // An asset whose size the answer did not give is named from the file, once it is whole.
        let sha256 = try streamed ?? AssetAddress.name(ofFile: temporary).name
        if let total, total != received {
            throw ObjectStoreError(.integrity, "\(what): received \(received) of \(total) bytes")
        }
        if let expectedSHA256, sha256 != expectedSHA256 {
            throw ObjectStoreError(.integrity, "\(what): the object has SHA-256 \(sha256), not \(expectedSHA256)")
        }
        guard let file else { throw ObjectStoreError(.integrity, "\(what): no answer was received") }
        try await file.sync()
        guard rename(temporary, path) == 0 else { throw LocalFile.error("cannot rename the download to \(path)") }
        return (received, sha256)
    }

    /// `bytes START-END/TOTAL` (TOTAL may be `*`).
    static func contentRange(_ value: String) -> (start: Int64, total: Int64?)? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard text.hasPrefix("bytes ") else { return nil }
        let parts = text.dropFirst("bytes ".count).split(separator: "/", maxSplits: 1)
        guard parts.count == 2, let start = parts[0].split(separator: "-").first.flatMap({ Int64($0) }) else { return nil }
        return (start, Int64(parts[1]))
    }
}
