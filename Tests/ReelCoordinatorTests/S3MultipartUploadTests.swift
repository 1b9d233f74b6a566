import Crypto
import Foundation
import NIOCore
import ReelCoordinator
import ReelMedia
import ReelObjectStore
import ReelProtocol
import Testing

/// Direct uploads in parts (proto/PROTOCOL.md §4.5, "Uploads in parts") against the real
/// SeaweedFS: a blob larger than the coordinator's part size goes to the store as a multipart
/// upload through one presigned URL per part; an interrupted upload is resumed with only the
/// missing parts; refused part URLs are asked for again; the coordinator completes the upload.
/// An asset in parts is named by the tree hash of its parts (`AssetAddress`), which the store
/// checks part by part: the coordinator reads none of its bytes back.
@Suite(.database, .enabled(if: CoordinatorS3.isConfigured, CoordinatorS3.skipReason))
struct S3MultipartUploadTests {
    /// Results' part size (the coordinator's `directPartSize` here); assets have their own
    /// layout, `AssetAddress.basePartSize`.
    static let partSize: Int64 = 5 << 20
    static let assetPartSize = AssetAddress.basePartSize

    /// A file of `size` pseudo-random bytes (seeded, so two calls with a seed make the same
    /// bytes): its SHA-256 and its asset name (`AssetAddress`, the tree hash past 16 MiB).
    static func file(_ directory: URL, _ name: String, size: Int, seed: UInt64) throws -> (path: String, sha256: String, name: String) {
        var state = seed
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.withUnsafeMutableBytes { raw in
            for index in 0..<size {
                if index % 4 == 0 { state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407 }
                raw[index] = UInt8(truncatingIfNeeded: state >> (33 + 8 * UInt64(index % 4)))
            }
        }
        let path = directory.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined(), AssetAddress.name(of: bytes))
    }

    /// Counts the PARTURLs a test sends, by part number.
    final class PartURLLog: @unchecked Sendable {
        private let lock = NSLock()
        private var parts: [Int] = []
        func add(_ part: Int) { lock.lock(); parts.append(part); lock.unlock() }
        var all: [Int] { lock.lock(); defer { lock.unlock() }; return parts }
    }

    struct Interrupted: Error {}

    /// A `PARTURL` over `client`, logged; `spoil` may replace the URL handed back (a tampered or
    /// expired one) the first time a part is asked for.
    static func partURL(_ client: ReelClient, sha256: String, upload: String, log: PartURLLog, task: (Int64, Int64)? = nil,
                        spoil: @escaping (Int, DirectURL) throws -> DirectURL? = { _, _ in nil })
        -> (Int, String, Int64, Bool) async throws -> DirectPartUpload.PartURL {
        { part, partSHA256, length, renew in
            log.add(part)
            let request = PartURLRequest(sha256: sha256, upload: upload, part: part, partSHA256: partSHA256, length: length,
                                         task: task?.0, epoch: task?.1)
            guard case .url(let url) = try await client.send(.partURL(request)) else { throw TestFailure(description: "PARTURL gave no URL") }
            #expect(url.method == "PUT" && url.total == length && url.headers["x-amz-checksum-sha256"] != nil)
            let given = renew ? nil : try spoil(part, url)
            return DirectPartUpload.PartURL(url: (given ?? url).url, headers: (given ?? url).headers)
        }
    }

    @Test func anAssetInPartsResumesAfterAnInterruptionAndRecoversFromRefusedURLs() async throws {
        let settings = try await CoordinatorS3.settings("multipart")
        try await withCoordinator(configure: { $0.objectStore = settings; $0.directPartSize = Self.partSize }) { media, harness, client in
            // 4 parts: 16, 16, 16 MiB and 123 bytes (an asset's layout, whatever the
            // coordinator's part size for results).
            let asset = try Self.file(media.directory, "big.bin", size: 3 * Int(Self.assetPartSize) + 123, seed: 1)
            let total = Int64(3 * Self.assetPartSize + 123)
            let metricsBefore = try harness.metricValue("reel_bytes_in_total")
            let readBefore = try harness.metricValue("reel_object_store_bytes_read_total")

            // The plain SHA-256 of a large asset is not its name: an old client's upload in
            // parts would be refused at completion, and one PUT is refused at once.
            await expectRefusal(.malformed) { _ = try await client.send(.assetURL(sha256: asset.name, total: total)) }
            guard case .parts(let hash, let upload, let partSize, let size, let have) = try await client.send(.assetParts(sha256: asset.name, total: total)) else {
                Issue.record("ASSETPARTS gave no PARTS"); return
            }
            #expect(hash == asset.name && partSize == Self.assetPartSize && size == total && have.isEmpty)

            // The first upload stops after its second part (as a lost connection or a killed
            // `reel submit` would).
            let log = PartURLLog()
            var sent = 0
            do {
                _ = try await DirectPartUpload().send(file: asset.path, upload: BlobUpload(id: upload, total: total, partSize: partSize, held: have),
                                                      partURL: Self.partURL(client, sha256: asset.name, upload: upload, log: log)) { _ in
                    sent += 1
                    if sent == 2 { throw Interrupted() }
                }
                Issue.record("the upload was not interrupted")
            } catch is Interrupted {}
            #expect(log.all == [1, 2])

            // Said done too early: the coordinator finds parts 3 and 4 missing and completes nothing.
            let hashes = try Self.partHashes(asset.path, partSize: partSize)
            await expectRefusal(.notFound) {
                _ = try await client.send(.assetDone(sha256: asset.name, total: total, upload: UploadedParts(id: upload, partSHA256s: hashes)))
            }

            // Asked again: the same upload, parts 1 and 2 held.
            guard case .parts(_, let again, _, _, let held) = try await client.send(.assetParts(sha256: asset.name, total: total)) else {
                Issue.record("ASSETPARTS gave no PARTS the second time"); return
            }
            #expect(again == upload && held == [1, 2])

            // The resumed upload: part 3's first URL is tampered with (its signature changed),
            // part 4's expired (signed an hour ago for 60 s); the store refuses both (403) and
            // the uploader asks for each part's URL once more.
            let past = S3Client(configuration: S3ClientConfiguration(endpoint: settings.endpoint, bucket: settings.location.bucket),
                                credentials: try #require(settings.credentials), now: { Date().addingTimeInterval(-3600) })
            let key = settings.location.objectKey(BlobKey.asset(sha256: asset.name).relativePath)
            let resumed = PartURLLog()
            let report = try await DirectPartUpload().send(
                file: asset.path, upload: BlobUpload(id: again, total: total, partSize: partSize, held: held),
                partURL: Self.partURL(client, sha256: asset.name, upload: again, log: resumed) { part, url in
                    if part == 3 {
                        var tampered = url
                        let last = tampered.url.removeLast()
                        tampered.url.append(last == "0" ? "1" : "0")
                        return tampered
                    }
                    let expired = try past.presign(.uploadPart(key: key, uploadID: again, partNumber: part,
                                                               sha256: try #require(Self.hex(url.headers["x-amz-checksum-sha256"] ?? ""))),
                                                   expires: 60)
                    return DirectURL(method: "PUT", url: expired.url, headers: expired.headers, expiresAtMillis: 0, total: url.total)
                })
            #expect(report.uploaded == [3, 4] && report.skipped == 2 && report.renewedURLs == 2)
            #expect(resumed.all == [3, 3, 4, 4], "only the missing parts, each asked again once after the refusal")

            // Completed by the tree of the parts' SHA-256s, without a byte of the object read
            // back by the coordinator; it is the file (read here by the test).
            #expect(report.partSHA256s == hashes)
            #expect(AssetAddress.tree(partSize: Self.assetPartSize, total: total, partSHA256s: hashes) == asset.name)
            #expect(try await client.send(.assetDone(sha256: asset.name, total: total, upload: UploadedParts(id: again, partSHA256s: hashes)))
                    == .stored(sha256: asset.name, have: total, total: total))
            #expect(try harness.metricValue("reel_object_store_bytes_read_total") == readBefore,
                    "the coordinator read the asset back from the store")
            let stored = try await CoordinatorS3.client().sha256(ofObject: key)
            #expect(stored.size == total && stored.sha256 == asset.sha256)
            let head = try #require(try await CoordinatorS3.client().headObject(key: key))
            #expect(head.etag.hasSuffix("-4\"") || head.etag.hasSuffix("-4"), "a 4-part object: \(head.etag)")
            #expect(try await CoordinatorS3.client().listMultipartUploads(prefix: key).isEmpty)
            // Asked again once stored: STORED at once.
            #expect(try await client.send(.assetParts(sha256: asset.name, total: total)) == .stored(sha256: asset.name, have: total, total: total))
            // Not one asset byte over reel/1.
            #expect(try harness.metricValue("reel_bytes_in_total") == metricsBefore)
        }
    }

    /// Parts that are not the bytes the key names cannot be stored under it, and the
    /// coordinator learns so without reading them: another file of the same size uploaded
    /// under the asset's name is refused for its part SHA-256s, whose tree is not the name; the
    /// same parts completed with the asset's own part SHA-256s (a client trying to poison the
    /// store) are refused by the store, which checks every part against them. Nothing is
    /// stored, and no byte is read back.
    @Test func partsOfOtherBytesCannotBeStoredUnderAnAssetsName() async throws {
        let settings = try await CoordinatorS3.settings("multipart-bad")
        try await withCoordinator(configure: { $0.objectStore = settings; $0.directPartSize = Self.partSize }) { media, harness, client in
            let size = Int(Self.assetPartSize) + 77
            let asset = try Self.file(media.directory, "a.bin", size: size, seed: 2)
            let other = try Self.file(media.directory, "b.bin", size: size, seed: 3)
            let total = Int64(size)
            let readBefore = try harness.metricValue("reel_object_store_bytes_read_total")
            let key = settings.location.objectKey(BlobKey.asset(sha256: asset.name).relativePath)
            guard case .parts(_, let upload, let partSize, _, _) = try await client.send(.assetParts(sha256: asset.name, total: total)) else {
                Issue.record("ASSETPARTS gave no PARTS"); return
            }
            let report = try await DirectPartUpload().send(file: other.path, upload: BlobUpload(id: upload, total: total, partSize: partSize, held: []),
                                                  partURL: Self.partURL(client, sha256: asset.name, upload: upload, log: PartURLLog()))
            await expectRefusal(.checksumMismatch) {
                _ = try await client.send(.assetDone(sha256: asset.name, total: total, upload: UploadedParts(id: upload, partSHA256s: report.partSHA256s)))
            }
            #expect(try await CoordinatorS3.client().headObject(key: key) == nil)

            // The same parts, said to be the asset's.
            let lies = try Self.partHashes(asset.path, partSize: partSize)
            #expect(AssetAddress.tree(partSize: partSize, total: total, partSHA256s: lies) == asset.name)
            await expectRefusal(.checksumMismatch) {
                _ = try await client.send(.assetDone(sha256: asset.name, total: total, upload: UploadedParts(id: upload, partSHA256s: lies)))
            }
            #expect(try await CoordinatorS3.client().headObject(key: key) == nil)
            #expect(try await CoordinatorS3.client().listMultipartUploads(prefix: key).isEmpty, "the poisoned upload was aborted")
            #expect(try harness.metricValue("reel_object_store_bytes_read_total") == readBefore)

            // The asset itself then goes up and is stored under its name.
            guard case .parts(_, let fresh, _, _, let held) = try await client.send(.assetParts(sha256: asset.name, total: total)) else {
                Issue.record("ASSETPARTS gave no PARTS after the refusal"); return
            }
            #expect(fresh != upload && held.isEmpty)
            let good = try await DirectPartUpload().send(file: asset.path, upload: BlobUpload(id: fresh, total: total, partSize: partSize, held: []),
                                                partURL: Self.partURL(client, sha256: asset.name, upload: fresh, log: PartURLLog()))
            #expect(try await client.send(.assetDone(sha256: asset.name, total: total, upload: UploadedParts(id: fresh, partSHA256s: good.partSHA256s)))
                    == .stored(sha256: asset.name, have: total, total: total))
            let stored = try await CoordinatorS3.client().sha256(ofObject: key)
            #expect(stored.size == total && stored.sha256 == asset.sha256)
            #expect(try harness.metricValue("reel_object_store_bytes_read_total") == readBefore)
        }
    }

    /// An agent's result in parts: `RESULTPARTS`, `PARTURL` fenced by the lease, `RESULTDONE
    /// upload=` completing the upload and counting the task; small results still get one `PUT`.
    @Test func aResultInPartsIsFencedAndCounted() async throws {
        let settings = try await CoordinatorS3.settings("multipart-result")
        try await withCoordinator(configure: { $0.objectStore = settings; $0.directPartSize = Self.partSize }) { media, harness, client in
            _ = try await LeaseTests.queuedJob(client, media, withAudio: true)
            let agent = try await harness.agent("render-01")
            guard case .task(let assignment, _) = try await agent.send(.claim(waitSeconds: 60)) else { Issue.record("no task"); return }
            let (task, epoch) = (assignment.task, assignment.epoch)
            let result = try Self.file(media.directory, "chunk.bin", size: 2 * Int(Self.partSize) + 5, seed: 4)
            let total = 2 * Self.partSize + 5
            // A small result: one PUT, as RESULTURL.
            guard case .url(let small) = try await agent.send(.resultParts(task: task, epoch: epoch, sha256: result.sha256, total: 1000)) else {
                Issue.record("a small RESULTPARTS gave no URL"); return
            }
            #expect(small.method == "PUT" && small.total == 1000)
            await expectRefusal(.staleEpoch) { _ = try await agent.send(.resultParts(task: task, epoch: epoch + 1, sha256: result.sha256, total: total)) }
            guard case .parts(_, let upload, let partSize, _, let have) = try await agent.send(.resultParts(task: task, epoch: epoch, sha256: result.sha256, total: total)) else {
                Issue.record("RESULTPARTS gave no PARTS"); return
            }
            #expect(partSize == Self.partSize && have.isEmpty)
            // A part URL under another epoch, or without the lease, is refused.
            let part = PartURLRequest(sha256: result.sha256, upload: upload, part: 1, partSHA256: result.sha256, length: 10)
            await expectRefusal(.malformed) { _ = try await agent.send(.partURL(part)) }
            var stale = part; stale.task = task; stale.epoch = epoch + 1
            await expectRefusal(.staleEpoch) { _ = try await agent.send(.partURL(stale)) }

            let log = PartURLLog()
            let report = try await DirectPartUpload().send(file: result.path, upload: BlobUpload(id: upload, total: total, partSize: partSize, held: have),
                                                           partURL: Self.partURL(agent, sha256: result.sha256, upload: upload, log: log, task: (task, epoch)))
            #expect(report.uploaded == [1, 2, 3] && log.all == [1, 2, 3])
            let parts = UploadedParts(id: upload, partSHA256s: report.partSHA256s)
            #expect(try await agent.send(.resultDone(task: task, epoch: epoch, sha256: result.sha256, total: total, upload: parts)) == .accepted(task: task))
            let key = settings.location.objectKey(BlobKey.result(sha256: result.sha256).relativePath)
            let stored = try await CoordinatorS3.client().sha256(ofObject: key)
            #expect(stored.size == total && stored.sha256 == result.sha256)
            await agent.close()
        }
    }

    /// Every part's SHA-256 (hex) of the file cut in `partSize` parts.
    static func partHashes(_ path: String, partSize: Int64) throws -> [String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return stride(from: 0, to: data.count, by: Int(partSize)).map { start in
            SHA256.hash(data: data[start..<min(start + Int(partSize), data.count)]).map { String(format: "%02x", $0) }.joined()
        }
    }

    static func hex(_ base64: String) -> String? {
        Data(base64Encoded: base64).map { $0.map { String(format: "%02x", $0) }.joined() }
    }
}

extension CoordinatorHarness {
    /// A counter's value from the coordinator's `/metrics` registry (0 when never counted).
    func metricValue(_ name: String) throws -> Double {
        var buffer: [UInt8] = []
        coordinator.metrics.registry.emit(into: &buffer)
        let line = String(decoding: buffer, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }
}
