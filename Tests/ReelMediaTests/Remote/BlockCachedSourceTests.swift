import Foundation
import ReelCore
import ReelThreadTesting
import Synchronization
import Testing
@testable import ReelMedia

/// `BlockCachedSource`: reads across blocks give the file's bytes, fetches are whole blocks
/// counted once while cached, and probing through it (what the coordinator does with sources in
/// an object store) fetches a small part of a file whose index is at its end.
@Suite("BlockCachedSource", .blocking)
struct BlockCachedSourceTests {
    /// A source over `bytes` whose fetches are recorded.
    final class Fetches: Sendable {
        let ranges = Mutex<[Range<Int64>]>([])
        func withLock<T>(_ body: (inout [Range<Int64>]) -> T) -> T { ranges.withLock { body(&$0) } }
    }

    static func source(_ bytes: [UInt8], blockSize: Int, capacity: Int) -> (BlockCachedSource, Fetches) {
        let fetches = Fetches()
        let source = BlockCachedSource(size: Int64(bytes.count), blockSize: blockSize, capacity: capacity) { range in
            fetches.withLock { $0.append(range) }
            return Array(bytes[Int(range.lowerBound)..<Int(range.upperBound)])
        }
        return (source, fetches)
    }

    static func read(_ source: ByteRangeSource, offset: Int64, count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let n = try buffer.withUnsafeMutableBytes { try source.read(offset: offset, count: count, into: $0.baseAddress!) }
        return Array(buffer.prefix(n))
    }

    @Test func readsAcrossBlocksAreTheFilesBytesAndCachedBlocksAreNotFetchedAgain() throws {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let (source, fetches) = Self.source(bytes, blockSize: 64, capacity: 4)
        #expect(try Self.read(source, offset: 60, count: 100) == Array(bytes[60..<160]))
        #expect(fetches.withLock { $0 } == [0..<64, 64..<128, 128..<192])
        #expect(try Self.read(source, offset: 100, count: 50) == Array(bytes[100..<150]))
        #expect(fetches.withLock { $0.count } == 3, "cached blocks are not fetched again")
        // The end: a short last block, a short read, nothing past the end.
        #expect(try Self.read(source, offset: 990, count: 64) == Array(bytes[990..<1000]))
        #expect(fetches.withLock { $0.last } == 960..<1000)
        #expect(try Self.read(source, offset: 1000, count: 10).isEmpty)
        #expect(source.fetchedBytes == 64 * 3 + 40 && source.fetchCount == 4)
        // Capacity 4, blocks held from least to most recently used: 0, 1, 2, 15. Blocks 3 and 4
        // evict 0 and 1, so block 0 is fetched again.
        _ = try Self.read(source, offset: 200, count: 1)
        _ = try Self.read(source, offset: 300, count: 1)
        _ = try Self.read(source, offset: 0, count: 1)
        #expect(fetches.withLock { $0.suffix(3) } == [192..<256, 256..<320, 0..<64], "block 0 was evicted and is fetched again")
    }

    @Test func aShortFetchIsAnError() throws {
        let source = BlockCachedSource(size: 100, blockSize: 64, capacity: 2) { _ in [1, 2, 3] }
        #expect(throws: MediaError.self) { try Self.read(source, offset: 0, count: 10) }
    }

    @Test func probingAFileWithItsIndexAtTheEndFetchesASmallPartOfIt() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("late-moov.mp4").path
        try TestMedia.run(["-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=4", "-f", "lavfi", "-i", "anoisesrc=d=4:r=48000",
                           "-vf", "noise=alls=40:allf=t", "-c:v", "libx264", "-preset", "ultrafast", "-b:v", "6M",
                           "-c:a", "aac", "-shortest", path])
        let file = try CountingFileSource(path: path)
        let source = BlockCachedSource(size: file.size) { range in
            var bytes = [UInt8](repeating: 0, count: range.count)
            let n = try bytes.withUnsafeMutableBytes { try file.read(offset: range.lowerBound, count: range.count, into: $0.baseAddress!) }
            return Array(bytes.prefix(n))
        }
        let described = try MediaProbe.describe(.byteRanges(source, name: "late-moov.mp4"))
        let reference = try MediaProbe.describe(path: path)
        #expect(described == reference)
        #expect(described.video?.naturalSize == PixelSize(width: 640, height: 360) && described.kind == .movie)
        #expect(file.size > 2_000_000, "a file of a few MB (\(file.size) bytes)")
        #expect(source.fetchedBytes < file.size / 10, "probing fetched \(source.fetchedBytes) of \(file.size) bytes")
        #expect(file.bytesRead == source.fetchedBytes)
    }
}
