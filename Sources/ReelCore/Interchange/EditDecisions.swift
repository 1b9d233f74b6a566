/// An editor's cut after reading, before it becomes a composition: the common ground of the
/// OpenTimelineIO and CMX 3600 readers, which `CompositionBuilder` turns into Reel's JSON.
///
/// Everything is already in composition time (seconds from the cut's first frame, exact):
/// nesting is flattened, trims applied, and each clip is extended over the transitions it
/// takes part in (an outgoing clip runs on through the transition, an incoming one starts at
/// its beginning), so the builder only has to stack and fade.
struct EditDecisions: Sendable {
    /// The lanes bottom first (OTIO's stack order): a later video lane is drawn above an
    /// earlier one. Audio lanes are summed, so their order does not matter.
    var lanes: [EditLane] = []
    /// The frame duration the cut is edited at, when it says.
    var frameDuration: Rational?
}

/// One track of the cut: clips that do not overlap except where a transition joins them.
struct EditLane: Sendable {
    enum Kind: String, Sendable { case video, audio }
    var kind: Kind
    /// Names the track in messages, e.g. `track "V1" (tracks.children[0])`.
    var label: String
    var clips: [EditClip] = []
    var transitions: [EditTransition] = []
    /// Where the track ends in composition time (a trailing gap counts).
    var end: Rational = .zero
}

/// One clip placed on the composition timeline.
struct EditClip: Sendable {
    /// Unique within the lane; transitions refer to it.
    var id: Int
    /// Names the item in messages: where it is in the file and what it is called.
    var origin: ItemOrigin
    /// The media file (resolved by `MediaLookup`).
    var media: String
    /// Composition time where the clip starts and how long it plays there.
    var at: Rational
    var duration: Rational
    /// Source time (seconds from the file's start) shown at `at`.
    var sourceStart: Rational
    var timing: ClipTiming = .normal
}

/// How a clip's source time runs against composition time.
enum ClipTiming: Hashable, Sendable {
    /// One second of source per second of composition.
    case normal
    /// `scalar` seconds of source per second of composition (2 = twice as fast).
    case speed(Rational)
    /// The frame at `sourceStart` held; `frame` is one frame of the clip's own rate.
    case freeze(frame: Rational)

    /// Source seconds used for `duration` seconds of composition.
    func sourceLength(for duration: Rational) -> Rational {
        switch self {
        case .normal: duration
        case .speed(let s): duration * s
        case .freeze(let frame): frame
        }
    }
    /// Source seconds for `duration` seconds of composition, before or after the clip (handles
    /// pulled in by a transition).
    func sourceOffset(for duration: Rational) -> Rational {
        switch self {
        case .normal: duration
        case .speed(let s): duration * s
        case .freeze: .zero
        }
    }
}

/// A dissolve between two clips of one lane, or from or to nothing (a fade).
struct EditTransition: Sendable {
    var origin: ItemOrigin
    /// Composition time over which the picture or sound dissolves.
    var range: TimeRange
    /// The clip going out (nil: a fade in from nothing) and the clip coming in (nil: a fade out).
    var outgoing: Int?
    var incoming: Int?
}

/// Where an item of the editor's file is, and what it is, for messages.
public struct ItemOrigin: Hashable, Sendable, CustomStringConvertible {
    /// Where in the file: a JSON path in an `.otio` (`tracks.children[0].children[2]`), an
    /// event and line in an EDL (`event 003 (line 7)`).
    public var path: String
    /// What it is: `clip "shot A" on track "V1"`.
    public var what: String
    public init(path: String, what: String) { self.path = path; self.what = what }
    public var description: String { "\(path) (\(what))" }
}

/// Finds a timeline's media on this machine. The pure core decides where to look; the caller
/// answers whether a file is there (and whether it is a still image), so the readers need no I/O.
///
/// Where to look, first hit wins (docs/interchange.md, "Finding media"): a `file://` URL or an
/// absolute path as written; a relative path under the timeline's directory; then, with a
/// media root, the path under the root and the bare file name under the root. An EDL's reels
/// add their names with the usual movie and sound extensions.
public struct MediaLookup: Sendable {
    /// The directory of the timeline file (relative references start there).
    public var timelineDirectory: String
    /// `--media-root`: where media moved to, when the paths in the timeline are not this machine's.
    public var mediaRoot: String?
    /// Whether a regular file exists at this path.
    public var exists: @Sendable (String) -> Bool
    /// Whether the file at this path is a still image (shown for a duration, not trimmed).
    public var isStill: @Sendable (String) -> Bool

    public init(timelineDirectory: String, mediaRoot: String? = nil,
                exists: @escaping @Sendable (String) -> Bool, isStill: @escaping @Sendable (String) -> Bool = { _ in false }) {
        self.timelineDirectory = timelineDirectory; self.mediaRoot = mediaRoot; self.exists = exists; self.isStill = isStill
    }

    /// Extensions tried after a bare EDL reel name.
    static let reelExtensions = ["mov", "mp4", "mxf", "m4v", "mkv", "avi", "wav", "aif", "aiff", "m4a", "mp3"]

    /// The places looked at for a reference, in order.
    func candidates(for reference: String) -> [String] {
        var path = reference
        let lower = reference.lowercased()
        if lower.hasPrefix("file://") { path = resolveAssetURL(reference, relativeTo: "/") }
        var out: [String] = []
        if path.hasPrefix("/") {
            out.append(path)
        } else {
            out.append(resolveAssetURL(path, relativeTo: timelineDirectory))
        }
        if let mediaRoot {
            let relative = path.hasPrefix("/") ? nil : path
            if let relative { out.append(resolveAssetURL(relative, relativeTo: mediaRoot)) }
            if let name = path.split(separator: "/").last.map(String.init), !name.isEmpty {
                out.append(resolveAssetURL(name, relativeTo: mediaRoot))
            }
        }
        var seen: Set<String> = []
        return out.filter { seen.insert($0).inserted }
    }

    /// The first candidate that exists, or the list of places looked at.
    func locate(_ references: [String]) -> Result<String, MediaNotFound> {
        var looked: [String] = []
        for reference in references {
            for candidate in candidates(for: reference) where !looked.contains(candidate) {
                if exists(candidate) { return .success(candidate) }
                looked.append(candidate)
            }
        }
        return .failure(MediaNotFound(looked: looked))
    }

    /// `http(s)://` references are not files on this machine.
    static func isRemote(_ reference: String) -> Bool {
        let lower = reference.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://")
    }
}

/// No candidate existed.
struct MediaNotFound: Error {
    var looked: [String]
    var message: String {
        "media not found; looked for " + looked.map { "\($0)" }.joined(separator: ", ")
            + " (give --media-root DIR where the files are)"
    }
}
