import Foundation
import NIOCore
import NIOPosix

/// An open local file, read or written at explicit offsets (`pread`/`pwrite`) on NIO's blocking
/// thread pool, so uploads and downloads of any size stream through a small buffer without
/// blocking Swift's cooperative threads.
///
/// Owns its descriptor and closes it in `deinit`: a request body that is still being read when
/// its caller has moved on keeps the file open for as long as it needs it.
final class LocalFile: Sendable {
    let descriptor: Int32
    let path: String

    private init(descriptor: Int32, path: String) { self.descriptor = descriptor; self.path = path }

    deinit { close(descriptor) }

    static func openForReading(_ path: String) throws -> LocalFile {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw error("cannot open \(path) for reading") }
        return LocalFile(descriptor: fd, path: path)
    }

    /// Creates (or truncates) `path`, owner-only.
    static func create(_ path: String) throws -> LocalFile {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw error("cannot create \(path)") }
        return LocalFile(descriptor: fd, path: path)
    }

    var size: Int64 {
        get throws {
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { throw Self.error("cannot stat \(path)") }
            return Int64(info.st_size)
        }
    }

    /// Up to `count` bytes at `offset`; fewer only at the end of the file.
    func read(offset: Int64, count: Int) async throws -> ByteBuffer {
        try await NIOThreadPool.singleton.runIfActive { [self] in
            var buffer = ByteBufferAllocator().buffer(capacity: count)
            _ = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw -> Int in
                var done = 0
                while done < count {
                    let n = pread(descriptor, raw.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                    if n < 0 && errno == EINTR { continue }
                    if n < 0 { throw Self.error("cannot read \(path)") }
                    if n == 0 { break }
                    done += n
                }
                return done
            }
            return buffer
        }
    }

    /// Writes all of `buffer` at `offset`.
    func write(_ buffer: ByteBuffer, at offset: Int64) async throws {
        try await NIOThreadPool.singleton.runIfActive { [self] in
            try buffer.withUnsafeReadableBytes { raw in
                var done = 0
                while done < raw.count {
                    let n = pwrite(descriptor, raw.baseAddress! + done, raw.count - done, off_t(offset) + off_t(done))
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { throw Self.error("cannot write \(path)") }
                    done += n
                }
            }
        }
    }

    /// Flushes the file to disk.
    func sync() async throws {
        try await NIOThreadPool.singleton.runIfActive { [self] in
            guard fsync(descriptor) == 0 else { throw Self.error("cannot fsync \(path)") }
        }
    }

    static func error(_ what: String) -> ObjectStoreError {
        ObjectStoreError(.localFile, "\(what): \(String(cString: strerror(errno)))")
    }
}
