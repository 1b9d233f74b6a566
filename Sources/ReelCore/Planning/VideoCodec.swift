/// The video codecs Reel encodes (`export.video.codec`), with what each allows.
///
/// | codec    | encoder  | containers | key settings                    |
/// |----------|----------|------------|---------------------------------|
/// | `h264`   | libx264  | MP4, MOV   | `crf`, `x264Preset`, `bitRate`  |
/// | `hevc`   | libx265  | MP4, MOV   | `crf`, `x265Preset`, `bitRate`  |
/// | `prores` | prores_ks| MOV only   | `proresProfile`                 |
/// | `vp9`    | libvpx-vp9 | WebM only | `crf`, `vp9Speed`, `bitRate`    |
/// | `av1`    | libsvtav1 | MP4, WebM  | `crf`, `svtav1Preset`, `bitRate` |
/// | `png`    | png      | PNG sequence | (lossless: none)              |
public enum VideoCodec: String, Hashable, Sendable, Codable, CaseIterable {
    case h264, hevc, prores, vp9, av1, png

    /// The libavcodec encoder that writes it.
    public var encoderName: String {
        switch self {
        case .h264: "libx264"
        case .hevc: "libx265"
        case .prores: "prores_ks"
        case .vp9: "libvpx-vp9"
        case .av1: "libsvtav1"
        case .png: "png"
        }
    }

    /// The name people know it by, for messages.
    public var displayName: String {
        switch self {
        case .h264: "H.264"
        case .hevc: "HEVC"
        case .prores: "ProRes"
        case .vp9: "VP9"
        case .av1: "AV1"
        case .png: "PNG"
        }
    }

    /// The containers it may be written in. ProRes is a QuickTime codec: MP4 has no sample
    /// entry for it (libavformat refuses it, and players would too).
    /// VP9 goes in WebM only (Reel writes it nowhere else; WebM takes no H.264, HEVC or ProRes);
    /// AV1 in MP4 (its default: the `av01` sample entry) and WebM. HLS ladders are H.264 only.
    public var fileTypes: [FileType] {
        switch self {
        case .h264, .hevc: [.mp4, .mov]
        case .prores: [.mov]
        case .vp9: [.webm]
        case .av1: [.mp4, .webm]
        case .png: [.png]
        }
    }

    /// Whether Reel writes this codec in `fileType`: one of `fileTypes` (the files it goes in),
    /// or an HLS ladder, whose renditions are H.264 so far.
    public func canBeWritten(in fileType: FileType) -> Bool {
        fileTypes.contains(fileType) || (fileType == .hls && self == .h264)
    }

    /// Whether a web browser can decode it in a `<video>` element (the console's preview plays
    /// the chunks as they are, without re-encoding). ProRes and PNG are production formats no
    /// browser decodes; HEVC plays only where the platform has a decoder, which the player finds out.
    public var playsInBrowsers: Bool {
        switch self {
        case .h264, .hevc, .vp9, .av1: true
        case .prores, .png: false
        }
    }

    /// The container when neither `export.fileType` nor an output name decides.
    public var defaultFileType: FileType { fileTypes[0] }

    /// The `export.video` key naming this codec's speed preset (nil: it has none).
    public var presetKey: String? {
        switch self {
        case .h264: "x264Preset"
        case .hevc: "x265Preset"
        case .prores, .png: nil
        case .vp9: "vp9Speed"
        case .av1: "svtav1Preset"
        }
    }

    /// Whether quality is a constant rate factor (`crf`) or a bit rate (`bitRate`); ProRes
    /// has a fixed bit budget per profile instead.
    public var hasRateControl: Bool { self != .prores && self != .png }

    /// The values `crf` may take: x264's and x265's 0…51, libvpx's and SVT-AV1's 0…63.
    public var crfRange: ClosedRange<Int> { self == .vp9 || self == .av1 ? 0...63 : 0...51 }

    /// libvpx's speeds (`cpu-used`): 0…5 in its "good" mode, 6…8 in its "realtime" mode.
    public static let vp9SpeedRange = 0...8

    /// SVT-AV1's presets: 0 (slowest, smallest) … 13 (fastest).
    public static let svtav1PresetRange = 0...13

    /// Speed presets, fastest first. x264 and x265 use the same names.
    public static let speedPresets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]
}

/// Apple ProRes profiles (`export.video.proresProfile`), lightest first. All are intra-only
/// 10-bit; `4444` and `4444xq` (prores_ks profile 5, higher data rate) are 4:4:4 with an alpha
/// channel, the others 4:2:2.
public enum ProResProfile: String, Hashable, Sendable, Codable, CaseIterable {
    case proxy, lt
    case standard = "422"
    case hq
    case fourFourFourFour = "4444"
    case fourFourFourFourXQ = "4444xq"

    /// Whether frames carry an alpha plane (and full-resolution chroma).
    public var hasAlpha: Bool { self == .fourFourFourFour || self == .fourFourFourFourXQ }
}

extension ExportPreset {
    /// The quality step of the preset: its CRF and AAC bit rate come from this row of the
    /// preset table (`hevcHighest` and the ProRes presets are `highest`).
    public var quality: ExportPreset {
        switch self {
        case .highest, .medium, .low: self
        case .hevcHighest, .prores422, .prores4444: .highest
        }
    }

    /// The codec the preset encodes when `export.video.codec` does not say (in MP4 or
    /// QuickTime; in WebM the H.264 presets encode VP9: `ExportOptions.videoCodec`).
    public var codec: VideoCodec {
        switch self {
        case .highest, .medium, .low: .h264
        case .hevcHighest: .hevc
        case .prores422, .prores4444: .prores
        }
    }

    /// The ProRes profile the preset uses when the codec is ProRes and `proresProfile` does not say.
    public var proresProfile: ProResProfile { self == .prores4444 ? .fourFourFourFour : .standard }
}

extension ExportOptions {
    /// The codec this export encodes: `video.codec` when written, else the preset's. Nil when
    /// `video.codec` names a codec Reel does not have (validation reports it).
    ///
    /// Decision: in WebM, which takes no H.264, an H.264 preset (`highest`, `medium`, `low`)
    /// encodes VP9 at the same quality step, as ffmpeg's WebM default is; a preset of another
    /// codec (`hevcHighest`, ProRes) stays that codec, which validation refuses in WebM.
    ///
    /// Decision: a PNG sequence (`fileType` `"png"`) is PNG pictures whatever the preset (the
    /// preset still sets the output size, as `low` does).
    public var videoCodec: VideoCodec? {
        guard let name = video.codec else { return fileType == .png ? .png : webmDefaultsToVP9 ? .vp9 : preset.codec }
        return VideoCodec(rawValue: name)
    }

    /// Whether the codec is VP9 because the container is WebM and nothing else names one.
    private var webmDefaultsToVP9: Bool { video.codec == nil && fileType == .webm && preset.codec == .h264 }

    /// Where the codec came from, for messages: `export.video.codec "prores"` or
    /// `export.preset "prores422"` (the preset, written or the default `highest`, decides when
    /// `export.video.codec` is absent).
    public var videoCodecOrigin: String {
        if let name = video.codec { return "export.video.codec \"\(name)\"" }
        if fileType == .png { return "a PNG sequence" }
        if webmDefaultsToVP9 { return "WebM's default codec" }
        return "export.preset \"\(preset.rawValue)\""
    }
}
