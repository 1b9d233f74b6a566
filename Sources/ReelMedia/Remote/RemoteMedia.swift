import Foundation

/// The process-wide table of media that is read through a `ByteRangeSource` instead of the
/// filesystem. Every reader that takes a path (`VideoFrameSource`, `AudioSampleSource`,
/// `StillImage`, `MediaProbe`, `PacketReader`, `CodecParameters(path:)`) accepts a registered
/// URL as its path and then reads through the source — so an agent registers each asset it
/// cannot see locally under `url(forContentHash:)` and hands that URL to the renderer.
///
/// Lock-protected: register, unregister and lookup may happen on any thread. A reader that
/// already opened a URL keeps its source alive after `unregister`; only new opens fail.
public enum RemoteMedia {
    /// The URL scheme of content-addressed assets. `avformat` knows no such protocol, so a
    /// URL of this scheme that is not registered fails with a clear error, never a file read.
    public static let scheme = "reel-asset"

    /// `"reel-asset:<hash>"`, the URL under which an asset with this SHA-256 (lowercase hex)
    /// is registered by convention.
    public static func url(forContentHash hash: String) -> String { "\(scheme):\(hash)" }

    /// Makes `url` read through `source` for every open from now on (replacing an earlier
    /// registration of the same URL).
    public static func register(_ source: ByteRangeSource, for url: String) {
        lock.withLock { sources[url] = source }
    }

    /// Forgets `url`; readers that already opened it keep working.
    public static func unregister(url: String) {
        _ = lock.withLock { sources.removeValue(forKey: url) }
    }

    /// The source registered for `url`, if any.
    public static func source(for url: String) -> ByteRangeSource? {
        lock.withLock { sources[url] }
    }

    /// Whether `path` is in the remote scheme (registered or not).
    static func isRemoteURL(_ path: String) -> Bool { path.hasPrefix("\(scheme):") }

    private static let lock = NSLock()
    // Only touched under `lock`.
    nonisolated(unsafe) private static var sources: [String: ByteRangeSource] = [:]
}
