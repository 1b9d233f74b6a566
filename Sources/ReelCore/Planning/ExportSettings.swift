/// The export settings with the preset of DESIGN §3.3 and every override resolved.
///
/// | preset  | profile | CRF | AAC bit rate |
/// |---------|---------|-----|--------------|
/// | highest | high    | 18  | 192 000      |
/// | medium  | main    | 23  | 128 000      |
/// | low     | main    | 28  |  96 000      | (and output longest side ≤ 640)
///
/// Decision: "H.264" without a profile in the table is read as Main for medium and low.
public struct ExportSettings: Codable, Sendable, Hashable {
    public var preset: ExportPreset
    public var fileType: FileType
    /// Put the index (moov) first.
    public var optimizeForNetworkUse: Bool
    public var video: VideoExportSettings
    public var audio: AudioExportSettings

    public init(preset: ExportPreset, fileType: FileType, optimizeForNetworkUse: Bool,
                video: VideoExportSettings, audio: AudioExportSettings) {
        self.preset = preset; self.fileType = fileType; self.optimizeForNetworkUse = optimizeForNetworkUse
        self.video = video; self.audio = audio
    }

    /// Resolves `options` for a plan whose frame duration is `frameDuration` (> 0).
    public init(resolving options: ExportOptions, frameDuration: Rational) {
        let preset = options.preset
        let o = options.video
        let gop = o.gopDuration ?? VideoExportSettings.defaultGOPDuration
        let gopFrames = gop > .zero ? max(1, Int((gop / frameDuration).rounded)) : 1
        let video = VideoExportSettings(
            codec: o.codec ?? "h264",
            profile: preset == .highest ? "high" : "main",
            crf: o.crf ?? [.highest: 18, .medium: 23, .low: 28][preset]!,
            x264Preset: o.x264Preset ?? "medium",
            gopDuration: gop,
            gopFrames: gopFrames,
            bitRate: o.bitRate)
        let a = options.audio
        let audio = AudioExportSettings(
            codec: a.codec ?? "aac",
            bitRate: a.bitRate ?? [.highest: 192_000, .medium: 128_000, .low: 96_000][preset]!,
            sampleRate: a.sampleRate ?? 48_000,
            channels: a.channels ?? 2)
        self.init(preset: preset, fileType: options.fileType ?? .mp4, optimizeForNetworkUse: options.optimizeForNetworkUse,
                  video: video, audio: audio)
    }
}

/// H.264 encoder settings, identical for every chunk of a job (so chunks join by stream copy).
public struct VideoExportSettings: Codable, Sendable, Hashable {
    public static let defaultGOPDuration = Rational(2)
    /// x264's preset names, fastest first.
    public static let x264Presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]

    /// `"h264"`.
    public var codec: String
    /// `"high"` or `"main"`.
    public var profile: String
    public var crf: Int
    public var x264Preset: String
    public var gopDuration: Rational
    /// `max(1, round(gopDuration / frameDuration))`: frames per closed GOP; chunk boundaries are multiples of it.
    public var gopFrames: Int
    /// When set, a target bit rate (bits/s) instead of constant quality.
    public var bitRate: Int?

    public init(codec: String, profile: String, crf: Int, x264Preset: String, gopDuration: Rational, gopFrames: Int, bitRate: Int?) {
        self.codec = codec; self.profile = profile; self.crf = crf; self.x264Preset = x264Preset
        self.gopDuration = gopDuration; self.gopFrames = gopFrames; self.bitRate = bitRate
    }
}

/// AAC encoder settings.
public struct AudioExportSettings: Codable, Sendable, Hashable {
    /// The sample rates AAC (MPEG-4 sampling frequency index) defines.
    public static let aacSampleRates = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000]

    /// `"aac"`.
    public var codec: String
    /// Bits per second.
    public var bitRate: Int
    public var sampleRate: Int
    /// 1 or 2.
    public var channels: Int

    public init(codec: String, bitRate: Int, sampleRate: Int, channels: Int) {
        self.codec = codec; self.bitRate = bitRate; self.sampleRate = sampleRate; self.channels = channels
    }
}
