/// The kinds of bytes the farm keeps, each under a folder of its own (docs/object-storage.md).
public enum BlobKind: String, CaseIterable, Hashable, Sendable {
    /// Sources (media, fonts, LUTs, subtitles) by the SHA-256 of their bytes.
    case assets
    /// Chunk results (video chunks, audio) by the SHA-256 of their bytes.
    case results
    /// Finished renders, by job.
    case outputs
    /// Each job's newest poster frame (a small JPEG), by job.
    case posters
}

/// What the farm stores, named by what it is. Assets and results are content-addressed: the
/// key is the SHA-256 of the bytes, so a key always names the same bytes, a write of bytes
/// already stored is skipped, and a store refuses to put other bytes under a content key.
///
/// Layout under a store's root (a directory, or `PREFIX/` in a bucket):
///
///     assets/sha256/9f/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
///     results/sha256/ab/ab5c…
///     outputs/42.mp4
///     posters/42.jpg
///
/// The two hex digits after `sha256/` spread the keys over 256 prefixes (S3 scales request
/// rates per prefix; a file system lists smaller directories). `sha256/` names the hash, so
/// another could live beside it one day.
public enum BlobKey: Hashable, Sendable, CustomStringConvertible {
    case asset(sha256: String)
    case result(sha256: String)
    /// `fileType` is the output's extension (`mp4`, `mov`, …).
    case output(job: Int64, fileType: String)
    case poster(job: Int64)

    public var kind: BlobKind {
        switch self {
        case .asset: return .assets
        case .result: return .results
        case .output: return .outputs
        case .poster: return .posters
        }
    }

    /// The SHA-256 the bytes must have, for content-addressed keys.
    public var contentSHA256: String? {
        switch self {
        case .asset(let sha256), .result(let sha256): return sha256
        case .output, .poster: return nil
        }
    }

    /// The path under the store's root (see the type's documentation).
    public var relativePath: String {
        switch self {
        case .asset(let sha256): return "assets/sha256/\(sha256.prefix(2))/\(sha256)"
        case .result(let sha256): return "results/sha256/\(sha256.prefix(2))/\(sha256)"
        case .output(let job, let fileType): return "outputs/\(job).\(fileType)"
        case .poster(let job): return "posters/\(job).jpg"
        }
    }

    public var description: String { relativePath }

    /// The key stored at `relativePath`, or `nil` for a path of no key's form (something else
    /// in the store, which sweeps leave alone).
    public init?(relativePath path: String) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        switch (parts.first, parts.count) {
        case ("assets", 4), ("results", 4):
            guard parts[1] == "sha256", Self.isSHA256(parts[3]), parts[2] == String(parts[3].prefix(2)) else { return nil }
            self = parts[0] == "assets" ? .asset(sha256: parts[3]) : .result(sha256: parts[3])
        case ("outputs", 2):
            let name = parts[1].split(separator: ".", maxSplits: 1).map(String.init)
            guard name.count == 2, let job = Int64(name[0]), job > 0, String(job) == name[0], !name[1].isEmpty,
                  name[1].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
            self = .output(job: job, fileType: name[1])
        case ("posters", 2):
            guard parts[1].hasSuffix(".jpg"), let job = Int64(parts[1].dropLast(4)), job > 0, String(job) + ".jpg" == parts[1] else { return nil }
            self = .poster(job: job)
        default:
            return nil
        }
    }

    /// 64 lower-case hex digits.
    public static func isSHA256(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
