import Crypto
import Foundation
import ReelObjectStore
import Synchronization
import Testing

/// Verified downloads that resume (`VerifiedDownload`): the real SeaweedFS behind a loopback
/// proxy (`CuttingProxy`) that drops the connection in the middle of an answer. The download goes
/// on with a `Range: bytes=N-` request — through a presigned URL, where the header is not
/// signed, and through the S3 client's signed `GetObject` — and ends with the whole object's
/// SHA-256; a server that ignores the `Range` is read again from byte 0; an object replaced
/// between the two halves fails with an error that says so.
@Suite(.blocking, .serialized, .enabled(if: TestS3.isConfigured, TestS3.skipReason))
struct ResumedDownloadTests {
    static let size = 3 << 20
    static let cutAfter = 1 << 20

    /// An object of `size` bytes and its SHA-256, and a client that signs for the proxy's address.
    static func setUp(_ name: String, _ settings: CuttingProxy.Settings, seed: UInt64 = 7)
        async throws -> (proxy: CuttingProxy, viaProxy: S3Client, key: String, bytes: [UInt8], sha256: String) {
        let direct = try await TestS3.client()
        let key = TestS3.prefix(name) + "object.bin"
        let bytes = TestS3.bytes(size, seed: seed)
        _ = try await direct.putObject(key: key, bytes: bytes)
        let upstream = try #require(URL(string: TestS3.environment["REEL_TEST_S3_ENDPOINT"] ?? ""))
        let proxy = try CuttingProxy(upstream: upstream, settings)
        let viaProxy = S3Client(configuration: S3ClientConfiguration(endpoint: try S3Endpoint(proxy.endpoint), bucket: TestS3.bucket),
                                credentials: try TestS3.credentials())
        return (proxy, viaProxy, key, bytes, Self.hex(SHA256.hash(data: bytes)))
    }

    static func hex(_ digest: SHA256.Digest) -> String { digest.map { String(format: "%02x", $0) }.joined() }

    static func destination() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("reel-resumed-\(UUID().uuidString)").path
    }

    /// The `Range` header of a request head, if any.
    static func range(_ head: String) -> String? {
        head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("range:") }
            .map { $0.dropFirst("range:".count).trimmingCharacters(in: .whitespaces) }
    }

    /// Counts what the download reported.
    final class Counts: Sendable {
        let value = Mutex((resumes: -1, restarts: -1))
        func set(_ resumes: Int, _ restarts: Int) { value.withLock { $0 = (resumes, restarts) } }
    }

    /// Downloads `key` through a presigned GET via the proxy, checks the file is `bytes` whole
    /// and its SHA-256 right, and returns how many times the download resumed and restarted.
    static func presignedDownload(_ viaProxy: S3Client, key: String, bytes: [UInt8], sha256: String) async throws -> (resumes: Int, restarts: Int) {
        let url = try viaProxy.presign(.getObject(key: key))
        let path = Self.destination()
        defer { unlink(path) }
        let counts = Counts()
        let got = try await PresignedTransfer().download(url: url.url, headers: url.headers, to: path, expectedSHA256: sha256,
                                                         report: { counts.set($0, $1) })
        #expect(got.size == Int64(bytes.count) && got.sha256 == sha256)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(bytes))
        return counts.value.withLock { $0 }
    }

    @Test func aPresignedDownloadCutMidBodyResumesWithARangeRequest() async throws {
        let (proxy, viaProxy, key, bytes, sha256) = try await Self.setUp("resume-presigned", .init(cutAfter: Self.cutAfter))
        defer { proxy.stop() }
        #expect(try await Self.presignedDownload(viaProxy, key: key, bytes: bytes, sha256: sha256) == (1, 0))
        let requests = proxy.requests
        #expect(requests.count == 2, "\(requests)")
        #expect(requests.first.flatMap(Self.range) == nil)
        // The second asks for the rest: from what the first delivered (the cut fell after the
        // answer's head, somewhere in its body).
        let resumed = try #require(requests.last.flatMap(Self.range), "the resumed request has a Range header")
        let from = try #require(Int(resumed.dropFirst("bytes=".count).dropLast()), "\(resumed)")
        #expect(resumed.hasPrefix("bytes=") && resumed.hasSuffix("-") && from > 0 && from < Self.cutAfter, "\(resumed)")
    }

    @Test func aSignedGetObjectDownloadCutTwiceResumesEachTime() async throws {
        let (proxy, viaProxy, key, bytes, sha256) = try await Self.setUp("resume-signed", .init(cutAfter: Self.cutAfter, cuts: 2))
        defer { proxy.stop() }
        let path = Self.destination()
        defer { unlink(path) }
        let got = try await viaProxy.download(key: key, to: path, expectedSHA256: sha256)
        #expect(got.size == Int64(bytes.count) && got.sha256 == sha256)
        let ranges = proxy.requests.map(Self.range)
        #expect(ranges.count == 3 && ranges[0] == nil && ranges[1] != nil && ranges[2] != nil && ranges[1] != ranges[2], "\(ranges)")
    }

    @Test func aServerThatAnswersTheRangeWith200IsReadAgainFromByteZero() async throws {
        let (proxy, viaProxy, key, bytes, sha256) = try await Self.setUp("resume-ignored", .init(cutAfter: Self.cutAfter, stripRange: true))
        defer { proxy.stop() }
        #expect(try await Self.presignedDownload(viaProxy, key: key, bytes: bytes, sha256: sha256) == (0, 1), "no resume, one restart from 0")
    }

    @Test func anObjectReplacedMidDownloadFailsSayingSo() async throws {
        let (proxy, viaProxy, key, _, sha256) = try await Self.setUp("resume-replaced", .init(cutAfter: Self.cutAfter, holdAtCut: true))
        defer { proxy.stop() }
        let url = try viaProxy.presign(.getObject(key: key))
        let path = Self.destination()
        defer { unlink(path) }
        let (cut, reached) = AsyncStream<Void>.makeStream()
        proxy.onCut { reached.yield() }
        let download = Task { try await PresignedTransfer().download(url: url.url, headers: url.headers, to: path, expectedSHA256: sha256) }
        for await _ in cut { break }
        // Replaced while the first answer hangs at its cut: other bytes, the same size.
        _ = try await TestS3.client().putObject(key: key, bytes: TestS3.bytes(Self.size, seed: 8))
        proxy.release()
        do {
            _ = try await download.value
            Issue.record("the download of a replaced object succeeded")
        } catch let error as ObjectStoreError {
            #expect(error.code == .integrity && error.message.contains("the object changed during the download"), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: path), "nothing is kept")
        #expect(proxy.requests.last.flatMap(Self.range) != nil, "the second request resumed")
    }
}
