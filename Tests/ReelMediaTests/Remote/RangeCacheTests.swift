import Foundation
import ReelCore
import Synchronization
import Testing
import ReelThreadTesting
@testable import ReelAssetCache
@testable import ReelMedia

/// The coordinator's side of `FETCH`, played by an in-memory file: records every call.
final class FakeOrigin: Sendable {
    struct Unreachable: Error, CustomStringConvertible {
        var description: String { "coordinator unreachable" }
    }

    let bytes: [UInt8]
    let hash: String
    private struct State {
        var log: [(offset: Int64, length: Int)] = []
        /// When set, every fetch throws `Unreachable`.
        var failing = false
    }

    private let state = Mutex(State())

    /// `size` bytes of a deterministic pseudo-random pattern (any byte error shows).
    init(size: Int, seed: UInt64 = 1) {
        var rng = SplitMix64(seed: seed)
        var words = [UInt64](repeating: 0, count: (size + 7) / 8)
        for i in words.indices { words[i] = rng.next() }
        bytes = words.withUnsafeBytes { Array($0.prefix(size)) }
        hash = String(format: "%016llx%016llx", seed, UInt64(size)) + UUID().uuidString.lowercased().filter(\.isHexDigit)
    }

    var calls: [(offset: Int64, length: Int)] { state.withLock { $0.log } }

    var fetch: RangeCache.Fetch {
        { [self] hash, offset, length in
            precondition(hash == self.hash)
            state.withLock { $0.log.append((offset, length)) }
            if state.withLock({ $0.failing }) { throw Unreachable() }
            return Array(bytes[Int(offset)..<Int(offset) + length])
        }
    }

    func setFailing(_ value: Bool) { state.withLock { $0.failing = value } }
}

@Suite("RangeCache", .blocking)
struct RangeCacheTests {
    static let MiB = RangeCache.blockSize

    static func read(_ source: ByteRangeSource, offset: Int, count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let n = try out.withUnsafeMutableBytes { try source.read(offset: Int64(offset), count: count, into: $0.baseAddress!) }
        return Array(out.prefix(n))
    }

    /// Total bytes of regular files under `dir`.
    static func diskUsage(_ dir: URL) -> Int64 {
        var total: Int64 = 0
        let walker = FileManager.default.enumerator(at: dir, includingPropertiesForKeys: [.fileSizeKey, .isRegularFileKey])
        while let url = walker?.nextObject() as? URL {
            let values = try? url.resourceValues(forKeys: [.fileSizeKey, .isRegularFileKey])
            if values?.isRegularFile == true { total += Int64(values?.fileSize ?? 0) }
        }
        return total
    }

    @Test func secondReadOfARangeFetchesNothing() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let origin = FakeOrigin(size: 5 * Self.MiB + 12345)
        let cache = try RangeCache(directory: dir, byteLimit: 64 << 20)
        let source = try cache.source(hash: origin.hash, size: Int64(origin.bytes.count), fetch: origin.fetch)

        let range = (3 * Self.MiB / 2)..<(3 * Self.MiB / 2 + 100_000)
        #expect(try Self.read(source, offset: range.lowerBound, count: range.count) == Array(origin.bytes[range]))
        #expect(origin.calls.count == 1)
        #expect(cache.fetchedBytes == Int64(Self.MiB))
        #expect(try Self.read(source, offset: range.lowerBound, count: range.count) == Array(origin.bytes[range]))
        #expect(origin.calls.count == 1)

        // A new cache over the same directory (an agent restart) finds the block on disk.
        let reopened = try RangeCache(directory: dir, byteLimit: 64 << 20)
        let again = try reopened.source(hash: origin.hash, size: Int64(origin.bytes.count), fetch: origin.fetch)
        #expect(try Self.read(again, offset: range.lowerBound, count: range.count) == Array(origin.bytes[range]))
        #expect(reopened.fetchedBytes == 0)

        // The short last block, and reads at and past the end.
        let tail = (origin.bytes.count - 1000)..<origin.bytes.count
        #expect(try Self.read(again, offset: tail.lowerBound, count: 5000) == Array(origin.bytes[tail]))
        #expect(try Self.read(again, offset: origin.bytes.count, count: 10).isEmpty)
        #expect(reopened.fetchedBytes == 12345)
    }

    @Test func adjacentMissingBlocksAreFetchedTogether() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let origin = FakeOrigin(size: 11 * Self.MiB + 500)
        let size = origin.bytes.count
        let cache = try RangeCache(directory: dir, byteLimit: 64 << 20)
        let source = try cache.source(hash: origin.hash, size: Int64(size), fetch: origin.fetch)

        // Blocks 1 and 3, then 0...4: only the gaps 0, 2 and 4 are fetched, each on its own.
        _ = try Self.read(source, offset: Self.MiB + 10, count: 10)
        _ = try Self.read(source, offset: 3 * Self.MiB + 10, count: 10)
        #expect(try Self.read(source, offset: 100, count: 5 * Self.MiB - 200) == Array(origin.bytes[100..<(5 * Self.MiB - 100)]))
        #expect(origin.calls.map(\.offset) == [1, 3, 0, 2, 4].map { Int64($0 * Self.MiB) })
        #expect(origin.calls.allSatisfy { $0.length == Self.MiB })

        // Blocks 5...11 are missing and adjacent: one fetch, up to the file's end.
        #expect(try Self.read(source, offset: 0, count: size) == origin.bytes)
        #expect(origin.calls.count == 6)
        #expect(origin.calls.last!.offset == Int64(5 * Self.MiB) && origin.calls.last!.length == size - 5 * Self.MiB)
        #expect(cache.fetchedBytes == Int64(size))
        #expect(cache.isComplete(hash: origin.hash, size: Int64(size)))
    }

    @Test func oneFetchIsAtMostEightMiB() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let origin = FakeOrigin(size: 19 * Self.MiB + 7)
        let cache = try RangeCache(directory: dir, byteLimit: 64 << 20)
        let source = try cache.source(hash: origin.hash, size: Int64(origin.bytes.count), fetch: origin.fetch)
        #expect(try Self.read(source, offset: 0, count: origin.bytes.count) == origin.bytes)
        #expect(origin.calls.map(\.length) == [8 * Self.MiB, 8 * Self.MiB, 3 * Self.MiB + 7])
        #expect(RangeCache.fetchRuns([7, 1, 2, 3, 9, 10]) == [1...3, 7...7, 9...10])
    }

    /// A demuxer reads a chunk's bytes front to back in small pieces: the fetches grow to
    /// 8 MiB ahead of the reads (a request per block would cost an object store a request per
    /// MiB), and a seek fetches only what it reads.
    @Test func sequentialReadsFetchAheadInGrowingWindows() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let origin = FakeOrigin(size: 40 * Self.MiB)
        let cache = try RangeCache(directory: dir, byteLimit: 64 << 20)
        let source = try cache.source(hash: origin.hash, size: Int64(origin.bytes.count), fetch: origin.fetch)
        let piece = 64 << 10
        for offset in stride(from: 0, to: origin.bytes.count, by: piece) {
            #expect(try Self.read(source, offset: offset, count: piece) == Array(origin.bytes[offset..<(offset + piece)]))
        }
        #expect(origin.calls.map { $0.length / Self.MiB } == [1, 2, 8, 8, 8, 8, 5])
        #expect(origin.calls.map { Int($0.offset) / Self.MiB } == [0, 1, 3, 11, 19, 27, 35])
        #expect(cache.fetchedBytes == Int64(origin.bytes.count))

        // Seeks on a fresh source: each fetches its own block and nothing ahead, even where a
        // seek lands right after a block a previous seek read (no sequence without a read between).
        let other = FakeOrigin(size: 40 * Self.MiB, seed: 2)
        let seeking = try cache.source(hash: other.hash, size: Int64(other.bytes.count), fetch: other.fetch)
        for block in [30, 5, 17, 2] {
            let offset = block * Self.MiB + 100
            #expect(try Self.read(seeking, offset: offset, count: 1000) == Array(other.bytes[offset..<(offset + 1000)]))
        }
        #expect(other.calls.map { Int($0.offset) / Self.MiB } == [30, 5, 17, 2])
        #expect(other.calls.allSatisfy { $0.length == Self.MiB })
        // Reading on from the last seek starts a sequence there: blocks 3 and 4 in one fetch;
        // 4 and 5 (5 is here since the seek) fetch nothing; 6 fetches 8 blocks; 14 stops short
        // of block 17, which the seeks fetched.
        for block in 3...14 { _ = try Self.read(seeking, offset: block * Self.MiB, count: Self.MiB) }
        #expect(other.calls.dropFirst(4).map { Int($0.offset) / Self.MiB } == [3, 6, 14])
        #expect(other.calls.dropFirst(4).map { $0.length / Self.MiB } == [2, 8, 3])
    }

    @Test func evictionKeepsTheDirectoryUnderTheLimit() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let limit = Int64(3 * Self.MiB + Self.MiB / 2)
        let origin = FakeOrigin(size: 10 * Self.MiB)
        let cache = try RangeCache(directory: dir, byteLimit: limit)
        let source = try cache.source(hash: origin.hash, size: Int64(origin.bytes.count), fetch: origin.fetch)
        // Every block once, never the one after the block read last (no read-ahead: one fetch
        // a block); 7, 9 and 8 last, in that order.
        for block in [0, 2, 4, 6, 1, 3, 5, 7, 9, 8] {
            let range = (block * Self.MiB + 5)..<(block * Self.MiB + 50_000)
            #expect(try Self.read(source, offset: range.lowerBound, count: range.count) == Array(origin.bytes[range]))
            #expect(Self.diskUsage(dir) <= limit)
        }
        #expect(origin.calls.count == 10)
        #expect(cache.cachedBytes == 3 * Int64(Self.MiB))

        // Least recently used goes first: touch block 7, then bring in block 0 again.
        _ = try Self.read(source, offset: 7 * Self.MiB, count: 10)
        #expect(origin.calls.count == 10)
        _ = try Self.read(source, offset: 0, count: 10)
        #expect(origin.calls.count == 11)
        _ = try Self.read(source, offset: 7 * Self.MiB, count: 10)   // kept
        _ = try Self.read(source, offset: 8 * Self.MiB, count: 10)   // kept
        #expect(origin.calls.count == 11)
        _ = try Self.read(source, offset: 9 * Self.MiB, count: 10)   // the oldest, evicted
        #expect(origin.calls.count == 12)
        #expect(Self.diskUsage(dir) <= limit)

        // Reopening with a smaller limit evicts at once.
        let smaller = try RangeCache(directory: dir, byteLimit: Int64(Self.MiB))
        #expect(smaller.cachedBytes <= Int64(Self.MiB))
        #expect(Self.diskUsage(dir) <= Int64(Self.MiB))
    }

    @Test(arguments: [Int64(64 << 20), Int64(2 << 20)])
    func concurrentReadersGetTheRightBytes(limit: Int64) throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let origin = FakeOrigin(size: 6 * Self.MiB + 4321, seed: 7)
        let cache = try RangeCache(directory: dir, byteLimit: limit)
        let source = try cache.source(hash: origin.hash, size: Int64(origin.bytes.count), fetch: origin.fetch)
        let mismatches = Counter()
        // Real threads (concurrentPerform would run only as many as there are cores).
        let group = DispatchGroup()
        for thread in 0..<8 {
            group.enter()
            Thread {
                defer { group.leave() }
                var rng = SplitMix64(seed: UInt64(thread) + 1)
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.MiB, alignment: 16)
                defer { buffer.deallocate() }
                for _ in 0..<40 {
                    // Mostly demuxer-sized reads, some spanning block boundaries.
                    let offset = Int(rng.next() % UInt64(origin.bytes.count))
                    let count = 1 + Int(rng.next() % UInt64(Self.MiB / 3))
                    let expected = min(count, origin.bytes.count - offset)
                    let same = origin.bytes.withUnsafeBytes { all in
                        guard let n = try? source.read(offset: Int64(offset), count: count, into: buffer) else { return false }
                        return n == expected && memcmp(buffer, all.baseAddress! + offset, n) == 0
                    }
                    if !same { mismatches.increment() }
                }
            }.start()
        }
        group.wait()
        #expect(mismatches.value == 0)
        if limit > Int64(origin.bytes.count) {
            // Enough room: every block was fetched exactly once despite concurrent demand.
            #expect(cache.fetchedBytes == Int64(origin.bytes.count))
        }
        #expect(Self.diskUsage(dir) <= max(limit, 0))
    }

    @Test func truncatedBlockIsFetchedAgain() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let origin = FakeOrigin(size: 2 * Self.MiB)
        let first = try RangeCache(directory: dir, byteLimit: 64 << 20)
        _ = try Self.read(try first.source(hash: origin.hash, size: 2 * Int64(Self.MiB), fetch: origin.fetch), offset: 0, count: 10)
        let block = dir.appendingPathComponent(String(origin.hash.prefix(2))).appendingPathComponent(origin.hash).appendingPathComponent("0")
        #expect(truncate(block.path, 1000) == 0)

        let second = try RangeCache(directory: dir, byteLimit: 64 << 20)
        let source = try second.source(hash: origin.hash, size: 2 * Int64(Self.MiB), fetch: origin.fetch)
        #expect(try Self.read(source, offset: 500_000, count: 100) == Array(origin.bytes[500_000..<500_100]))
        #expect(second.fetchedBytes == Int64(Self.MiB))
    }

    @Test func badInputsAreErrors() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cache = try RangeCache(directory: dir, byteLimit: 64 << 20)
        #expect(throws: RangeCacheError.self) { try cache.source(hash: "../../etc", size: 10) { _, _, _ in [] } }
        let short = try cache.source(hash: "abcdef", size: 100) { _, _, length in [UInt8](repeating: 1, count: length / 2) }
        #expect(throws: RangeCacheError.self) { try Self.read(short, offset: 0, count: 10) }
        // Nothing half-fetched was kept.
        #expect(cache.cachedBytes == 0)
    }

    /// The agent's path end to end: a clip decoded through the cache matches the file, and a
    /// second render of the same stretch (the next chunk, a retry) fetches nothing.
    @Test func mediaDecodedThroughTheCacheIsFetchedOnce() throws {
        let clips = try RemoteFixtures.longClips.get()
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: clips.moovAtEnd)))
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cache = try RangeCache(directory: dir, byteLimit: 64 << 20)
        let source = try cache.source(hash: "5eed0001", size: Int64(data.count)) { _, offset, length in
            Array(data[Int(offset)..<Int(offset) + length])
        }
        let local = try VideoFrameSource(path: clips.moovAtEnd)
        let times = (0..<6).map { Rational(12) + Rational(Int64($0), 25) }
        let expected = try times.map { RemoteFixtures.bytes(try local.frame(at: $0)) }
        let remote = RemoteFixtures.location(source)
        let first = try VideoFrameSource(remote)
        #expect(try times.map { RemoteFixtures.bytes(try first.frame(at: $0)) } == expected)
        let fetched = cache.fetchedBytes
        #expect(fetched > 0 && fetched < Int64(data.count))
        let second = try VideoFrameSource(remote)
        #expect(try times.map { RemoteFixtures.bytes(try second.frame(at: $0)) } == expected)
        #expect(cache.fetchedBytes == fetched)
    }

    /// A fetch failure reaches the media reader as a `MediaError` carrying the cause, and a
    /// later read after the connection is back succeeds.
    @Test func failingFetchSurfacesFromTheMediaReader() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let clip = try RemoteMediaTests.smallClip(in: dir)
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: clip)))
        let cache = try RangeCache(directory: dir.appendingPathComponent("cache"), byteLimit: 64 << 20)
        let failing = FailingSwitch()
        let source = try cache.source(hash: "00c0ffee", size: Int64(data.count)) { _, offset, length in
            if failing.isOn { throw FakeOrigin.Unreachable() }
            return Array(data[Int(offset)..<Int(offset) + length])
        }
        let remote = RemoteFixtures.location(source)
        failing.isOn = true
        let error = #expect(throws: MediaError.self) { try VideoFrameSource(remote) }
        #expect(error?.description.contains("coordinator unreachable") == true, "\(String(describing: error))")
        failing.isOn = false
        let video = try VideoFrameSource(remote)
        let local = try VideoFrameSource(path: clip)
        #expect(RemoteFixtures.bytes(try video.frame(at: Rational(1))) == RemoteFixtures.bytes(try local.frame(at: Rational(1))))
    }
}

/// A thread-safe flag.
final class FailingSwitch: Sendable {
    private let on = Mutex(false)
    var isOn: Bool {
        get { on.withLock { $0 } }
        set { on.withLock { $0 = newValue } }
    }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
