/// An HLS/DASH ladder with every default resolved (docs/composition.md, "HLS and DASH ladders"):
/// the renditions one job encodes from the same rendered frames, and the segment grid they share.
///
/// Invariants (after validation): `segmentFrames` is a positive multiple of the export's
/// `gopFrames`, so every segment of every rendition starts with an IDR frame at the same
/// timestamp; rendition names are unique and safe as folder names; sizes are even and no
/// larger than the render size in either dimension; every rendition has a bit rate and a
/// maximum bit rate ≥ it.
public struct RenditionLadder: Codable, Sendable, Hashable {
    /// Seconds per segment: `segmentFrames` frames.
    public var segmentDuration: Rational
    /// Frames per segment; chunk boundaries are multiples of it.
    public var segmentFrames: Int
    /// Largest first, as written (or as the default ladder orders them).
    public var renditions: [PlannedRendition]

    public init(segmentDuration: Rational, segmentFrames: Int, renditions: [PlannedRendition]) {
        self.segmentDuration = segmentDuration; self.segmentFrames = segmentFrames; self.renditions = renditions
    }

    /// `export.segmentDuration` when it is not written: about 6 s, as Apple's HLS authoring
    /// guidance has it (made a whole number of GOPs, so that it also works at 29.97 fps).
    public static let defaultSegmentDuration = Rational(6)

    /// One rung of the default ladder: the longest side of the picture and the bit rate.
    public struct Rung: Sendable, Hashable {
        public var longestSide: Int
        public var bitRate: Int
    }

    /// The default ladder, after Apple's HLS authoring table for 16:9 video: 1920x1080 at
    /// 6,000 kbit/s, 1280x720 at 3,000, 960x540 at 2,000, 640x360 at 730, 416x234 at 145.
    public static let defaultRungs: [Rung] = [
        Rung(longestSide: 1920, bitRate: 6_000_000), Rung(longestSide: 1280, bitRate: 3_000_000),
        Rung(longestSide: 960, bitRate: 2_000_000), Rung(longestSide: 640, bitRate: 730_000),
        Rung(longestSide: 416, bitRate: 145_000),
    ]

    /// The most renditions one job encodes (each is an encoder held by every chunk task).
    public static let maximumRenditions = 8

    /// The folder of the audio rendition group in the output; no rendition may take its name.
    public static let audioFolder = "audio"

    /// The folder of audio output `index` (counted from 0) of `export.audioOutputs`: `audio-1`, `audio-2` …
    public static func audioFolder(output index: Int) -> String { "audio-\(index + 1)" }

    /// The folder of subtitle track `index` (counted from 0, in the plan's order): `subtitles-1` …
    public static func subtitleFolder(track index: Int) -> String { "subtitles-\(index + 1)" }

    /// Whether `name` is one of the folders the ladder's sound and subtitles use, which no
    /// rendition may take: `audio`, `audio-N`, `subtitles-N`.
    public static func isReservedFolder(_ name: String) -> Bool {
        if name == audioFolder { return true }
        for prefix in ["audio-", "subtitles-"] where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            if !rest.isEmpty, rest.allSatisfy(\.isASCII), rest.allSatisfy(\.isNumber) { return true }
        }
        return false
    }

    /// The characters a rendition name may use (it names the rendition's folder).
    public static let nameCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789_-")

    /// The renditions of the default ladder for `renderSize`: each rung whose longest side is
    /// at most the render's, with the render's aspect ratio (the other side rounded to the
    /// nearest even number), named `WIDTHxHEIGHT`. When no rung fits (a render smaller than
    /// 416 pixels), one rendition at the render size with the smallest rung's bit rate.
    public static func defaultRenditions(renderSize: PixelSize) -> [RenditionOptions] {
        let longest = max(renderSize.width, renderSize.height)
        var sizes: [(PixelSize, Int)] = defaultRungs.filter { $0.longestSide <= longest }.map { rung in
            (RenderDefaults.scaled(renderSize, longestSide: rung.longestSide), rung.bitRate)
        }
        if sizes.isEmpty { sizes = [(renderSize, defaultRungs.last!.bitRate)] }
        return sizes.map { size, rate in
            RenditionOptions(name: "\(size.width)x\(size.height)", renderSize: size, video: RenditionVideoOptions(bitRate: rate))
        }
    }

    /// The segment grid in frames: `segmentDuration` over `frameDuration` when written (the
    /// validator checks it is whole and a multiple of the GOP), else the whole number of GOPs
    /// nearest `defaultSegmentDuration` (at least one).
    public static func segmentFrames(written: Rational?, frameDuration: Rational, gopFrames: Int) -> Int {
        if let written {
            return max(1, Int((written / frameDuration).rounded))
        }
        let gops = max(1, Int((defaultSegmentDuration / (frameDuration * gopFrames)).rounded))
        return gops * gopFrames
    }

    /// The ladder for `options` over a render of `renderSize`, with `base` as every
    /// rendition's starting video settings (the preset's and `export.video`'s).
    public init(resolving options: ExportOptions, renderSize: PixelSize, frameDuration: Rational, base: VideoExportSettings) {
        let frames = Self.segmentFrames(written: options.segmentDuration, frameDuration: frameDuration, gopFrames: base.gopFrames)
        let written = options.renditions ?? Self.defaultRenditions(renderSize: renderSize)
        let renditions = written.map { r -> PlannedRendition in
            var video = base
            video.codec = r.video.codec ?? VideoCodec.h264.rawValue
            if let preset = r.video.x264Preset { video.x264Preset = preset }
            video.bitRate = r.video.bitRate
            video.maxBitRate = r.video.maxBitRate ?? r.video.bitRate
            return PlannedRendition(name: r.name, size: r.renderSize, video: video)
        }
        self.init(segmentDuration: frameDuration * frames, segmentFrames: frames, renditions: renditions)
    }
}

/// One rendition of a ladder: its folder name, picture size and encoder settings.
public struct PlannedRendition: Codable, Sendable, Hashable {
    public var name: String
    public var size: PixelSize
    /// The export's video settings with this rendition's codec, speed preset and bit rates.
    public var video: VideoExportSettings

    public init(name: String, size: PixelSize, video: VideoExportSettings) {
        self.name = name; self.size = size; self.video = video
    }
}
