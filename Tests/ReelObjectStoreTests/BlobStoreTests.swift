import Crypto
import Foundation
import ReelObjectStore
import Testing
import ReelThreadTesting

/// The storage layout and the `BlobStore` contract, on S3.
@Suite(.blocking) struct BlobKeyTests {
    static let hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

    @Test("every key has one path, and the path gives the key back")
    func layout() {
        let keys: [(BlobKey, String)] = [
            (.asset(sha256: Self.hash), "assets/sha256/9f/\(Self.hash)"),
            (.result(sha256: Self.hash), "results/sha256/9f/\(Self.hash)"),
            (.output(job: 42, fileType: "mp4"), "outputs/42.mp4"),
            (.poster(job: 7), "posters/7.jpg"),
        ]
        for (key, path) in keys {
            #expect(key.relativePath == path)
            #expect(BlobKey(relativePath: path) == key)
            #expect(path.hasPrefix(key.kind.rawValue + "/"))
        }
    }

    @Test("paths of no key's form are not keys (a sweep leaves them alone)",
          arguments: ["assets/\(hash)", "assets/sha256/00/\(hash)", "assets/sha256/9f/\(hash.uppercased())", "assets/sha256/9f/\(hash).partial",
                      "results/sha1/9f/\(hash)", "outputs/42", "outputs/-1.mp4", "outputs/042.mp4", "outputs/4x.mp4", "outputs/42.m/p4",
                      "posters/7.png", "posters/07.jpg", "tmp/x", "", "assets/sha256/9f/\(hash)/x"])
    func foreignPaths(path: String) {
        #expect(BlobKey(relativePath: path) == nil)
    }

    @Test("s3://BUCKET/PREFIX is parsed, and bad ones say what to fix")
    func locations() throws {
        let location = try ObjectStoreLocation("s3://reel-farm/renders/prod/")
        #expect(location.bucket == "reel-farm" && location.prefix == "renders/prod")
        #expect(location.objectKey("assets/x") == "renders/prod/assets/x")
        #expect("\(location)" == "s3://reel-farm/renders/prod")
        let bare = try ObjectStoreLocation("s3://reel-farm")
        #expect(bare.prefix == "" && bare.objectKey("posters/1.jpg") == "posters/1.jpg")
        for bad in ["reel-farm/x", "s3://", "s3://Reel", "s3://ab", "s3://-reel", "s3://reel_farm", "s3://reel/a/../b", "https://reel/x"] {
            #expect(throws: ObjectStoreError.self, "\(bad)") { try ObjectStoreLocation(bad) }
        }
    }
}

@Suite(.enabled(if: TestS3.isConfigured, TestS3.skipReason))
struct S3BlobStoreTests {
    static func store(_ name: String) async throws -> S3BlobStore {
        let client = try await TestS3.client()
        return try S3BlobStore(client: client, location: ObjectStoreLocation(bucket: TestS3.bucket, prefix: TestS3.prefix(name)))
    }

    static func sha256(_ bytes: [UInt8]) -> String { S3ClientTests.sha256(bytes) }

    @Test("content keys take only their own bytes, and the same bytes twice are stored once")
    func contentAddressed() async throws {
        let store = try await Self.store("blob-content")
        let bytes = TestS3.bytes(200_000, seed: 31)
        let key = BlobKey.result(sha256: Self.sha256(bytes))
        let first = try await store.write(key, bytes: bytes)
        #expect(first.size == 200_000 && first.sha256 == Self.sha256(bytes))
        let stored = try #require(try await store.info(key))
        #expect(stored.size == 200_000 && stored.sha256 == Self.sha256(bytes))
        let again = try await store.write(key, bytes: bytes)
        #expect(again.size == 200_000 && again.sha256 == Self.sha256(bytes))
        // A damaged object under the key (same size, other bytes, planted behind the store's
        // back) is not taken for the stored blob: the server's checksum gives it away, and the
        // write repairs it.
        var planted = bytes
        planted[0] ^= 1
        try await store.client.putObject(key: store.location.objectKey(key.relativePath), bytes: planted)
        try await store.write(key, bytes: bytes)
        #expect(try await store.read(key, range: 0..<1) == [bytes[0]])
        #expect(try await store.info(key)?.sha256 == Self.sha256(bytes))

        let other = BlobKey.result(sha256: Self.sha256([1, 2, 3]))
        await #expect { try await store.write(other, bytes: bytes) } throws: { ($0 as? ObjectStoreError)?.code == .integrity }
        #expect(try await store.info(other) == nil)
        let path = try TestS3.file(bytes)
        defer { unlink(path) }
        await #expect { try await store.write(other, file: path, sha256: nil) } throws: { ($0 as? ObjectStoreError)?.code == .integrity }
        // Nor can a presigned write put them there.
        #expect(throws: ObjectStoreError.self) { try store.presign(other, .write(sha256: Self.sha256(bytes)), expires: 60) }
    }

    @Test("files of any size are written and read back, whole and in ranges")
    func files() async throws {
        let store = try await Self.store("blob-files")
        let bytes = TestS3.bytes(11_000_000, seed: 32)  // more than one 5 MiB part
        let path = try TestS3.file(bytes)
        defer { unlink(path) }
        let key = BlobKey.asset(sha256: Self.sha256(bytes))
        let written = try await store.write(key, file: path, sha256: nil)
        #expect(written.size == 11_000_000 && written.sha256 == Self.sha256(bytes))
        #expect(try await store.read(key, range: 5_242_870..<5_242_890) == Array(bytes[5_242_870..<5_242_890]))
        #expect(try await store.read(key, range: 10_999_990..<11_000_100) == Array(bytes[10_999_990...]))
        #expect(try await store.read(key, range: 11_000_000..<11_000_010).isEmpty)
        let target = path + ".down"
        defer { unlink(target) }
        #expect(try await store.download(key, to: target).sha256 == Self.sha256(bytes))

        let output = BlobKey.output(job: 12, fileType: "mov")
        try await store.write(output, file: path, sha256: nil)
        #expect(try await store.info(output)?.size == 11_000_000)
    }

    @Test("an asset past 16 MiB downloads checked by its tree-hash name, read once; other bytes under its name are refused")
    func largeAssetDownload() async throws {
        let store = try await Self.store("blob-large-asset")
        let bytes = TestS3.bytes((16 << 20) + 999, seed: 33)
        let path = try TestS3.file(bytes)
        defer { unlink(path) }
        let named = try AssetAddress.name(ofFile: path).name
        #expect(named != Self.sha256(bytes), "a tree hash, not the plain SHA-256")
        let key = BlobKey.asset(sha256: named)
        try await store.write(key, file: path, sha256: nil)
        let target = path + ".down"
        defer { unlink(target) }
        let got = try await store.download(key, to: target)
        #expect(got.size == Int64(bytes.count) && got.sha256 == named)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == Data(bytes))

        // Damaged in the bucket (one byte changed under the asset's name): refused, nothing written.
        var damaged = bytes
        damaged[(16 << 20) + 500] ^= 0xFF   // in the last part
        try await store.client.putObject(key: store.location.objectKey(key.relativePath), bytes: damaged)
        let refused = path + ".damaged"
        await #expect { try await store.download(key, to: refused) } throws: { error in
            (error as? ObjectStoreError)?.code == .integrity && "\(error)".contains("damaged")
        }
        #expect(!FileManager.default.fileExists(atPath: refused))
    }

    @Test("listing a kind reports its keys only, and deleting is idempotent")
    func listAndDelete() async throws {
        let store = try await Self.store("blob-list")
        var written: [BlobKey] = []
        for seed in 0..<3 {
            let bytes = TestS3.bytes(1000 + seed, seed: UInt64(40 + seed))
            let key = BlobKey.result(sha256: Self.sha256(bytes))
            try await store.write(key, bytes: bytes)
            written.append(key)
        }
        try await store.write(.poster(job: 3), bytes: [0xFF, 0xD8, 0xFF])
        // Something else under results/ that is no key: listed by S3, not by the store.
        try await store.client.putObject(key: store.location.objectKey("results/notes.txt"), bytes: [1])

        var listed: [StoredBlob] = []
        try await store.list(.results) { listed += $0 }
        #expect(Set(listed.map(\.key)) == Set(written))
        #expect(listed.allSatisfy { $0.modified != nil && $0.size >= 1000 })
        var posters: [StoredBlob] = []
        try await store.list(.posters) { posters += $0 }
        #expect(posters.map(\.key) == [.poster(job: 3)])

        try await store.delete(written[0])
        try await store.delete(written[0])
        #expect(try await store.info(written[0]) == nil)
    }

    @Test("presigned reads and content-bound writes, for peers without credentials")
    func presigned() async throws {
        let store = try await Self.store("blob-presign")
        let bytes = TestS3.bytes(50_000, seed: 50)
        let key = BlobKey.result(sha256: Self.sha256(bytes))
        let write = try #require(try store.presign(key, .write(sha256: nil), expires: 300))
        #expect(write.headers["x-amz-checksum-sha256"] != nil)  // bound to the key's own hash
        let path = try TestS3.file(bytes)
        defer { unlink(path) }
        #expect(try S3PresignTests.curl(["-X", "PUT", "--data-binary", "@\(path)"] + S3PresignTests.headers(write) + [write.url]).status == 200)
        let read = try #require(try store.presign(key, .read, expires: 300))
        let target = path + ".down"
        defer { unlink(target) }
        #expect(try S3PresignTests.curl([read.url], output: target).status == 200)
        #expect(FileManager.default.contents(atPath: target) == Data(bytes))
    }

    @Test("uploads started before the cutoff and never finished are removed")
    func abandonedUploads() async throws {
        let store = try await Self.store("blob-abandoned")
        let key = store.location.objectKey(BlobKey.output(job: 9, fileType: "mp4").relativePath)
        let id = try await store.client.createMultipartUpload(key: key)
        #expect(try await store.removeAbandonedUploads(startedBefore: Date().addingTimeInterval(-3600)) == 0)
        #expect(try await store.removeAbandonedUploads(startedBefore: Date().addingTimeInterval(3600)) == 1)
        await #expect { _ = try await store.client.listParts(key: key, uploadID: id) } throws: { ($0 as? ObjectStoreError)?.code == .notFound }
    }
}
