/// Random access to the bytes of one media file that may not exist on this machine — a
/// coordinator-held asset read in byte ranges, or a local file in tests.
///
/// Implementations are shared: one source can back several open `InputFile`s on different
/// threads at once, each with its own read position, so `read` must be thread-safe and must
/// not depend on earlier calls (it is positional, like `pread`).
public protocol ByteRangeSource: AnyObject, Sendable {
    /// The file's total length in bytes. Fixed for the source's lifetime.
    var size: Int64 { get }

    /// Copies up to `count` bytes starting at `offset` into `buffer` and returns how many it
    /// copied: fewer than `count` only at the end of the file, 0 at or past the end.
    /// Throws when the bytes cannot be had (network, cache or disk failure); media readers
    /// turn the error into a `MediaError` that carries its description.
    func read(offset: Int64, count: Int, into buffer: UnsafeMutableRawPointer) throws -> Int
}
