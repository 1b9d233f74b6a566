import ReelCore
import Synchronization

/// A `ByteRangeSource` over a file held elsewhere (an object store), read in fixed-size blocks
/// with a small in-memory cache of the most recently used ones: what the coordinator probes a
/// source with when its storage is S3, so a probe fetches only the blocks libav reads — the
/// container's header and index (an MP4's `moov`, even at the end of the file) and the first
/// packets — never the whole file.
///
/// `fetch` is called with a block's byte range (the last one shorter) and must return exactly
/// those bytes; it may block (it runs on the reader's thread, never on the cooperative pool).
/// Thread-safe: blocks are fetched outside the lock, so two readers may fetch the same block
/// once each at worst.
public final class BlockCachedSource: ByteRangeSource {
    public typealias Fetch = @Sendable (Range<Int64>) throws -> [UInt8]

    public let size: Int64
    /// Bytes per block (a fetch's length, except at the end).
    public let blockSize: Int
    /// Blocks kept in memory at most.
    public let capacity: Int
    private let fetch: Fetch

    private struct State {
        var blocks: [Int64: [UInt8]] = [:]
        /// Block indices from least to most recently used.
        var order: [Int64] = []
        var fetchedBytes: Int64 = 0
        var fetchCount = 0
    }
    private let state = Mutex(State())

    public init(size: Int64, blockSize: Int = 64 << 10, capacity: Int = 32, fetch: @escaping Fetch) {
        precondition(blockSize > 0 && capacity > 0, "a block cache needs a positive block size and capacity")
        self.size = max(0, size)
        self.blockSize = blockSize
        self.capacity = capacity
        self.fetch = fetch
    }

    /// Bytes fetched so far (logs, tests).
    public var fetchedBytes: Int64 { state.withLock { $0.fetchedBytes } }
    /// Fetches made so far.
    public var fetchCount: Int { state.withLock { $0.fetchCount } }

    public func read(offset: Int64, count: Int, into buffer: UnsafeMutableRawPointer) throws -> Int {
        guard offset >= 0, count > 0, offset < size else { return 0 }
        let end = min(size, offset + Int64(count))
        var position = offset
        while position < end {
            let index = position / Int64(blockSize)
            let block = try self.block(index)
            let blockStart = index * Int64(blockSize)
            let from = Int(position - blockStart)
            let n = min(block.count - from, Int(end - position))
            guard n > 0 else { break }
            block.withUnsafeBytes { raw in
                (buffer + Int(position - offset)).copyMemory(from: raw.baseAddress! + from, byteCount: n)
            }
            position += Int64(n)
        }
        return Int(position - offset)
    }

    private func block(_ index: Int64) throws -> [UInt8] {
        if let cached = state.withLock({ state -> [UInt8]? in
            guard let block = state.blocks[index] else { return nil }
            state.order.removeAll { $0 == index }
            state.order.append(index)
            return block
        }) {
            return cached
        }
        let start = index * Int64(blockSize)
        let range = start..<min(size, start + Int64(blockSize))
        let bytes = try fetch(range)
        guard Int64(bytes.count) == Int64(range.count) else {
            throw MediaError(code: .noData, message: "the store returned \(bytes.count) bytes for \(range.count) (\(range))", context: "reading a block")
        }
        state.withLock { state in
            state.fetchedBytes += Int64(bytes.count)
            state.fetchCount += 1
            if state.blocks[index] == nil {
                state.blocks[index] = bytes
                state.order.append(index)
                while state.order.count > capacity { state.blocks[state.order.removeFirst()] = nil }
            }
        }
        return bytes
    }
}
