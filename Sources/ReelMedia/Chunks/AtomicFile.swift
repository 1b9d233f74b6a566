import Foundation

/// Write-then-rename: the output name only ever holds a complete, flushed file.
public enum AtomicFile {
    /// A hidden name in the same directory (so the rename cannot cross file systems).
    public static func temporaryPath(for path: String) -> String {
        let url = URL(fileURLWithPath: path)
        let ext = url.pathExtension.isEmpty ? "" : "." + url.pathExtension
        return url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent).partial-\(getpid())\(ext)").path
    }

    /// fsyncs `partial`, renames it to `path`, and fsyncs the directory so the rename is durable.
    public static func commit(_ partial: String, to path: String) throws {
        try fsync(path: partial)
        guard rename(partial, path) == 0 else {
            throw RenderError.io("cannot rename \(partial) to \(path): \(String(cString: strerror(errno)))")
        }
        try? fsync(path: URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }

    static func fsync(path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw RenderError.io("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard Foundation.fsync(fd) == 0 else { throw RenderError.io("cannot fsync \(path): \(String(cString: strerror(errno)))") }
    }
}
