import AsyncHTTPClient
import Crypto
import Foundation

/// A download written to a temporary name beside its destination, hashed as it arrives, checked
/// (length against `Content-Length`, and SHA-256 when one is expected), flushed, then renamed,
/// so the destination holds the whole verified object or is not touched. Shared by the S3
/// client's `GetObject` and by transfers through presigned URLs.
enum VerifiedDownload {
    /// A temporary name beside `path` for one download.
    static func temporaryPath(for path: String) -> String { path + ".download-" + UUID().uuidString }

    /// Streams `response`'s body into a new file at `temporary`; `what` names the request in
    /// errors (never a presigned URL's signature).
    /// - Returns: the bytes received and their SHA-256 (hex).
    static func receive(_ response: HTTPClientResponse, into temporary: String, what: String) async throws -> (Int64, String) {
        let file = try LocalFile.create(temporary)
        var hasher = SHA256()
        var offset: Int64 = 0
        for try await chunk in response.body {
            chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            try await file.write(chunk, at: offset)
            offset += Int64(chunk.readableBytes)
        }
        if let length = response.headers.first(name: "content-length").flatMap(Int64.init), length != offset {
            throw ObjectStoreError(.integrity, "\(what): received \(offset) of \(length) bytes")
        }
        try await file.sync()
        return (offset, SigV4Signer.hex(hasher.finalize()))
    }

    /// Checks `received` against `expectedSHA256` and moves `temporary` onto `path`.
    static func commit(_ received: (Int64, String), temporary: String, to path: String, expectedSHA256: String?,
                       what: String) throws -> (size: Int64, sha256: String) {
        if let expectedSHA256, received.1 != expectedSHA256 {
            throw ObjectStoreError(.integrity, "\(what): the object has SHA-256 \(received.1), not \(expectedSHA256)")
        }
        guard rename(temporary, path) == 0 else { throw LocalFile.error("cannot rename the download to \(path)") }
        return received
    }
}
