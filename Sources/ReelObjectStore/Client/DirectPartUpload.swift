import Crypto
import Foundation
import NIOCore

/// Uploads a file as the parts of a multipart upload through presigned part URLs
/// (proto/PROTOCOL.md §4.5, "Uploads in parts"): the uploader side of submit's assets, agents'
/// results and outputs. Whoever hands out the URLs (the coordinator) creates, resumes and
/// completes the upload; this sends the parts it does not hold yet, one in memory at a time.
///
/// Each part is read, hashed, and sent through a URL bound to that SHA-256, so the store refuses
/// any other bytes. A 403 (the URL expired, or was refused) makes it ask for a new URL for that
/// part once; passing failures are retried by the transfer.
public struct DirectPartUpload: Sendable {
    /// One part's presigned `PUT`: its URL and the headers to send exactly.
    public struct PartURL: Sendable {
        public var url: String
        public var headers: [String: String]
        public init(url: String, headers: [String: String]) { self.url = url; self.headers = headers }
    }

    /// What an upload did.
    public struct Report: Hashable, Sendable {
        /// Parts sent (not counting a resend after a refused URL).
        public var uploaded: [Int] = []
        /// Parts the store held already, not sent.
        public var skipped: Int = 0
        /// Part URLs asked for again after a 403.
        public var renewedURLs: Int = 0
        /// Every part's SHA-256 (hex), part 1 first (held parts read and hashed too): what
        /// completing the upload needs.
        public var partSHA256s: [String] = []
    }

    public let transfer: PresignedTransfer

    public init(transfer: PresignedTransfer = PresignedTransfer()) { self.transfer = transfer }

    /// Sends the parts of the file at `path` that `upload` does not hold.
    /// - Parameters:
    ///   - partURL: a presigned `PUT` for a part (number, SHA-256 hex, byte count); asked again
    ///     with `renew` true after the store refused one.
    ///   - sent: called after each part is stored (progress; a test can stop the upload there).
    /// - Throws: `.localFile` when the file is not `upload.total` bytes; the transfer's errors.
    public func send(file path: String, upload: BlobUpload,
                     partURL: (_ part: Int, _ sha256: String, _ length: Int64, _ renew: Bool) async throws -> PartURL,
                     sent: (_ part: Int) async throws -> Void = { _ in }) async throws -> Report {
        let file = try LocalFile.openForReading(path)
        guard try file.size == upload.total else {
            throw ObjectStoreError(.localFile, "\(path) is \(try file.size) bytes, not the \(upload.total) it had when hashed; upload it again")
        }
        let held = Set(upload.held)
        var report = Report()
        for number in 1...upload.partCount {
            try Task.checkCancellation()
            let range = upload.range(ofPart: number)
            let bytes = try await file.read(offset: range.lowerBound, count: range.count)
            guard bytes.readableBytes == range.count else {
                throw ObjectStoreError(.localFile, "\(path) became shorter than \(upload.total) bytes during the upload")
            }
            let sha256 = bytes.withUnsafeReadableBytes { SigV4Signer.hex(SHA256.hash(data: $0)) }
            report.partSHA256s.append(sha256)
            if held.contains(number) { continue }
            var url = try await partURL(number, sha256, Int64(range.count), false)
            do {
                try await transfer.put(url: url.url, headers: url.headers, bytes: bytes)
            } catch let error as ObjectStoreError where error.code == .accessDenied {
                report.renewedURLs += 1
                url = try await partURL(number, sha256, Int64(range.count), true)
                try await transfer.put(url: url.url, headers: url.headers, bytes: bytes)
            }
            report.uploaded.append(number)
            try await sent(number)
        }
        report.skipped = held.count
        return report
    }
}
