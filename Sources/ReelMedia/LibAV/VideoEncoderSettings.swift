import ReelCore

/// Everything that decides the H.264 bitstream. Two encoders with equal settings given the
/// same frames produce byte-identical extradata and packets, which is what lets independently
/// rendered chunks be concatenated without re-encoding.
public struct VideoEncoderSettings: Sendable, Hashable, Codable {
    /// Frame size in pixels; must be even (yuv420p).
    public var width: Int
    public var height: Int
    /// Duration of one frame; also the encoder's time base (pts = frame index).
    public var frameDuration: Rational
    /// Constant rate factor (ignored when `bitRate` is set).
    public var crf: Int
    /// x264 preset name (`medium`, `veryfast`, …).
    public var x264Preset: String
    /// H.264 profile (`high`, `main`, `baseline`).
    public var profile: String
    /// GOP length in frames: every `gopFrames`-th frame is an IDR, GOPs are closed.
    public var gopFrames: Int
    /// Encoder threads. Fixed per job: x264's output depends on it.
    public var threads: Int
    /// Average bit rate in bit/s: when set, ABR with VBV (maxrate = bitRate, bufsize =
    /// 2·bitRate) replaces CRF.
    public var bitRate: Int?

    public init(width: Int, height: Int, frameDuration: Rational, crf: Int = 18, x264Preset: String = "medium",
                profile: String = "high", gopFrames: Int, threads: Int = 2, bitRate: Int? = nil) {
        self.width = width; self.height = height; self.frameDuration = frameDuration; self.crf = crf
        self.x264Preset = x264Preset; self.profile = profile; self.gopFrames = gopFrames
        self.threads = threads; self.bitRate = bitRate
    }

    /// The `x264-params` string: fixed GOP structure, no scene cuts, chunk-stitchable streams.
    ///
    /// Two settings exist only for byte-identical re-renders (guarantee 5), both found by
    /// encoding the same frames repeatedly in one process:
    /// - `sync-lookahead=0` turns off x264's lookahead thread, whose analysis window depends
    ///   on thread timing (the CLI under load gave different IDR sizes with it on).
    /// - `mbtree=0`: with the macroblock tree on and B-frames, libx264 0.164 reads
    ///   uninitialised memory for some content (a moving gradient with a chroma fade):
    ///   the output changed with `MALLOC_PERTURB_`, in the ffmpeg CLI too, so a long-lived
    ///   agent process would not reproduce its own chunks. Costs a little compression.
    var x264Params: String {
        ["keyint=\(gopFrames)", "min-keyint=\(gopFrames)", "scenecut=0", "open-gop=0", "stitchable=1",
         "repeat-headers=0", "sliced-threads=0", "sync-lookahead=0", "non-deterministic=0", "mbtree=0",
         "threads=\(threads)"].joined(separator: ":")
    }
}
