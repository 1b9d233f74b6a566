import CFFmpeg
import Foundation
import ReelCore

/// A custom `AVIOContext` that reads a `ByteRangeSource`, so libavformat demuxes media it
/// cannot open by name.
///
/// Ownership: this object owns the `AVIOContext` and its buffer (libav may replace the buffer
/// with one of its own, so the buffer freed is whatever `buffer` points at in the end) and one
/// retain of the `Cursor` given to libav as the callbacks' opaque pointer. The format context
/// that uses `context` as its `pb` must be closed before this object goes away (`InputFile`
/// closes it in its `deinit` body, before its stored properties are released).
///
/// Used from one thread at a time: the thread that drives the owning `InputFile`.
final class ByteRangeIO {
    /// Size of the read buffer libav fills through the callback (libav's own file protocol
    /// uses 32 KiB; twice that halves callback overhead without reading far ahead).
    static let bufferSize = 64 * 1024

    /// The state the C callbacks see. Held by libav's opaque pointer, retained until `deinit`.
    final class Cursor {
        let source: ByteRangeSource
        var position: Int64 = 0
        /// The last error the source threw; libav only learns "EIO", the reader wants the cause.
        var failure: Error?
        init(source: ByteRangeSource) { self.source = source }
    }

    let context: UnsafeMutablePointer<AVIOContext>
    private let cursor: Unmanaged<Cursor>

    init(source: ByteRangeSource, url: String) throws {
        guard let buffer = av_malloc(Self.bufferSize) else {
            throw MediaError(code: .libav, status: reel_averror(ENOMEM), message: "out of memory", context: "opening \(url)")
        }
        let cursor = Unmanaged.passRetained(Cursor(source: source))
        guard let ctx = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Int32(Self.bufferSize), 0,
                                           cursor.toOpaque(), byteRangeRead, nil, byteRangeSeek) else {
            av_free(buffer)
            cursor.release()
            throw MediaError(code: .libav, status: reel_averror(ENOMEM), message: "out of memory", context: "opening \(url)")
        }
        self.context = ctx
        self.cursor = cursor
    }

    deinit {
        av_freep(&context.pointee.buffer)
        var c: UnsafeMutablePointer<AVIOContext>? = context
        avio_context_free(&c)
        cursor.release()
    }

    /// Whether a callback failed since the last `takeFailure()`.
    var hasFailure: Bool { cursor.takeUnretainedValue().failure != nil }

    /// The source's error since the last call, if a callback failed; clears it.
    func takeFailure() -> Error? {
        let c = cursor.takeUnretainedValue()
        defer { c.failure = nil }
        return c.failure
    }
}

// libav's read callback: fills `buf` from the cursor's position. AVERROR_EOF at the end.
private func byteRangeRead(_ opaque: UnsafeMutableRawPointer?, _ buf: UnsafeMutablePointer<UInt8>?, _ size: Int32) -> Int32 {
    guard let opaque, let buf, size > 0 else { return reel_averror(EINVAL) }
    let cursor = Unmanaged<ByteRangeIO.Cursor>.fromOpaque(opaque).takeUnretainedValue()
    do {
        let n = try cursor.source.read(offset: cursor.position, count: Int(size), into: buf)
        guard n > 0 else { return reel_averror_eof() }
        cursor.position += Int64(n)
        return Int32(n)
    } catch {
        cursor.failure = error
        return reel_averror(EIO)
    }
}

// libav's seek callback: SEEK_SET/CUR/END and AVSEEK_SIZE (AVSEEK_FORCE may be or-ed in).
private func byteRangeSeek(_ opaque: UnsafeMutableRawPointer?, _ offset: Int64, _ whence: Int32) -> Int64 {
    guard let opaque else { return Int64(reel_averror(EINVAL)) }
    let cursor = Unmanaged<ByteRangeIO.Cursor>.fromOpaque(opaque).takeUnretainedValue()
    let size = cursor.source.size
    let target: Int64
    switch whence & ~Int32(AVSEEK_FORCE) {
    case Int32(AVSEEK_SIZE): return size
    case SEEK_SET: target = offset
    case SEEK_CUR: target = cursor.position + offset
    case SEEK_END: target = size + offset
    default: return Int64(reel_averror(EINVAL))
    }
    // Past the end is allowed (reads return EOF there), before the start is not.
    guard target >= 0 else { return Int64(reel_averror(EINVAL)) }
    cursor.position = target
    return target
}
