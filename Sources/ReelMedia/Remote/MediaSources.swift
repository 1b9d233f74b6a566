import ReelCore

/// What a media reader opens: a file on this machine, or bytes read through a
/// `ByteRangeSource` (an asset held by the coordinator, fetched in ranges and cached).
///
/// `name` is what messages call it: the path, or the plan's URL of a remote asset.
public enum MediaLocation: Sendable, CustomStringConvertible {
    case file(String)
    case byteRanges(any ByteRangeSource, name: String)

    public var description: String {
        switch self {
        case .file(let path): return path
        case .byteRanges(_, let name): return name
        }
    }
}

/// The byte-range sources of one render's assets, by the URL its plan gives them.
///
/// A value handed down a render (`ChunkRenderer` → `FrameRenderer`, `AudioMixer`), so two
/// renders in one process (two agent slots, two in-process agents) never see each other's
/// sources, and a render's sources go away with it. A URL that is not here is a file path;
/// a URL in the `reel-asset:` scheme that is not here is an error, never a file read.
public struct MediaSources: Sendable {
    /// The URL scheme of content-addressed assets. `avformat` knows no such protocol.
    public static let scheme = "reel-asset"

    /// Every asset read from the filesystem: renders of local files.
    public static let local = MediaSources()

    /// `"reel-asset:<hash>"`: the URL an asset with this SHA-256 (lowercase hex) is given in
    /// a plan whose sources come through byte ranges.
    public static func url(forContentHash hash: String) -> String { "\(scheme):\(hash)" }

    private var sources: [String: any ByteRangeSource] = [:]

    public init() {}

    /// Reads `url` through `source` (replacing an earlier source for it).
    public mutating func add(_ source: any ByteRangeSource, for url: String) { sources[url] = source }

    /// Where a reader of `url` gets its bytes.
    public func location(of url: String) throws -> MediaLocation {
        if let source = sources[url] { return .byteRanges(source, name: url) }
        guard !url.hasPrefix("\(Self.scheme):") else {
            throw MediaError(code: .invalidArgument, message: "no byte-range source is given for this asset", context: "opening \(url)")
        }
        return .file(url)
    }
}
