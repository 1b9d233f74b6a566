import Foundation
import Logging
import ReelCore
import ReelMedia
import ReelObjectStore
import ReelProtocol
import ReelThreadTesting
import Synchronization
import Testing

@testable import ReelCoordinator

/// A blob store that counts the bytes it serves (ranged reads and whole downloads).
private final class CountingBlobStore: BlobStore {
    let inner: any BlobStore
    let served = Mutex<Int64>(0)
    init(inner: any BlobStore) { self.inner = inner }

    func info(_ key: BlobKey) async throws -> BlobInfo? { try await inner.info(key) }
    func read(_ key: BlobKey, range: Range<Int64>) async throws -> [UInt8] {
        let bytes = try await inner.read(key, range: range)
        served.withLock { $0 += Int64(bytes.count) }
        return bytes
    }
    func write(_ key: BlobKey, bytes: [UInt8]) async throws -> BlobInfo { try await inner.write(key, bytes: bytes) }
    func write(_ key: BlobKey, file path: String, sha256: String?) async throws -> BlobInfo {
        try await inner.write(key, file: path, sha256: sha256)
    }
    func download(_ key: BlobKey, to path: String) async throws -> BlobInfo {
        let info = try await inner.download(key, to: path)
        served.withLock { $0 += info.size }
        return info
    }
    func delete(_ key: BlobKey) async throws { try await inner.delete(key) }
    func list(_ kind: BlobKind, _ body: ([StoredBlob]) async throws -> Void) async throws { try await inner.list(kind, body) }
    func removeAbandonedUploads(startedBefore cutoff: Date) async throws -> Int { try await inner.removeAbandonedUploads(startedBefore: cutoff) }
    func presign(_ key: BlobKey, _ access: BlobAccess, expires: Int) throws -> PresignedRequest? { try inner.presign(key, access, expires: expires) }
}

/// Planning a job whose sources are in S3 probes them through ranged reads: the coordinator
/// moves the headers and index libav reads, not the sources (docs/object-storage.md).
@Suite(.blocking, .enabled(if: CoordinatorS3.isConfigured, CoordinatorS3.skipReason))
struct S3PlanningTests {
    @Test func planningProbesAnS3SourceThroughFarFewerBytesThanItsSize() async throws {
        LibAVLogging.errorsOnly()
        let directory = try makeWorkDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // About 10 MB of noisy 720p with the `moov` index at the end (no faststart), so the probe
        // must seek to the end of the file; and a SubRip file stored, like every source, by hash.
        let clip = "\(directory)/clip.mp4"
        try await offThePool {
            try runProgram(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=1280x720:r=25:d=12",
                            "-f", "lavfi", "-i", "anoisesrc=d=12:r=48000", "-vf", "noise=alls=40:allf=t",
                            "-c:v", "libx264", "-preset", "ultrafast", "-b:v", "5M", "-c:a", "aac", "-shortest", clip])
        }
        let srt = "\(directory)/captions.srt"
        try "1\n00:00:00,000 --> 00:00:02,000\nHello\n\n2\n00:00:02,500 --> 00:00:04,000\nWorld\n".write(toFile: srt, atomically: true, encoding: .utf8)
        let head = try [UInt8](FileHandle(forReadingAtPath: clip)!.read(upToCount: 64) ?? Data())
        #expect(String(decoding: head[4..<8], as: UTF8.self) == "ftyp")
        #expect(String(decoding: head, as: UTF8.self).contains("moov") == false, "the index is not at the start")

        let settings = try await CoordinatorS3.settings("planning")
        let counting = CountingBlobStore(inner: try await settings.connect(logger: Logger(label: "test")))
        let storage = CoordinatorStorage(root: "\(directory)/storage", blobs: counting)
        var entries: [String: AssetManifestEntry] = [:]
        for (id, path) in [("clip", clip), ("captions", srt)] {
            let (size, hex) = try FileDigest.sha256(path: path)
            try await counting.write(.asset(sha256: hex), file: path, sha256: hex)
            entries[id] = AssetManifestEntry(sha256: hex, size: Int64(size))
        }
        let clipSize = try #require(entries["clip"]).size
        #expect(clipSize > 8_000_000, "a source of several MB (\(clipSize) bytes)")

        var composition = try Composition.parse(Array("""
            {"formatVersion": 1,
             "assets": {"clip": {"url": "clip.mp4"}, "captions": {"url": "captions.srt"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "sourceRange": {"start": 0, "duration": 12}, "at": 0}]},
                        {"id": 2, "mediaType": "audio", "segments": [{"asset": "clip", "sourceRange": {"start": 0, "duration": 12}, "at": 0}]},
                        {"id": 3, "mediaType": "subtitle", "language": "en", "segments": [{"asset": "captions", "at": 0}]}]}
            """.utf8))
        for (id, entry) in entries { composition.assets[id]?.url = storage.assetPath(entry.sha256) }
        let planning = storage.planningSources(Array(entries.values))
        let root = storage.root
        let plan = try await offThePool { [composition] in
            try CompositionLoader.plan(composition, directory: root, sources: planning.sources)
        }

        // The plan is the one the file gives: its picture, length and sound, and the captions.
        let clipAsset = try #require(plan.assets["clip"])
        #expect(clipAsset.description.video?.naturalSize == PixelSize(width: 1280, height: 720))
        #expect(plan.frameCount == 300)
        #expect(clipAsset.description.audio?.sampleRate == 48000)
        #expect(plan.subtitleTracks?.first?.cues.count == 2, "the SubRip file was recognised by its content and read")

        // Nothing was downloaded whole, and the bucket served a small part of the clip.
        let served = counting.served.withLock { $0 }
        let srtSize = try #require(entries["captions"]).size
        #expect(!FileManager.default.fileExists(atPath: storage.assetPath(try #require(entries["clip"]).sha256)))
        #expect(served - srtSize < clipSize / 10, "planning read \(served) bytes of a \(clipSize)-byte source")
        #expect(planning.blocks.reduce(0) { $0 + $1.fetchedBytes } == served)
        print("planning read \(served) bytes (\(planning.blocks.reduce(0) { $0 + $1.fetchCount }) requests) of \(clipSize + srtSize)")
    }
}
