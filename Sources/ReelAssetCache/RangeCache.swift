import Foundation
import ReelCore
import Synchronization

/// An agent's on-disk cache of remote assets, addressed by content hash and kept in fixed
/// 1 MiB blocks, so a chunk that needs a few seconds of a long source fetches only the blocks
/// its demuxer touches, and the next chunk on this agent finds them on disk.
///
/// Layout: `<directory>/<hash[0..<2]>/<hash>/<blockIndex>`; each block is the file's bytes
/// `[i·blockSize, min((i+1)·blockSize, size))`. A block is written to a temporary name and
/// renamed, so a reader never sees half a block; a block whose length is wrong (a crash
/// between write and rename on a filesystem without ordered metadata) is dropped and fetched
/// again. There is no per-block hash: integrity comes from the authenticated connection the
/// fetch closure uses and from the coordinator, which checks each whole file's SHA-256 when it
/// is uploaded. Once every block of a file is here, reads never fetch again.
///
/// Read-ahead: a source read front to back (a demuxer walking a chunk's GOPs) fetches ahead of
/// its reads, in windows that double at every block it moves on to, up to one fetch
/// (`maxFetchLength`); a seek starts again at one block. Each fetch is a request to the
/// coordinator or the object store, whose cost is mostly per request (a 590 MB source read in
/// 1 MiB `GET`s cost the S3 server five times the CPU of the same bytes in 32 MiB ones), so a
/// chunk's source arrives in a few large requests rather than one per block. At most
/// `maxFetchLength` − 1 block is fetched past what a chunk reads, and never more than a
/// quarter of `byteLimit` ahead.
///
/// Size: after every read the blocks on disk total at most `byteLimit`, evicting the least
/// recently used blocks first (use time is kept in memory and in the files' mtimes, so order
/// survives a restart). Blocks being read at that moment are never evicted, so the limit may
/// be exceeded by at most the blocks in use by concurrent readers.
///
/// Thread-safe: any number of threads (the agent's render threads) may read through the
/// cache and its sources at once. A block is fetched once even when several threads want it
/// at the same time; the others wait for it. Fetches run outside the lock. One cache per
/// directory per process: another process sharing the directory is safe (atomic renames,
/// missing blocks are re-fetched) but its blocks are not counted against this one's limit.
public final class RangeCache: @unchecked Sendable {
    /// Fetches `length` bytes of the file with SHA-256 `hash` starting at `offset` — the
    /// agent's `FETCH sha256=HASH offset=O length=L`. Must return exactly `length` bytes
    /// (the cache only asks for ranges inside the file) or throw.
    public typealias Fetch = @Sendable (_ hash: String, _ offset: Int64, _ length: Int) throws -> [UInt8]

    /// The block size: the unit of storage, fetching and eviction.
    public static let blockSize = 1 << 20
    /// The most one fetch asks for; longer runs of missing blocks are split.
    public static let maxFetchLength = 8 << 20

    /// The cache's root directory.
    public let directory: URL
    /// The most bytes of blocks kept on disk (see the type's note on blocks in use).
    public let byteLimit: Int64

    private let condition = NSCondition()
    // Everything below is guarded by `condition`.
    private var blocks: [BlockKey: BlockRecord] = [:]
    private var storedBytes: Int64 = 0
    private var useClock: UInt64 = 0
    /// Blocks some thread is fetching right now; others wait instead of fetching them too.
    private var inFlight: Set<BlockKey> = []
    /// Blocks some thread is reading right now, with the number of readers; never evicted.
    private var pins: [BlockKey: Int] = [:]
    private var fetched: Int64 = 0
    private var fetches = 0

    /// Opens (creating if needed) the cache in `directory`, indexing the blocks already there
    /// and evicting down to `byteLimit`. Leftover temporary files of a crashed writer are removed.
    public init(directory: URL, byteLimit: Int64) throws {
        precondition(byteLimit >= 0, "RangeCache byteLimit must not be negative")
        self.directory = directory
        self.byteLimit = byteLimit
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try scan()
        condition.withLock { evictIfNeeded() }
    }

    /// Bytes fetched through fetch closures since this cache was made (tests, metrics).
    public var fetchedBytes: Int64 { condition.withLock { fetched } }
    /// Number of fetch calls made since this cache was made.
    public var fetchCount: Int { condition.withLock { fetches } }
    /// Bytes of blocks currently on disk.
    public var cachedBytes: Int64 { condition.withLock { storedBytes } }

    /// A source for the file with SHA-256 `hash` (lowercase hex) and `size` bytes, reading
    /// through this cache and calling `fetch` only for blocks that are not on disk. A render
    /// reads the asset through it when its `MediaSources` gives it for the asset's URL.
    public func source(hash: String, size: Int64, fetch: @escaping Fetch) throws -> ByteRangeSource {
        // The hash becomes a path component: hex only, so it can never climb out of the cache.
        guard hash.count >= 3, hash.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw RangeCacheError(message: "not a lowercase hex content hash: \"\(hash)\"")
        }
        guard size >= 0 else { throw RangeCacheError(message: "negative size \(size) for \(hash)") }
        return CachedAssetSource(cache: self, hash: hash, size: size, fetch: fetch)
    }

    /// Whether every block of the file is on disk (nothing more will be fetched for it).
    public func isComplete(hash: String, size: Int64) -> Bool {
        let count = Self.blockCount(size: size)
        return condition.withLock { (0..<count).allSatisfy { blocks[BlockKey(hash: hash, index: $0)] != nil } }
    }

    // MARK: Reading

    /// Copies `[offset, offset+count)` of the file (clamped to `size`) into `buffer`,
    /// fetching missing blocks first. Returns the number of bytes copied.
    /// - Parameter readAhead: when the read's last block must be fetched, up to this many
    ///   blocks after it that are missing are fetched in the same request (not pinned).
    func read(hash: String, size: Int64, offset: Int64, count: Int, into buffer: UnsafeMutableRawPointer,
              readAhead: Int = 0, fetch: Fetch) throws -> Int {
        guard offset >= 0 else { throw RangeCacheError(message: "negative offset \(offset) in \(hash)") }
        guard count > 0, offset < size else { return 0 }
        let length = Int(min(Int64(count), size - offset))
        let first = Int(offset / Int64(Self.blockSize))
        let last = Int((offset + Int64(length) - 1) / Int64(Self.blockSize))
        let wanted = (first...last).map { BlockKey(hash: hash, index: $0) }

        // A second attempt covers a block deleted under us (by another process sharing the
        // directory, or found truncated): the failed read forgot it, so it is fetched again.
        for attempt in 1...2 {
            // Never more ahead than a quarter of the cache holds: read-ahead must not evict
            // what other readers still use.
            try ensure(wanted, size: size, readAhead: min(readAhead, Int(byteLimit / Int64(Self.blockSize)) / 4), fetch: fetch)
            defer { unpin(wanted) }
            do {
                var copied = 0
                for key in wanted {
                    let blockStart = Int64(key.index) * Int64(Self.blockSize)
                    let from = max(offset, blockStart)
                    let to = min(offset + Int64(length), blockStart + Int64(Self.blockLength(index: key.index, size: size)))
                    try readBlock(key, at: Int(from - blockStart), count: Int(to - from), into: buffer + copied)
                    copied += Int(to - from)
                }
                return copied
            } catch is BlockReadError where attempt == 1 {
                continue
            }
        }
        preconditionFailure("unreachable: the second attempt returns or throws")
    }

    /// Makes every block of `wanted` present on disk and pins it (the caller unpins).
    /// Fetches the missing ones this thread claims, waits for those other threads fetch; when it
    /// fetches the last of `wanted`, also up to `readAhead` missing blocks right after it.
    private func ensure(_ wanted: [BlockKey], size: Int64, readAhead: Int, fetch: Fetch) throws {
        condition.lock()
        defer { condition.unlock() }
        // A block of the wrong length (a crash left it truncated) is dropped and fetched again.
        for key in wanted where blocks[key].map({ $0.bytes != Int64(Self.blockLength(index: key.index, size: size)) }) == true {
            remove(key, deleteFile: pins[key] == nil)
        }
        while true {
            let missing = wanted.filter { blocks[$0] == nil }
            if missing.isEmpty { break }
            var mine = missing.filter { !inFlight.contains($0) }
            if mine.isEmpty { condition.wait(); continue }
            if let last = wanted.last, mine.last == last {
                let blockCount = Self.blockCount(size: size)
                var next = last.index + 1
                while next <= last.index + readAhead, next < blockCount {
                    let key = BlockKey(hash: last.hash, index: next)
                    guard blocks[key] == nil, !inFlight.contains(key) else { break }
                    mine.append(key)
                    next += 1
                }
            }
            inFlight.formUnion(mine)
            condition.unlock()
            var failure: Error?
            var stored: [(BlockKey, Int64)] = []
            for run in Self.fetchRuns(mine.map(\.index)) {
                do {
                    stored += try fetchAndStore(hash: wanted[0].hash, blocks: run, size: size, fetch: fetch)
                } catch { failure = error; break }
            }
            condition.lock()
            for (key, bytes) in stored { insert(key, bytes: bytes) }
            inFlight.subtract(mine)
            condition.broadcast()
            if let failure { throw failure }
        }
        for key in wanted { pins[key, default: 0] += 1; touch(key) }
    }

    private func unpin(_ keys: [BlockKey]) {
        condition.withLock {
            for key in keys {
                if let n = pins[key], n > 1 { pins[key] = n - 1 } else { pins[key] = nil }
            }
            evictIfNeeded()
        }
    }

    /// Fetches one run of consecutive blocks with a single call and stores each block.
    private func fetchAndStore(hash: String, blocks run: ClosedRange<Int>, size: Int64, fetch: Fetch) throws -> [(BlockKey, Int64)] {
        let start = Int64(run.lowerBound) * Int64(Self.blockSize)
        let end = min(size, Int64(run.upperBound + 1) * Int64(Self.blockSize))
        let length = Int(end - start)
        let bytes = try fetch(hash, start, length)
        condition.withLock { fetched += Int64(bytes.count); fetches += 1 }
        guard bytes.count == length else {
            throw RangeCacheError(message: "fetching \(hash) at \(start): asked for \(length) bytes, got \(bytes.count)")
        }
        var stored: [(BlockKey, Int64)] = []
        try bytes.withUnsafeBytes { all in
            for index in run {
                let from = Int(Int64(index) * Int64(Self.blockSize) - start)
                let blockLength = Self.blockLength(index: index, size: size)
                let key = BlockKey(hash: hash, index: index)
                try writeAtomically(UnsafeRawBufferPointer(rebasing: all[from..<(from + blockLength)]), to: blockURL(key))
                stored.append((key, Int64(blockLength)))
            }
        }
        return stored
    }

    /// Splits sorted block indices into runs of consecutive blocks, none longer than one fetch.
    static func fetchRuns(_ indices: [Int]) -> [ClosedRange<Int>] {
        let perFetch = maxFetchLength / blockSize
        var runs: [ClosedRange<Int>] = []
        for i in indices.sorted() {
            if let run = runs.last, run.upperBound + 1 == i, run.count < perFetch {
                runs[runs.count - 1] = run.lowerBound...i
            } else {
                runs.append(i...i)
            }
        }
        return runs
    }

    private func readBlock(_ key: BlockKey, at offset: Int, count: Int, into buffer: UnsafeMutableRawPointer) throws {
        let path = blockURL(key).path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let message = "opening cache block \(path): \(String(cString: strerror(errno)))"
            condition.withLock { remove(key, deleteFile: false) }
            throw BlockReadError(message: message)
        }
        defer { close(fd) }
        var done = 0
        while done < count {
            let n = pread(fd, buffer + done, count - done, off_t(offset + done))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                // Truncated or unreadable: forget it so the next read fetches it again.
                condition.withLock { remove(key, deleteFile: true) }
                throw BlockReadError(message: "reading cache block \(path): " + (n < 0 ? String(cString: strerror(errno)) : "file too short"))
            }
            done += n
        }
    }

    // MARK: Index (call with `condition` held)

    private func insert(_ key: BlockKey, bytes: Int64) {
        if let old = blocks[key] { storedBytes -= old.bytes }
        useClock += 1
        blocks[key] = BlockRecord(bytes: bytes, lastUse: useClock, lastTouched: Date())
        storedBytes += bytes
    }

    private func touch(_ key: BlockKey) {
        useClock += 1
        blocks[key]?.lastUse = useClock
        // Keep the on-disk order roughly right for the next process; once per block per
        // second is plenty and keeps a 64 KiB read from costing a metadata write.
        let now = Date()
        if let record = blocks[key], now.timeIntervalSince(record.lastTouched) > 1 {
            blocks[key]?.lastTouched = now
            utimes(blockURL(key).path, nil)
        }
    }

    private func remove(_ key: BlockKey, deleteFile: Bool) {
        guard let record = blocks.removeValue(forKey: key) else { return }
        storedBytes -= record.bytes
        if deleteFile { unlink(blockURL(key).path) }
    }

    private func evictIfNeeded() {
        guard storedBytes > byteLimit else { return }
        let candidates = blocks.filter { pins[$0.key] == nil && !inFlight.contains($0.key) }
            .sorted { $0.value.lastUse < $1.value.lastUse }
        for (key, _) in candidates {
            guard storedBytes > byteLimit else { break }
            remove(key, deleteFile: true)
            // An emptied hash directory goes too (rmdir fails harmlessly when not empty).
            rmdir(blockURL(key).deletingLastPathComponent().path)
        }
    }

    // MARK: Disk

    private func blockURL(_ key: BlockKey) -> URL {
        directory.appendingPathComponent(String(key.hash.prefix(2)), isDirectory: true)
            .appendingPathComponent(key.hash, isDirectory: true)
            .appendingPathComponent(String(key.index))
    }

    private func writeAtomically(_ bytes: UnsafeRawBufferPointer, to url: URL) throws {
        let folder = url.deletingLastPathComponent()
        let temp = folder.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        var fd: Int32 = -1
        // Eviction removes a hash's emptied folder (under the lock, while this runs outside
        // it): if it vanished between creating it and creating the file, make it again.
        for _ in 0..<3 where fd < 0 {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            fd = open(temp.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if fd < 0 && errno != ENOENT { break }
        }
        guard fd >= 0 else { throw RangeCacheError(message: "creating \(temp.path): \(String(cString: strerror(errno)))") }
        var done = 0
        while done < bytes.count {
            let n = write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let message = String(cString: strerror(errno))
                close(fd); unlink(temp.path)
                throw RangeCacheError(message: "writing \(temp.path): \(message)")
            }
            done += n
        }
        close(fd)
        guard rename(temp.path, url.path) == 0 else {
            let message = String(cString: strerror(errno))
            unlink(temp.path)
            throw RangeCacheError(message: "renaming \(temp.path): \(message)")
        }
    }

    /// Indexes the blocks on disk, oldest mtime = least recently used; drops temp files.
    private func scan() throws {
        let fm = FileManager.default
        var found: [(BlockKey, Int64, Date)] = []
        for prefix in try fm.contentsOfDirectory(atPath: directory.path) {
            let prefixURL = directory.appendingPathComponent(prefix, isDirectory: true)
            guard let hashes = try? fm.contentsOfDirectory(atPath: prefixURL.path) else { continue }
            for hash in hashes where hash.hasPrefix(prefix) {
                let hashURL = prefixURL.appendingPathComponent(hash, isDirectory: true)
                for name in (try? fm.contentsOfDirectory(atPath: hashURL.path)) ?? [] {
                    let url = hashURL.appendingPathComponent(name)
                    if name.hasPrefix(".") { try? fm.removeItem(at: url); continue }
                    guard let index = Int(name), index >= 0,
                          let attributes = try? fm.attributesOfItem(atPath: url.path),
                          let bytes = (attributes[.size] as? NSNumber)?.int64Value,
                          let date = attributes[.modificationDate] as? Date else { continue }
                    found.append((BlockKey(hash: hash, index: index), bytes, date))
                }
            }
        }
        condition.withLock {
            for (key, bytes, date) in found.sorted(by: { $0.2 < $1.2 }) {
                insert(key, bytes: bytes)
                blocks[key]?.lastTouched = date
            }
        }
    }

    static func blockCount(size: Int64) -> Int { Int((size + Int64(blockSize) - 1) / Int64(blockSize)) }

    static func blockLength(index: Int, size: Int64) -> Int {
        Int(min(Int64(blockSize), size - Int64(index) * Int64(blockSize)))
    }
}

/// A failure of the range cache itself (bad hash, short fetch, disk error). Fetch errors are
/// passed through unchanged.
public struct RangeCacheError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }
}

/// A cached block could not be read back; the read is retried once with the block re-fetched.
private struct BlockReadError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// One block of one file.
struct BlockKey: Hashable, Sendable {
    var hash: String
    var index: Int
}

/// What the cache knows about a block on disk.
private struct BlockRecord {
    var bytes: Int64
    /// Position in the in-memory use order (higher = used more recently).
    var lastUse: UInt64
    /// When the file's mtime was last set.
    var lastTouched: Date
}

/// A `ByteRangeSource` over one content hash, reading through a `RangeCache`, with the
/// read-ahead the cache's note describes.
final class CachedAssetSource: ByteRangeSource {
    let cache: RangeCache
    let hash: String
    let size: Int64
    let fetch: RangeCache.Fetch
    private let sequence = Mutex(ReadSequence())

    init(cache: RangeCache, hash: String, size: Int64, fetch: @escaping RangeCache.Fetch) {
        self.cache = cache; self.hash = hash; self.size = size; self.fetch = fetch
    }

    func read(offset: Int64, count: Int, into buffer: UnsafeMutableRawPointer) throws -> Int {
        guard offset >= 0, count > 0, offset < size else {
            return try cache.read(hash: hash, size: size, offset: offset, count: count, into: buffer, fetch: fetch)
        }
        let blockSize = Int64(RangeCache.blockSize)
        let first = Int(offset / blockSize)
        let last = Int((min(offset + Int64(count), size) - 1) / blockSize)
        let readAhead = sequence.withLock { $0.readAhead(first: first, last: last) }
        return try cache.read(hash: hash, size: size, offset: offset, count: count, into: buffer, readAhead: readAhead, fetch: fetch)
    }
}

/// Where a source's reads have got to, and how far ahead of them to fetch.
struct ReadSequence {
    /// The last block the previous read touched (-1: none yet).
    private(set) var lastBlock = -1
    /// Blocks a fetch covers, the read's own last one included: 1, doubling at every block a
    /// sequential read moves on to, up to one fetch's worth.
    private(set) var window = 1

    static let maximumWindow = RangeCache.maxFetchLength / RangeCache.blockSize

    /// The read-ahead, in blocks, for a read of blocks `first...last`: a read that starts in or
    /// right after the previous one's last block continues the sequence; any other is a seek.
    mutating func readAhead(first: Int, last: Int) -> Int {
        if lastBlock >= 0, first == lastBlock || first == lastBlock + 1 {
            if last > lastBlock { window = min(window * 2, Self.maximumWindow) }
        } else {
            window = 1
        }
        lastBlock = last
        return window - 1
    }
}
