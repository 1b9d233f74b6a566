/// The audio codecs Reel encodes (`export.audio.codec`), with the containers each goes in.
///
/// | codec | encoder     | containers       | bit rate |
/// |-------|-------------|------------------|----------|
/// | `aac`  | FFmpeg AAC  | MP4, MOV, M4A    | yes      |
/// | `opus` | libopus     | WebM             | yes      |
/// | `pcm`  | pcm_s16le   | WAV              | no (16-bit samples, uncompressed) |
///
/// Left out, the codec follows the container (`default(for:)`): Opus in WebM (which takes no
/// AAC), PCM in WAV, AAC elsewhere.
public enum AudioCodec: String, Hashable, Sendable, Codable, CaseIterable {
    case aac
    /// Opus through libopus (WebM's audio codec with Vorbis; Opus is the better of the two).
    case opus
    /// Uncompressed signed 16-bit little-endian samples (`s16le`), as WAV files usually hold.
    case pcm

    /// The libavcodec encoder that writes it.
    public var encoderName: String {
        switch self {
        case .aac: "aac"
        case .opus: "libopus"
        case .pcm: "pcm_s16le"
        }
    }

    /// The name people know it by, for messages.
    public var displayName: String {
        switch self {
        case .aac: "AAC"
        case .opus: "Opus"
        case .pcm: "PCM"
        }
    }

    /// The containers it may be written in.
    public var fileTypes: [FileType] {
        switch self {
        case .aac: [.mp4, .mov, .m4a]
        case .opus: [.webm]
        case .pcm: [.wav]
        }
    }

    /// Whether Reel writes this codec in `fileType`: one of `fileTypes`, or AAC in an HLS ladder.
    public func canBeWritten(in fileType: FileType) -> Bool {
        fileTypes.contains(fileType) || (fileType == .hls && self == .aac)
    }

    /// The codec a container gets when `export.audio.codec` does not say.
    public static func `default`(for fileType: FileType?) -> AudioCodec {
        switch fileType {
        case .wav: .pcm
        case .webm: .opus
        default: .aac
        }
    }

    /// Whether `export.audio.bitRate` means anything (PCM's rate is its sample format's).
    public var hasBitRate: Bool { self != .pcm }

    /// The sample rates it may be encoded at: AAC's (the MPEG-4 sampling frequency indices),
    /// for PCM too; Opus codes only 8, 12, 16, 24 and 48 kHz.
    public var sampleRates: [Int] { self == .opus ? [8000, 12000, 16000, 24000, 48000] : AudioExportSettings.aacSampleRates }
}

extension ExportOptions {
    /// The audio codec this export encodes: `audio.codec` when written, else the container's
    /// (`fileType`, which may still be nil: then AAC). Nil when `audio.codec` names a codec
    /// Reel does not have (validation reports it).
    public var audioCodec: AudioCodec? {
        guard let name = audio.codec else { return .default(for: fileType) }
        return AudioCodec(rawValue: name)
    }
}
