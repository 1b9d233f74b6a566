import ReelCore

/// Everything that decides the video bitstream (H.264, HEVC, ProRes, VP9 or AV1). Two encoders with
/// equal settings given the same frames produce byte-identical extradata and packets, which is
/// what lets independently rendered chunks be concatenated without re-encoding.
public struct VideoEncoderSettings: Sendable, Hashable, Codable {
    /// Which encoder: libx264, libx265, prores_ks, libvpx-vp9 or libsvtav1.
    public var codec: VideoCodec = .h264
    /// Frame size in pixels; must be even (yuv420p).
    public var width: Int
    public var height: Int
    /// Duration of one frame; also the encoder's time base (pts = frame index).
    public var frameDuration: Rational
    /// Constant rate factor (ignored when `bitRate` is set).
    public var crf: Int
    /// x264 preset name (`medium`, `veryfast`, …); H.264 only.
    public var x264Preset: String
    /// x265 preset name (the same names); HEVC only.
    public var x265Preset: String = "medium"
    /// libvpx's speed 0…8 (`cpu-used`; 6…8 in its realtime mode); VP9 only.
    public var vp9Speed: Int = 4
    /// SVT-AV1's preset 0…13; AV1 only.
    public var svtav1Preset: Int = 8
    /// H.264 profile (`high`, `main`, `baseline`); HEVC `main`; ProRes a `ProResProfile` name.
    public var profile: String
    /// GOP length in frames: every `gopFrames`-th frame is an IDR, GOPs are closed. ProRes is
    /// intra-only: every frame is a keyframe.
    public var gopFrames: Int
    /// Encoder threads. Fixed per job: x264's and x265's output depend on it (x265: the
    /// size of its thread pool).
    public var threads: Int
    /// Average bit rate in bit/s: when set, ABR replaces CRF — for H.264 with VBV (maxrate =
    /// bitRate, bufsize = 2·bitRate); for HEVC without (x265's row-level VBV depends on thread
    /// timing). Unused by ProRes.
    public var bitRate: Int?
    /// H.264's VBV maximum rate in bit/s when it is not `bitRate` (an HLS rendition's
    /// `maxBitRate`); the buffer is twice the maximum rate. nil: `bitRate`.
    public var maxBitRate: Int?
    /// PNG: RGBA rather than RGB. VP9: encode `yuva420p`, the frame's alpha plane as libvpx's second stream, which
    /// travels as Matroska BlockAdditional side data on each packet. ProRes's alpha follows
    /// its profile instead.
    public var alpha = false
    /// The colour the frames are in (their Y'CbCr is `colour.matrix`'s), which the stream is
    /// tagged with: the VUI of H.264 and HEVC, VP9's and AV1's colour config, ProRes's frame
    /// header, and through the codec parameters the container's `colr` box or `Colour` element.
    /// PNG frames are converted to R'G'B' with its matrix.
    public var colour: ColourSpace = .bt709
    /// An HDR output's static metadata (HEVC only, with `colour` PQ or HLG): the stream is then
    /// HEVC Main10 (`yuv420p10le`) from 10-bit frames, with the mastering display and light
    /// levels in SEI. nil for SDR.
    public var hdr: HDRMetadata?

    /// Whether frames are encoded at 10 bits from a 16-bit render (`DeepYUVImage`).
    public var isHighDynamicRange: Bool { codec == .hevc && colour.isHighDynamicRange }

    public init(width: Int, height: Int, frameDuration: Rational, crf: Int = 18, x264Preset: String = "medium",
                profile: String = "high", gopFrames: Int, threads: Int = 2, bitRate: Int? = nil) {
        self.width = width; self.height = height; self.frameDuration = frameDuration; self.crf = crf
        self.x264Preset = x264Preset; self.profile = profile; self.gopFrames = gopFrames
        self.threads = threads; self.bitRate = bitRate
    }

    /// HEVC through libx265 (Main profile, 8-bit 4:2:0).
    public static func hevc(width: Int, height: Int, frameDuration: Rational, crf: Int = 22, preset: String = "medium",
                            gopFrames: Int, threads: Int = 2, bitRate: Int? = nil) -> VideoEncoderSettings {
        var s = VideoEncoderSettings(width: width, height: height, frameDuration: frameDuration, crf: crf, x264Preset: "",
                                     profile: "main", gopFrames: gopFrames, threads: threads, bitRate: bitRate)
        s.codec = .hevc
        s.x265Preset = preset
        return s
    }

    /// VP9 through libvpx-vp9 (profile 0: 8-bit 4:2:0), constant quality `crf` (0…63) unless
    /// `bitRate` is given.
    public static func vp9(width: Int, height: Int, frameDuration: Rational, crf: Int = 31, speed: Int = 4,
                           gopFrames: Int, threads: Int = 2, bitRate: Int? = nil) -> VideoEncoderSettings {
        var s = VideoEncoderSettings(width: width, height: height, frameDuration: frameDuration, crf: crf, x264Preset: "",
                                     profile: "0", gopFrames: gopFrames, threads: threads, bitRate: bitRate)
        s.codec = .vp9
        s.vp9Speed = speed
        return s
    }

    /// AV1 through SVT-AV1 (main profile: 8-bit 4:2:0), constant quality `crf` (0…63) unless
    /// `bitRate` is given.
    public static func av1(width: Int, height: Int, frameDuration: Rational, crf: Int = 32, preset: Int = 8,
                           gopFrames: Int, threads: Int = 2, bitRate: Int? = nil) -> VideoEncoderSettings {
        var s = VideoEncoderSettings(width: width, height: height, frameDuration: frameDuration, crf: crf, x264Preset: "",
                                     profile: "main", gopFrames: gopFrames, threads: threads, bitRate: bitRate)
        s.codec = .av1
        s.svtav1Preset = preset
        return s
    }

    /// Apple ProRes through prores_ks, intra-only, in `profile`.
    public static func prores(width: Int, height: Int, frameDuration: Rational, profile: ProResProfile,
                              gopFrames: Int, threads: Int = 2) -> VideoEncoderSettings {
        var s = VideoEncoderSettings(width: width, height: height, frameDuration: frameDuration, crf: 0, x264Preset: "",
                                     profile: profile.rawValue, gopFrames: gopFrames, threads: threads)
        s.codec = .prores
        return s
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

    /// The `x265-params` string: the same stitchable structure as x264's, fixed threading.
    ///
    /// - `keyint`/`min-keyint` = `gopFrames`, `scenecut=0`, `open-gop=0`: closed GOPs of
    ///   exactly `gopFrames`, each starting with an IDR, so every chunk decodes on its own.
    /// - `pools=threads`, `frame-threads=1`: x265's output depends on its pool size (with 4 or
    ///   more workers its lookahead batches frame-cost estimates differently) and on the
    ///   number of frame threads (frame-parallel rate control reads the state of frames still
    ///   being coded: two runs differed), so both are fixed, the pool to the job's thread
    ///   count. Wavefront (WPP, x265's default) stays on: measured, its output does not depend
    ///   on the threads running it.
    /// - `info=0`: no version/options SEI, which would carry the machine's `cpuid`.
    /// - `repeat-headers=0`, `annexb=1`: VPS/SPS/PPS only in the global header (the `hvcC`
    ///   box), as `hvc1` requires.
    /// - `log-level=error`: x265 otherwise prints its banner and settings to stderr.
    ///
    /// HDR (`isHighDynamicRange`): the depth is the pixel format's — libavcodec opens x265's
    /// 10-bit library for `yuv420p10le`, so its output depth is 10 (x265's library has no
    /// `output-depth` parameter; that is its command line's). The colour is given as x265 names
    /// it (`colorprim=bt2020`, `transfer=smpte2084` or `arib-std-b67`, `colormatrix=bt2020nc`,
    /// `range=limited`; libavcodec sets the same VUI from the context, these make the
    /// bitstream's intent explicit), and: for PQ the mastering display (`master-display`) and
    /// content light level (`max-cll`) SEI (`hdr10=1`), which x265 sends with the parameter
    /// sets, so for HDR10 it turns `repeat-headers` back on: every IDR carries VPS/SPS/PPS and
    /// the SEI in-band as well as in the global header; for HLG the alternative transfer
    /// characteristics SEI with 18 (`atc-sei=18`, which x265 emits with picture timing:
    /// `pic-struct=0`, progressive frames).
    var x265Params: String {
        var params = ["keyint=\(gopFrames)", "min-keyint=\(gopFrames)", "scenecut=0", "open-gop=0", "info=0",
                      "repeat-headers=0", "annexb=1", "pools=\(threads)", "frame-threads=1", "wpp=1", "log-level=error"]
        if isHighDynamicRange {
            params += ["colorprim=\(colour.primaries.name)", "transfer=\(colour.transfer.name)",
                       "colormatrix=\(colour.matrix.name)", "range=limited"]
            if colour.transfer == .pq {
                let metadata = hdr ?? HDRMetadata()
                if let display = metadata.masteringDisplay.x265String { params.append("master-display=\(display)") }
                params += ["max-cll=\(metadata.contentLightLevel.maxCLL),\(metadata.contentLightLevel.maxFALL)", "hdr10=1"]
            } else {
                params += ["atc-sei=\(colour.transfer.rawValue)", "pic-struct=0"]
            }
        }
        return params.joined(separator: ":")
    }

    /// libvpx-vp9's options: the same stitchable structure, fixed threading.
    ///
    /// - `deadline` `good` with `cpu-used` 0…5, `realtime` with 6…8 (libvpx's own split: its
    ///   fastest speeds exist in realtime mode only, which also turns off the lookahead).
    /// - GOPs: `gop_size` = `keyint_min` = `gopFrames` (fixed keyframe interval, no automatic
    ///   keyframes), and the first frame of a chunk is forced to a keyframe. A VP9 keyframe
    ///   resets every reference, so each GOP is closed; hidden alt-ref frames are packed into
    ///   superframes with the next shown frame, one packet per frame.
    /// - `row-mt=1` with `threads` = the job's encoder threads; tile columns as libvpx chooses for
    ///   the width. Both fixed per job, so the output is too.
    /// - Constant quality is `crf` with a zero bit rate (libvpx's "Q" mode); `bitRate` makes
    ///   it VBR around that rate instead.
    var vp9Options: [(String, String)] {
        [("deadline", vp9Speed >= 6 ? "realtime" : "good"), ("cpu-used", String(vp9Speed)), ("row-mt", "1")]
    }

    /// The `svtav1-params` string: SVT-AV1's own names for the stitchable structure.
    ///
    /// - `keyint` = `gopFrames` (libavcodec's `gop_size` sets the same), `irefresh-type=2`:
    ///   every keyframe a real (closed-GOP) key frame, not a forward key frame that later frames
    ///   may see past; `scd=0`: no keyframes at scene changes. A chunk's first frame is always
    ///   a key frame: each chunk has an encoder of its own.
    /// - `lp` = the job's encoder threads. Measured, SVT-AV1's output does not depend on it
    ///   (nor on timing), but it is fixed per job like every other encoder's.
    var svtav1Params: String {
        ["keyint=\(gopFrames)", "irefresh-type=2", "scd=0", "lp=\(threads)"].joined(separator: ":")
    }
}
