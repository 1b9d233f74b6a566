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
    /// Parts in flight at once: while one goes up, the next is read, hashed and given its URL
    /// (the store hashes what it receives, so one part at a time leaves the uploader and the
    /// store waiting on each other in turn). Each in-flight part holds its bytes in memory.
    public let window: Int

    public init(transfer: PresignedTransfer = PresignedTransfer(), window: Int = 1) {
        self.transfer = transfer
        self.window = max(1, window)
    }

    /// Sends the parts of the file at `path` that `upload` does not hold. Parts are read, hashed
    /// and given their URLs in order, up to `window` of them go up at once, and `sent` is told
    /// of each in order.
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
        let transfer = self.transfer
        /// A part on its way: its number, SHA-256, bytes and the `PUT` in flight.
        struct Flight {
            var number: Int
            var sha256: String
            var bytes: ByteBuffer
            var put: Task<Void, any Swift.Error>
        }
        var flying: [Flight] = []
        defer { for flight in flying { flight.put.cancel() } }
        // Waits for the oldest part in flight; a refused URL (403) is asked for once more and
        // the part sent again.
        func land() async throws {
            let flight = flying.removeFirst()
            do {
                try await Self.landed(flight.put)
            } catch let error as ObjectStoreError where error.code == .accessDenied {
                report.renewedURLs += 1
                let url = try await partURL(flight.number, flight.sha256, Int64(flight.bytes.readableBytes), true)
                try await transfer.put(url: url.url, headers: url.headers, bytes: flight.bytes)
            }
            report.uploaded.append(flight.number)
            try await sent(flight.number)
        }
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
            let url = try await partURL(number, sha256, Int64(range.count), false)
            flying.append(Flight(number: number, sha256: sha256, bytes: bytes,
                                 put: Task { try await transfer.put(url: url.url, headers: url.headers, bytes: bytes) }))
            if flying.count >= window { try await land() }
        }
        while !flying.isEmpty { try await land() }
        report.skipped = held.count
        return report
    }

    private static func landed(_ put: Task<Void, any Swift.Error>) async throws {
        try await put.value
    }
}
