/// What Reel knows about one source file after probing it: the facts validation, defaults
/// and planning need. Produced by `ReelMedia` (which reads the file); consumed by the pure
/// core (which never does).
public struct AssetDescription: Hashable, Sendable, Codable {
    public enum Kind: String, Hashable, Sendable, Codable {
        /// A timed file with at least one video track (it may also carry audio).
        case movie
        /// A timed file with audio only.
        case audio
        /// A still image (PNG, JPEG, …): no duration of its own, held for a segment's `duration`.
        case still
        /// A subtitle file (SubRip or WebVTT): cues, no pictures or sound (`subtitles` holds them).
        case subtitle
        /// A colour look-up table (a `.cube` file) for `lut` filters: no picture, no sound.
        case lut
    }

    public var kind: Kind
    /// Duration of the asset (container duration, time zero = the container's start time).
    /// `nil` for stills.
    public var duration: Rational?
    /// The first video track (or the image), if any.
    public var video: VideoTrackDescription?
    /// The first audio track, if any.
    public var audio: AudioTrackDescription?
    /// A subtitle file's cues (kind `.subtitle` only).
    public var subtitles: SubtitleDocument?
    /// The table's shape, for a `.lut` asset.
    public var lut: LUTDescription?

    public init(kind: Kind, duration: Rational?, video: VideoTrackDescription?, audio: AudioTrackDescription?,
                subtitles: SubtitleDocument? = nil, lut: LUTDescription? = nil) {
        self.kind = kind; self.duration = duration; self.video = video; self.audio = audio
        self.subtitles = subtitles; self.lut = lut
    }
}

/// The shape of a `.cube` LUT asset: 1D or 3D, and its size (entries, or entries a side).
public struct LUTDescription: Hashable, Sendable, Codable {
    public var dimensions: Int
    public var size: Int
    public init(dimensions: Int, size: Int) { self.dimensions = dimensions; self.size = size }
}

public struct VideoTrackDescription: Hashable, Sendable, Codable {
    /// The encoded (coded, pre-rotation) size in pixels.
    public var naturalSize: PixelSize
    /// The display matrix as a transform from encoded pixels to upright display pixels,
    /// normalised so the transformed frame's bounding box starts at (0, 0) (so a 90° clip's
    /// transform is `[0 1 -1 0 h 0]` as on Apple platforms, whatever translation the file stores).
    public var preferredTransform: AffineTransform
    /// Nominal frame duration (1 / average frame rate), if the container states one.
    public var frameDuration: Rational?
    /// Whether frames carry an alpha channel (e.g. RGBA PNG).
    public var hasAlpha: Bool
    /// Codec name as libavcodec reports it (`h264`, `png`, …).
    public var codec: String

    public init(naturalSize: PixelSize, preferredTransform: AffineTransform, frameDuration: Rational?, hasAlpha: Bool, codec: String) {
        self.naturalSize = naturalSize; self.preferredTransform = preferredTransform
        self.frameDuration = frameDuration; self.hasAlpha = hasAlpha; self.codec = codec
    }

    /// Size after the preferred transform (what a viewer sees).
    public var displaySize: PixelSize {
        let box = preferredTransform.boundingBox(of: Rect(x: 0, y: 0, width: Double(naturalSize.width), height: Double(naturalSize.height)))
        return PixelSize(width: Int(box.width.rounded()), height: Int(box.height.rounded()))
    }
}

public struct AudioTrackDescription: Hashable, Sendable, Codable {
    public var sampleRate: Int
    public var channels: Int
    public var codec: String
    public init(sampleRate: Int, channels: Int, codec: String) {
        self.sampleRate = sampleRate; self.channels = channels; self.codec = codec
    }
}

extension AssetDescription {
    /// Largest encoded side Reel accepts from a source (far above any real camera or still).
    public static let maximumSourceDimension = 65_536

    /// Why a probed source cannot be used, or nil. A crafted file can report anything: a zero
    /// or absurd size, a degenerate or non-finite display matrix, a zero frame rate or sample
    /// rate. Such an asset is refused at validation (`assets.<id>.url: …`) rather than
    /// reaching arithmetic that assumes sane values.
    public var usabilityProblem: String? {
        if let duration, duration <= .zero { return "the file reports a duration of \(TimeFormatting.seconds(duration)); it is damaged or not a media file" }
        if let video {
            let size = video.naturalSize
            if kind == .still && (size.width <= 0 || size.height <= 0) {
                return "is not an image Reel can decode (the file holds no readable picture)"
            }
            guard (1...Self.maximumSourceDimension).contains(size.width), (1...Self.maximumSourceDimension).contains(size.height) else {
                return "the file's picture size \(size.width)x\(size.height) is not usable (each side must be 1…\(Self.maximumSourceDimension))"
            }
            let t = video.preferredTransform
            let determinant = t.a * t.d - t.b * t.c
            guard [t.a, t.b, t.c, t.d, t.tx, t.ty].allSatisfy(\.isFinite), determinant.isNormal else {
                return "the file's display matrix [\(t.a) \(t.b) \(t.c) \(t.d) \(t.tx) \(t.ty)] is not a usable rotation or scale"
            }
            let display = video.displaySizeIfFinite
            guard let display, display.width <= 4 * Self.maximumSourceDimension, display.height <= 4 * Self.maximumSourceDimension else {
                return "the file's display matrix scales the picture beyond any usable size"
            }
            if let fd = video.frameDuration, fd <= .zero { return "the file reports a frame duration of \(fd) s" }
        }
        if let audio, audio.sampleRate <= 0 || audio.sampleRate > 1_536_000 || audio.channels <= 0 || audio.channels > 64 {
            return "the file's audio (\(audio.sampleRate) Hz, \(audio.channels) channels) is not usable"
        }
        return nil
    }
}

extension VideoTrackDescription {
    /// `displaySize`, or nil when the transformed box is not finite.
    var displaySizeIfFinite: PixelSize? {
        let box = preferredTransform.boundingBox(of: Rect(x: 0, y: 0, width: Double(naturalSize.width), height: Double(naturalSize.height)))
        guard box.width.isFinite, box.height.isFinite, box.width < 1e9, box.height < 1e9 else { return nil }
        return PixelSize(width: Int(box.width.rounded()), height: Int(box.height.rounded()))
    }
}
