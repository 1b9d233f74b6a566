/// The export settings with the preset of docs/composition.md (Export) and every override resolved.
///
/// | preset  | profile | CRF | AAC bit rate |
/// |---------|---------|-----|--------------|
/// | highest | high    | 18  | 192 000      |
/// | medium  | main    | 23  | 128 000      |
/// | low     | main    | 28  |  96 000      | (and output longest side ≤ 640)
///
/// Decision: "H.264" without a profile in the table is read as Main for medium and low.
///
/// Other codecs (`export.video.codec`, or the presets `hevcHighest`, `prores422`, `prores4444`,
/// which are the `highest` row with another codec): HEVC uses Main profile and the x265 CRFs
/// 22 / 28 / 32 (x265 documents its default 28 as looking like x264's 23, so each row is
/// x264's CRF plus 4 or 5); ProRes uses the preset's profile (`4444` for `prores4444`, else
/// `422`) and has no CRF or speed preset.
public struct ExportSettings: Codable, Sendable, Hashable {
    public var preset: ExportPreset
    public var fileType: FileType
    /// Put the index (moov) first.
    public var optimizeForNetworkUse: Bool
    public var video: VideoExportSettings
    public var audio: AudioExportSettings
    /// The renditions and segment grid of an HLS output (`fileType` `.hls`); nil for every
    /// other container (and in plans made before ladders existed).
    public var ladder: RenditionLadder?
    /// `export.audioOutputs`: one audio stream per entry, in this order, each its own mix of
    /// its tracks; nil: one mix of every audio track (and in plans made before audio outputs existed).
    public var audioOutputs: [AudioOutput]?

    public init(preset: ExportPreset, fileType: FileType, optimizeForNetworkUse: Bool,
                video: VideoExportSettings, audio: AudioExportSettings, ladder: RenditionLadder? = nil,
                audioOutputs: [AudioOutput]? = nil) {
        self.preset = preset; self.fileType = fileType; self.optimizeForNetworkUse = optimizeForNetworkUse
        self.video = video; self.audio = audio; self.ladder = ladder; self.audioOutputs = audioOutputs
    }

    /// x264's CRF for each quality step of the preset table.
    public static let x264CRF: [ExportPreset: Int] = [.highest: 18, .medium: 23, .low: 28]
    /// x265's CRF for each quality step of the preset table.
    public static let x265CRF: [ExportPreset: Int] = [.highest: 22, .medium: 28, .low: 32]
    /// libvpx-vp9's CRF (0…63) for each quality step: 31 is Google's advice for HD at good
    /// quality (`medium`); each step is about the same change in quality as x264's.
    public static let vp9CRF: [ExportPreset: Int] = [.highest: 24, .medium: 31, .low: 37]
    /// libvpx-vp9's default speed (`vp9Speed`): its "good" mode at `cpu-used` 4, a usual choice
    /// for files (0 is far slower; 6…8 switch to the much faster "realtime" mode).
    public static let defaultVP9Speed = 4
    /// SVT-AV1's CRF (0…63) for each quality step, about as far apart as libvpx's.
    public static let av1CRF: [ExportPreset: Int] = [.highest: 24, .medium: 32, .low: 40]
    /// SVT-AV1's default preset (`svtav1Preset`): 8, the fast end of the presets SVT-AV1
    /// suggests for files rather than live encoding (up to 13 is faster, down to 0 far slower).
    public static let defaultSVTAV1Preset = 8

    /// Resolves `options` for a plan whose frame duration is `frameDuration` (> 0). An unknown
    /// `video.codec` (which validation refuses) is kept as written, with H.264's other settings.
    /// `hasPicture` false (a composition with no video track and no overlay) makes the default
    /// container M4A instead of the video codec's.
    /// `transparentBackground` (some instruction's `backgroundColor` has an alpha below 255)
    /// decides VP9's default `alpha`: only a transparent background can leave a frame
    /// transparent (source-over onto an opaque colour is opaque), and libvpx encodes alpha as a
    /// second VP9 stream, so an opaque composition keeps its plain VP9.
    public init(resolving options: ExportOptions, frameDuration: Rational, hasPicture: Bool = true, transparentBackground: Bool = false) {
        let preset = options.preset, quality = preset.quality
        let o = options.video
        let gop = o.gopDuration ?? VideoExportSettings.defaultGOPDuration
        let gopFrames = gop > .zero ? max(1, Int((gop / frameDuration).rounded)) : 1
        let codec = options.videoCodec ?? .h264
        var video = VideoExportSettings(
            codec: o.codec ?? codec.rawValue,
            profile: quality == .highest ? "high" : "main",
            crf: o.crf ?? Self.x264CRF[quality]!,
            x264Preset: o.x264Preset ?? "medium",
            gopDuration: gop,
            gopFrames: gopFrames,
            bitRate: o.bitRate)
        switch codec {
        case .h264:
            break
        case .hevc:
            video.profile = "main"
            video.crf = o.crf ?? Self.x265CRF[quality]!
            video.x264Preset = ""
            video.x265Preset = o.x265Preset ?? "medium"
        case .prores:
            video.profile = o.proresProfile ?? preset.proresProfile.rawValue
            video.crf = 0
            video.x264Preset = ""
            video.bitRate = nil
        case .vp9:
            video.profile = "0"
            video.crf = o.crf ?? Self.vp9CRF[quality]!
            video.x264Preset = ""
            video.vp9Speed = o.vp9Speed ?? Self.defaultVP9Speed
        case .png:
            // Lossless: nothing to set but the alpha.
            video.profile = ""
            video.crf = 0
            video.x264Preset = ""
            video.bitRate = nil
        case .av1:
            video.profile = "main"
            video.crf = o.crf ?? Self.av1CRF[quality]!
            video.x264Preset = ""
            video.svtav1Preset = o.svtav1Preset ?? Self.defaultSVTAV1Preset
        }
        // Alpha is written where the output can hold it, unless `alpha: false` (nil, not false,
        // otherwise: plans and chunk keys of opaque outputs stay as they were).
        // ProRes 4444 writes alpha by default whatever the background (its alpha plane is
        // always there); VP9 in WebM only when the background can be transparent, or when asked.
        let canHoldAlpha = codec == .prores && (ProResProfile(rawValue: video.profile)?.hasAlpha ?? false)
        if canHoldAlpha && (o.alpha ?? true) { video.alpha = true }
        if codec == .vp9 && (o.alpha ?? transparentBackground) { video.alpha = true }
        // A PNG sequence is RGBA unless `alpha: false` (then RGB).
        if codec == .png && (o.alpha ?? true) { video.alpha = true }
        let fileType = options.fileType ?? (!hasPicture ? .m4a : options.isLadder ? .hls : codec.defaultFileType)
        let a = options.audio
        let audioCodec = a.codec ?? AudioCodec.default(for: fileType).rawValue
        let sampleRate = a.sampleRate ?? 48_000, channels = a.channels ?? 2
        let audio = AudioExportSettings(
            codec: audioCodec,
            bitRate: audioCodec == AudioCodec.pcm.rawValue ? sampleRate * channels * 16
                : a.bitRate ?? [.highest: 192_000, .medium: 128_000, .low: 96_000][quality]!,
            sampleRate: sampleRate,
            channels: channels,
            loudness: a.loudness)
        self.init(preset: preset, fileType: fileType, optimizeForNetworkUse: options.optimizeForNetworkUse,
                  video: video, audio: audio)
    }
}

/// Video encoder settings, identical for every chunk of a job (so chunks join by stream copy).
public struct VideoExportSettings: Codable, Sendable, Hashable {
    public static let defaultGOPDuration = Rational(2)
    /// x264's preset names, fastest first (x265's are the same).
    public static let x264Presets = VideoCodec.speedPresets

    /// `"h264"`, `"hevc"`, `"prores"`, `"vp9"` or `"av1"` (`VideoCodec`).
    public var codec: String
    /// The codec's profile: H.264 `"high"` or `"main"`; HEVC `"main"`; ProRes a `ProResProfile`
    /// name (`"proxy"`, `"lt"`, `"422"`, `"hq"`, `"4444"`, `"4444xq"`); VP9 `"0"`, AV1 `"main"` (both 8-bit 4:2:0).
    public var profile: String
    /// x264's, x265's, libvpx's or SVT-AV1's constant rate factor; 0 (unused) for ProRes.
    public var crf: Int
    /// x264's preset for H.264; empty for the other codecs.
    public var x264Preset: String
    /// x265's preset for HEVC; nil for the other codecs (and in plans made before HEVC existed,
    /// which are H.264).
    public var x265Preset: String?
    public var gopDuration: Rational
    /// `max(1, round(gopDuration / frameDuration))`: frames per closed GOP; chunk boundaries are multiples of it.
    /// ProRes is intra-only (every frame a keyframe); its chunks still follow this grid.
    public var gopFrames: Int
    /// When set, a target bit rate (bits/s) instead of constant quality (all but ProRes).
    public var bitRate: Int?
    /// x264's VBV maximum rate (bit/s) of an HLS rendition (buffer: 2 × it); nil elsewhere,
    /// where `bitRate` is also the VBV maximum.
    public var maxBitRate: Int?
    /// libvpx's speed (0…8) for VP9; nil for the other codecs (and in plans made before VP9).
    public var vp9Speed: Int?
    /// SVT-AV1's preset (0…13) for AV1; nil for the other codecs.
    public var svtav1Preset: Int?
    /// True: frames are composited with an alpha plane and the encoder writes it (ProRes
    /// `4444`/`4444xq`, VP9 as `yuva420p` in WebM). Nil (never false) for opaque outputs, and in plans made before alpha.
    public var alpha: Bool?

    public init(codec: String, profile: String, crf: Int, x264Preset: String, gopDuration: Rational, gopFrames: Int, bitRate: Int?,
                x265Preset: String? = nil, vp9Speed: Int? = nil, svtav1Preset: Int? = nil) {
        self.codec = codec; self.profile = profile; self.crf = crf; self.x264Preset = x264Preset
        self.gopDuration = gopDuration; self.gopFrames = gopFrames; self.bitRate = bitRate; self.x265Preset = x265Preset
        self.vp9Speed = vp9Speed; self.svtav1Preset = svtav1Preset
    }

    /// The codec, if Reel knows it (validated compositions always give one it knows).
    public var videoCodec: VideoCodec? { VideoCodec(rawValue: codec) }

    /// Whether frames carry alpha to the output.
    public var writesAlpha: Bool { alpha == true }
}

/// Audio encoder settings (AAC, or PCM for WAV).
public struct AudioExportSettings: Codable, Sendable, Hashable {
    /// The sample rates AAC (MPEG-4 sampling frequency index) defines.
    public static let aacSampleRates = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000]

    /// An `AudioCodec` name: `"aac"`, `"opus"` or `"pcm"`.
    public var codec: String
    /// Bits per second (for PCM, what its 16-bit samples take: informational).
    public var bitRate: Int
    public var sampleRate: Int
    /// 1 or 2.
    public var channels: Int
    /// Normalise the whole programme to this target (measure, one gain, true-peak limiter);
    /// nil: the mix as it is (and in plans made before loudness normalisation existed).
    public var loudness: LoudnessTarget?

    public init(codec: String, bitRate: Int, sampleRate: Int, channels: Int, loudness: LoudnessTarget? = nil) {
        self.codec = codec; self.bitRate = bitRate; self.sampleRate = sampleRate; self.channels = channels
        self.loudness = loudness
    }

    /// The codec, if Reel knows it (validated compositions always give one it knows).
    public var audioCodec: AudioCodec? { AudioCodec(rawValue: codec) }
}
