import Foundation
import ReelObjectStore
import Testing

/// The `BlobStore` contract on a local directory (the S3 side is `S3BlobStore`'s suite), and
/// what only a directory does: its layout on disk, private modes, renaming uploads into place.
struct LocalBlobStoreTests {
    static func store() throws -> LocalBlobStore {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("reel-blobs-\(UUID().uuidString)").path
        let store = LocalBlobStore(root: root)
        try store.prepare()
        return store
    }

    static func sha256(_ bytes: [UInt8]) -> String { S3ClientTests.sha256(bytes) }

    static func mode(_ path: String) -> mode_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o777 : 0
    }

    @Test("content keys take only their own bytes, under the documented path, owner-only")
    func contentAddressed() async throws {
        let store = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        let bytes = TestS3.bytes(200_000, seed: 31)
        let hash = Self.sha256(bytes)
        let key = BlobKey.result(sha256: hash)
        let first = try await store.write(key, bytes: bytes)
        #expect(first.size == 200_000 && first.sha256 == hash)
        let path = store.root + "/results/sha256/\(hash.prefix(2))/\(hash)"
        #expect(store.path(of: key) == path)
        #expect(FileManager.default.contents(atPath: path) == Data(bytes))
        #expect(Self.mode(path) == 0o600)
        #expect(Self.mode(store.root + "/results/sha256/\(hash.prefix(2))") == 0o700)
        let stored = try #require(try await store.info(key))
        #expect(stored.size == 200_000 && stored.sha256 == hash && stored.modified != nil)
        #expect(try await store.write(key, bytes: bytes).size == 200_000)

        // A shorter (truncated) blob under the key is written anew.
        try Data(bytes.prefix(10)).write(to: URL(fileURLWithPath: path))
        try await store.write(key, bytes: bytes)
        #expect(FileManager.default.contents(atPath: path) == Data(bytes))

        let other = BlobKey.result(sha256: Self.sha256([1, 2, 3]))
        await #expect { try await store.write(other, bytes: bytes) } throws: { ($0 as? ObjectStoreError)?.code == .integrity }
        let file = try TestS3.file(bytes)
        defer { unlink(file) }
        await #expect { try await store.write(other, file: file, sha256: nil) } throws: { ($0 as? ObjectStoreError)?.code == .integrity }
        // A file that is not what the caller said it is stores nothing either.
        let output = BlobKey.output(job: 3, fileType: "mp4")
        await #expect { try await store.write(output, file: file, sha256: Self.sha256([9])) } throws: {
            ($0 as? ObjectStoreError)?.code == .integrity
        }
        #expect(try await store.info(other) == nil)
        #expect(try await store.info(output) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.temporaryDirectory).isEmpty)
        #expect(try store.presign(key, .read, expires: 60) == nil)
    }

    @Test("files are written and read back, whole and in ranges; a damaged blob is not downloaded")
    func files() async throws {
        let store = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        let bytes = TestS3.bytes(3_000_000, seed: 32)  // more than the copy buffer
        let file = try TestS3.file(bytes)
        defer { unlink(file) }
        let key = BlobKey.asset(sha256: Self.sha256(bytes))
        let written = try await store.write(key, file: file, sha256: nil)
        #expect(written.size == 3_000_000 && written.sha256 == Self.sha256(bytes))
        #expect(try await store.read(key, range: 1_048_570..<1_048_590) == Array(bytes[1_048_570..<1_048_590]))
        #expect(try await store.read(key, range: 2_999_990..<3_000_100) == Array(bytes[2_999_990...]))
        #expect(try await store.read(key, range: 3_000_000..<3_000_010).isEmpty)
        await #expect { _ = try await store.read(.asset(sha256: Self.sha256([7])), range: 0..<1) } throws: {
            ($0 as? ObjectStoreError)?.code == .notFound
        }
        let target = file + ".down"
        defer { unlink(target) }
        #expect(try await store.download(key, to: target).sha256 == Self.sha256(bytes))
        #expect(FileManager.default.contents(atPath: target) == Data(bytes))

        // One byte changed on disk: the download says so and leaves nothing at the target.
        var damaged = bytes
        damaged[2_000_000] ^= 0x40
        try Data(damaged).write(to: URL(fileURLWithPath: store.path(of: key)))
        unlink(target)
        await #expect { try await store.download(key, to: target) } throws: { ($0 as? ObjectStoreError)?.code == .integrity }
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    @Test("an upload hashed elsewhere is renamed into place, not copied")
    func adopt() async throws {
        let store = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        let bytes = TestS3.bytes(70_000, seed: 33)
        let staged = store.temporaryDirectory + "/upload.partial"
        try Data(bytes).write(to: URL(fileURLWithPath: staged))
        var before = stat()
        stat(staged, &before)
        let key = BlobKey.asset(sha256: Self.sha256(bytes))
        try await store.adopt(key, file: staged, sha256: Self.sha256(bytes))
        var after = stat()
        stat(store.path(of: key), &after)
        #expect(after.st_ino == before.st_ino)
        #expect(!FileManager.default.fileExists(atPath: staged))
        #expect(Self.mode(store.path(of: key)) == 0o600)
        // A second copy of stored content is dropped; a wrong hash stores nothing.
        try Data(bytes).write(to: URL(fileURLWithPath: staged))
        try await store.adopt(key, file: staged, sha256: Self.sha256(bytes))
        #expect(!FileManager.default.fileExists(atPath: staged))
        await #expect { try await store.adopt(.asset(sha256: Self.sha256([1])), file: staged, sha256: Self.sha256(bytes)) } throws: {
            ($0 as? ObjectStoreError)?.code == .integrity
        }
    }

    @Test("listing a kind reports its keys only, deleting is idempotent, stale temporary files are swept")
    func listAndDelete() async throws {
        let store = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        var written: [BlobKey] = []
        for seed in 0..<3 {
            let bytes = TestS3.bytes(1000 + seed, seed: UInt64(40 + seed))
            let key = BlobKey.result(sha256: Self.sha256(bytes))
            try await store.write(key, bytes: bytes)
            written.append(key)
        }
        try await store.write(.poster(job: 3), bytes: [0xFF, 0xD8, 0xFF])
        try await store.write(.output(job: 3, fileType: "mov"), bytes: [1, 2])
        // Files of no key's form: an upload in progress, a note, a hash in the wrong prefix folder.
        let hash = Self.sha256([5])
        try Data([1]).write(to: URL(fileURLWithPath: store.root + "/results/\(hash).partial"))
        try Data([1]).write(to: URL(fileURLWithPath: store.root + "/results/notes.txt"))
        try FileManager.default.createDirectory(atPath: store.root + "/results/sha256/00", withIntermediateDirectories: true)
        try Data([1]).write(to: URL(fileURLWithPath: store.root + "/results/sha256/00/\(hash)"))

        var listed: [StoredBlob] = []
        try await store.list(.results) { listed += $0 }
        #expect(Set(listed.map(\.key)) == Set(written))
        #expect(listed.allSatisfy { $0.modified != nil && $0.size >= 1000 })
        var posters: [StoredBlob] = []
        try await store.list(.posters) { posters += $0 }
        #expect(posters.map(\.key) == [.poster(job: 3)])
        var outputs: [StoredBlob] = []
        try await store.list(.outputs) { outputs += $0 }
        #expect(outputs.map(\.key) == [.output(job: 3, fileType: "mov")] && outputs.first?.size == 2)
        var assets: [StoredBlob] = []
        try await store.list(.assets) { assets += $0 }
        #expect(assets.isEmpty)

        try await store.delete(written[0])
        try await store.delete(written[0])
        #expect(try await store.info(written[0]) == nil)

        let stale = store.temporaryDirectory + "/write-stale"
        try Data([1]).write(to: URL(fileURLWithPath: stale))
        #expect(try await store.removeAbandonedUploads(startedBefore: Date().addingTimeInterval(-3600)) == 0)
        #expect(try await store.removeAbandonedUploads(startedBefore: Date().addingTimeInterval(3600)) == 1)
        #expect(!FileManager.default.fileExists(atPath: stale))
    }
}
