import Foundation

/// A file that appears under its final name only when complete: bytes go to a temporary
/// name in the same directory, then `commit()` fsyncs, renames and fsyncs the directory, so
/// a crash or an interrupted download never leaves a half file under the output name.
/// Owns its descriptor: `commit()` or deinit closes it (deinit also removes the temporary).
/// Used from one task at a time.
final class OutputFile {
    let path: String
    let temporaryPath: String
    private var descriptor: Int32
    private var committed = false

    init(path: String) throws {
        self.path = path
        let url = URL(fileURLWithPath: path)
        temporaryPath = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).reel-partial-\(getpid())").path
        descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw UserError("cannot create \(temporaryPath): \(String(cString: strerror(errno)))") }
    }

    func write(_ bytes: ArraySlice<UInt8>) throws {
        try bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n = Foundation.write(descriptor, buffer.baseAddress! + done, buffer.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw UserError("cannot write \(temporaryPath): \(String(cString: strerror(errno)))")
                }
                done += n
            }
        }
    }

    /// Flushes to disk and moves the file to `path` atomically.
    func commit() throws {
        guard fsync(descriptor) == 0 else { throw UserError("cannot flush \(temporaryPath): \(String(cString: strerror(errno)))") }
        close(descriptor)
        descriptor = -1
        guard rename(temporaryPath, path) == 0 else { throw UserError("cannot rename \(temporaryPath) to \(path): \(String(cString: strerror(errno)))") }
        committed = true
        // The rename is durable only once the directory entry is on disk.
        let directory = open(URL(fileURLWithPath: path).deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 { fsync(directory); close(directory) }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if !committed { unlink(temporaryPath) }
    }
}
