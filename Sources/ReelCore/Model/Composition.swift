/// A v1 composition as written in its JSON file (docs/composition.md), after parsing but before
/// validation: every value has its type, defaults that need no asset knowledge are filled in,
/// but cross-references (asset ids, track ids, time tiling) are not yet checked —
/// `CompositionValidator` does that and produces a `RenderPlan`.
public struct Composition: Hashable, Sendable, Codable {
    /// Must be 1 (checked by the validator, so a newer file gets a clear message).
    public var formatVersion: Int
    /// Asset id → where its media is.
    public var assets: [String: AssetReference]
    /// AVMutableComposition-style tracks, in file order.
    public var tracks: [Track]
    /// Per-track volume curves; tracks without an entry play at volume 1.
    public var audioMix: [AudioMixParameters]
    /// Optional: absent means all defaults of docs/composition.md, "Defaults".
    public var videoComposition: VideoComposition?
    /// Export preset and overrides; absent means `ExportOptions()` (preset highest, mp4).
    public var export: ExportOptions

    public init(formatVersion: Int = 1, assets: [String: AssetReference] = [:], tracks: [Track] = [],
                audioMix: [AudioMixParameters] = [], videoComposition: VideoComposition? = nil,
                export: ExportOptions = ExportOptions()) {
        self.formatVersion = formatVersion; self.assets = assets; self.tracks = tracks
        self.audioMix = audioMix; self.videoComposition = videoComposition; self.export = export
    }
}

/// Where one asset's media lives: a path relative to the composition file, an absolute path,
/// a `file://` URL or an `http(s)://` URL (see `resolveAssetURL`).
public struct AssetReference: Hashable, Sendable, Codable {
    public var url: String
    public init(url: String) { self.url = url }
}

/// Whether a track carries pictures, sound or subtitles.
public enum MediaType: String, Hashable, Sendable, Codable, CaseIterable {
    case video, audio, subtitle
}

/// One composition track: segments placed on the timeline (in file order, not necessarily sorted).
public struct Track: Hashable, Sendable, Codable {
    /// The track's id, referenced by `audioMix` and layer instructions; unique.
    public var id: Int
    public var mediaType: MediaType
    public var segments: [Segment]
    /// Subtitle tracks only (`SubtitleTrackOptions`); nil for video and audio tracks.
    public var subtitle: SubtitleTrackOptions?
    public init(id: Int, mediaType: MediaType, segments: [Segment], subtitle: SubtitleTrackOptions? = nil) {
        self.id = id; self.mediaType = mediaType; self.segments = segments; self.subtitle = subtitle
    }
}

/// One entry of a track: media inserted at a time, or an explicit empty range.
///
/// Decision (docs/composition.md, "Tracks and segments"): a media segment is
/// `{"asset", optional "at", optional "sourceRange", optional "duration"}`; without `at` it
/// starts where the track's previous segment (in file order) ends, so segments after one whose
/// length comes from its file follow it. A still needs `duration`
/// (it has no length of its own); timed media use `sourceRange`, and without it the whole
/// asset is inserted; timed media with both play the range scaled to `duration`
/// (`scaleTimeRange`: a speed change). An empty segment is
/// `{"empty": TimeRange}` (`insertEmptyTimeRange`); it only marks time, it draws nothing.
public enum Segment: Hashable, Sendable, Codable {
    case media(MediaSegment)
    case empty(TimeRange)
}

/// `insertTimeRange(sourceRange, of: asset, at: at)` — see `Segment` for the rules.
public struct MediaSegment: Hashable, Sendable, Codable {
    /// Asset id (a key of `Composition.assets`).
    public var asset: String
    /// Composition time where the segment starts; nil = where the track's previous segment (in
    /// file order) ends, 0 for the first (resolved by the validator, which knows the lengths).
    public var at: Rational?
    /// Part of the source to use; nil = the whole asset (timed media only).
    public var sourceRange: TimeRange?
    /// How long a still is held; for timed media with a `sourceRange`, how long that range
    /// plays (a speed change).
    public var duration: Rational?

    public init(asset: String, at: Rational?, sourceRange: TimeRange? = nil, duration: Rational? = nil) {
        self.asset = asset; self.at = at; self.sourceRange = sourceRange; self.duration = duration
    }
}
