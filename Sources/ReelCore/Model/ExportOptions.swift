/// The presets of docs/composition.md (Export), named after `AVAssetExportSession`'s: `highest`, `medium` and
/// `low` are H.264 (`AVAssetExportPresetHighestQuality`, `…MediumQuality`, `…LowQuality`),
/// `hevcHighest` is `AVAssetExportPresetHEVCHighestQuality`, and `prores422` / `prores4444` are
/// `AVAssetExportPresetAppleProRes422LPCM` / `…4444LPCM` (with AAC sound: Reel writes PCM only in WAV).
/// `quality` and `codec` (VideoCodec.swift) give each one's row of the preset table and codec.
public enum ExportPreset: String, Hashable, Sendable, Codable, CaseIterable {
    case highest, medium, low
    case hevcHighest, prores422, prores4444
}

/// Output container. `m4a` and `wav` hold sound only: a render to them writes no picture.
/// `webm` holds VP9 or AV1 with Opus. `hls` is a folder: an HLS master playlist over a ladder
/// of renditions (`ExportOptions.renditions`) in CMAF segments, with a DASH manifest beside it.
/// `png` is a PNG sequence: one 8-bit RGBA (or RGB) PNG file per frame, numbered from 1
/// (`FrameSequenceName`), with no sound.
public enum FileType: String, Hashable, Sendable, Codable, CaseIterable {
    case mp4, mov, m4a, wav, webm, hls, png

    /// Whether the container holds sound only (AAC in M4A, PCM in WAV): no video is rendered.
    public var isAudioOnly: Bool { self == .m4a || self == .wav }

    /// The name people know it by, for messages.
    public var displayName: String {
        switch self {
        case .mp4: "MP4"
        case .mov: "QuickTime"
        case .m4a: "M4A"
        case .wav: "WAV"
        case .webm: "WebM"
        case .hls: "HLS"
        case .png: "PNG sequence"
        }
    }
}

/// The `export` object as written: a preset plus single-setting overrides.
///
/// Decision: an absent `export` (or absent keys) means preset `highest`, `mp4`,
/// `optimizeForNetworkUse` false (AVAssetExportSession's default).
public struct ExportOptions: Hashable, Sendable, Codable {
    public var preset: ExportPreset
    /// nil when the file does not say: the output name's extension decides (`OutputContainer`), else
    /// the codec's default container (MP4; QuickTime for ProRes), or M4A for a composition
    /// without a picture (`RenderPlan.hasPicture`).
    public var fileType: FileType?
    public var optimizeForNetworkUse: Bool
    public var video: VideoExportOverrides
    public var audio: AudioExportOverrides
    /// `export.renditions`, the HLS ladder as written (nil: the default ladder,
    /// `RenditionLadder.defaultRungs`). HLS only.
    public var renditions: [RenditionOptions]?
    /// `export.segmentDuration`, seconds per HLS segment (nil: `RenditionLadder.defaultSegmentDuration`). HLS only.
    public var segmentDuration: Rational?
    /// `export.audioOutputs` as written: one audio stream per entry, each its own mix (nil: one
    /// mix of every audio track).
    public var audioOutputs: [AudioOutputOptions]?

    public init(preset: ExportPreset = .highest, fileType: FileType? = nil, optimizeForNetworkUse: Bool = false,
                video: VideoExportOverrides = .init(), audio: AudioExportOverrides = .init(),
                renditions: [RenditionOptions]? = nil, segmentDuration: Rational? = nil, audioOutputs: [AudioOutputOptions]? = nil) {
        self.preset = preset; self.fileType = fileType; self.optimizeForNetworkUse = optimizeForNetworkUse
        self.video = video; self.audio = audio
        self.renditions = renditions; self.segmentDuration = segmentDuration
        self.audioOutputs = audioOutputs
    }
}

extension ExportOptions {
    /// Whether the export writes an HLS ladder: `fileType` `"hls"`, or no `fileType` and
    /// `renditions` or `segmentDuration` written (keys that only a ladder has).
    public var isLadder: Bool {
        fileType == .hls || (fileType == nil && (renditions != nil || segmentDuration != nil))
    }
}

/// One entry of `export.audioOutputs` as written: a BCP 47 language, an optional title, and the
/// ids of the audio tracks mixed into it.
public struct AudioOutputOptions: Hashable, Sendable, Codable {
    public var language: String
    public var title: String?
    public var tracks: [Int]

    public init(language: String, title: String? = nil, tracks: [Int]) {
        self.language = language; self.title = title; self.tracks = tracks
    }
}

/// One rung of `export.renditions` as written: a name (its folder), its picture size, and its
/// video settings, which replace `export.video`'s for this rendition.
public struct RenditionOptions: Hashable, Sendable, Codable {
    public var name: String
    public var renderSize: PixelSize
    public var video: RenditionVideoOptions

    public init(name: String, renderSize: PixelSize, video: RenditionVideoOptions) {
        self.name = name; self.renderSize = renderSize; self.video = video
    }
}

/// `export.renditions[i].video`: the rendition's codec, x264 speed preset and bit rates.
public struct RenditionVideoOptions: Hashable, Sendable, Codable {
    /// Only `"h264"` so far (nil: H.264).
    public var codec: String?
    /// nil: `export.video.x264Preset`, else `medium`.
    public var x264Preset: String?
    /// Average target, bit/s (required).
    public var bitRate: Int?
    /// x264's VBV maximum rate, bit/s (nil: `bitRate`); must be ≥ `bitRate`.
    public var maxBitRate: Int?

    public init(codec: String? = nil, x264Preset: String? = nil, bitRate: Int? = nil, maxBitRate: Int? = nil) {
        self.codec = codec; self.x264Preset = x264Preset; self.bitRate = bitRate; self.maxBitRate = maxBitRate
    }
}

/// `export.video`: each non-nil field replaces the preset's value.
public struct VideoExportOverrides: Hashable, Sendable, Codable {
    /// `"h264"`, `"hevc"`, `"prores"`, `"vp9"`, `"av1"` or `"png"` (`VideoCodec`); absent: the preset's codec (VP9 in WebM, PNG in a PNG sequence).
    public var codec: String?
    /// x264 or x265 constant rate factor 0…51 (not for ProRes).
    public var crf: Int?
    /// One of x264's preset names (`ultrafast` … `placebo`); codec `h264` only.
    public var x264Preset: String?
    /// One of x265's preset names (the same names as x264's); codec `hevc` only.
    public var x265Preset: String?
    /// A `ProResProfile` name (`proxy`, `lt`, `422`, `hq`, `4444`, `4444xq`); codec `prores` only.
    public var proresProfile: String?
    /// libvpx's speed, 0 (slowest, best) … 8 (`VideoCodec.vp9SpeedRange`); codec `vp9` only.
    public var vp9Speed: Int?
    /// SVT-AV1's preset, 0 (slowest, best) … 13 (`VideoCodec.svtav1PresetRange`); codec `av1` only.
    public var svtav1Preset: Int?
    /// Seconds per GOP (> 0); chunks are whole GOPs.
    public var gopDuration: Rational?
    /// Bits per second; when set the encoder targets this rate instead of CRF quality (not for ProRes).
    public var bitRate: Int?
    /// Write the composited alpha (`ExportSettings`: default true for outputs that can hold it).
    public var alpha: Bool?

    public init(codec: String? = nil, crf: Int? = nil, x264Preset: String? = nil, gopDuration: Rational? = nil, bitRate: Int? = nil,
                x265Preset: String? = nil, proresProfile: String? = nil, vp9Speed: Int? = nil, svtav1Preset: Int? = nil, alpha: Bool? = nil) {
        self.codec = codec; self.crf = crf; self.x264Preset = x264Preset; self.gopDuration = gopDuration; self.bitRate = bitRate
        self.x265Preset = x265Preset; self.proresProfile = proresProfile; self.vp9Speed = vp9Speed; self.svtav1Preset = svtav1Preset
        self.alpha = alpha
    }
}

/// `export.audio`: each non-nil field replaces the preset's value.
public struct AudioExportOverrides: Hashable, Sendable, Codable {
    /// An `AudioCodec` name (`"aac"`, `"opus"`, `"pcm"`); absent: the container's (`AudioCodec.default(for:)`).
    public var codec: String?
    public var bitRate: Int?
    /// One of the codec's sample rates (`AudioCodec.sampleRates`).
    public var sampleRate: Int?
    /// 1 or 2.
    public var channels: Int?
    /// Loudness normalisation of the whole programme; nil: the mix as it is.
    public var loudness: LoudnessTarget?

    public init(codec: String? = nil, bitRate: Int? = nil, sampleRate: Int? = nil, channels: Int? = nil, loudness: LoudnessTarget? = nil) {
        self.codec = codec; self.bitRate = bitRate; self.sampleRate = sampleRate; self.channels = channels
        self.loudness = loudness
    }
}
