import CFFmpeg
import Glibc
import ReelCore
import ReelKernels

/// The video encoder of a chunk: H.264 through libx264, HEVC through libx265, ProRes
/// through prores_ks, VP9 through libvpx-vp9 or AV1 through SVT-AV1, with settings fixed for
/// stitchable chunks (see `VideoEncoderSettings`).
///
/// H.264 and HEVC: closed GOPs of exactly `gopFrames`, no scene-cut keyframes, global headers
/// (parameter sets in extradata, none repeated in the stream), 8-bit 4:2:0 as composited.
/// ProRes: intra-only (every frame a keyframe), 10-bit 4:2:2 (`yuv422p10le`), or 4:4:4 with
/// alpha (`yuva444p10le`) for profiles 4444 and 4444xq, converted from the composited 4:2:0
/// frame by swscale (bit-exact mode); the alpha is the frame's alpha plane, or opaque when the
/// frame has none (`"alpha": false`).
/// PNG (a PNG sequence's frames): 8-bit RGBA with the frame's straight alpha (`settings.alpha`),
/// else RGB, converted by swscale from the composited limited-range 4:2:0 frame with its matrix
/// (`settings.colour`).
/// VP9 with alpha (`settings.alpha`): `yuva420p`, the frame's alpha plane as it is; libvpx
/// encodes it as a second stream, put on each packet as Matroska BlockAdditional side data.
/// pts = frame index in time base `frameDuration`. The first frame given to an encoder is
/// always an IDR.
///
/// Not thread-safe: used from one thread at a time (`@unchecked Sendable` so it can move).
public final class VideoEncoder: @unchecked Sendable {
    public let settings: VideoEncoderSettings
    /// Packet time base (= `settings.frameDuration`).
    public var timeBase: Rational { settings.frameDuration }
    /// Codec parameters for the muxer (valid after init: extradata is produced at open).
    public let codecParameters: CodecParameters

    private let context: UnsafeMutablePointer<AVCodecContext>
    private let frame = Frame()
    private let packet = Packet()
    private var sawFirstFrame = false
    /// The pixel format the encoder takes; anything but yuv420p is converted by `converter`.
    private let pixelFormat: AVPixelFormat
    private let converter = PixelConverter()
    private var codecName: String { settings.codec.displayName }

    public init(settings: VideoEncoderSettings) throws {
        self.settings = settings
        let what = "opening the \(settings.codec.displayName) encoder"
        guard settings.width > 0, settings.height > 0, settings.width % 2 == 0, settings.height % 2 == 0,
              settings.frameDuration > .zero, settings.gopFrames > 0, settings.threads > 0 else {
            throw MediaError(code: .invalidArgument, message: "invalid settings \(settings)", context: what)
        }
        let proresProfile = ProResProfile(rawValue: settings.profile)
        if settings.codec == .prores, proresProfile == nil {
            throw MediaError(code: .invalidArgument, message: "unknown ProRes profile \"\(settings.profile)\"", context: what)
        }
        guard let codec = avcodec_find_encoder_by_name(settings.codec.encoderName) else {
            throw MediaError(code: .noCodec, message: "\(settings.codec.encoderName) is not available in this FFmpeg", context: what)
        }
        guard let ctx = avcodec_alloc_context3(codec) else { fatalError("avcodec_alloc_context3: out of memory") }
        context = ctx
        switch settings.codec {
        case .vp9 where settings.alpha: pixelFormat = AV_PIX_FMT_YUVA420P
        case .hevc where settings.isHighDynamicRange: pixelFormat = AV_PIX_FMT_YUV420P10LE
        case .h264, .hevc, .vp9, .av1: pixelFormat = AV_PIX_FMT_YUV420P
        case .png: pixelFormat = settings.alpha ? AV_PIX_FMT_RGBA : AV_PIX_FMT_RGB24
        case .prores: pixelFormat = proresProfile!.hasAlpha ? AV_PIX_FMT_YUVA444P10LE : AV_PIX_FMT_YUV422P10LE
        }
        ctx.pointee.width = Int32(settings.width)
        ctx.pointee.height = Int32(settings.height)
        ctx.pointee.pix_fmt = pixelFormat
        ctx.pointee.time_base = settings.frameDuration.avRational
        ctx.pointee.framerate = (Rational.one / settings.frameDuration).avRational
        ctx.pointee.gop_size = Int32(settings.gopFrames)
        ctx.pointee.keyint_min = Int32(settings.gopFrames)
        ctx.pointee.thread_count = Int32(settings.threads)
        ctx.pointee.flags |= reel_codec_flag_global_header() | reel_codec_flag_closed_gop()
        if settings.codec != .png {
            // Set before avcodec_open2, which is when libx264, libx265, libvpx, SVT-AV1 and
            // prores_ks read them into the bitstream; `CodecParameters` copies them for the muxer.
            let colour = settings.colour
            ctx.pointee.color_range = colour.range == .full ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG
            ctx.pointee.colorspace = AVColorSpace(rawValue: UInt32(colour.matrix.rawValue))
            ctx.pointee.color_primaries = AVColorPrimaries(rawValue: UInt32(colour.primaries.rawValue))
            ctx.pointee.color_trc = AVColorTransferCharacteristic(rawValue: UInt32(colour.transfer.rawValue))
        }
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        switch settings.codec {
        case .h264:
            av_dict_set(&options, "preset", settings.x264Preset, 0)
            av_dict_set(&options, "profile", settings.profile, 0)
            av_dict_set(&options, "x264-params", settings.x264Params, 0)
        case .hevc:
            // x265 runs its own thread pool (`pools=` in x265-params); libavcodec's
            // thread_count is not used by it.
            av_dict_set(&options, "preset", settings.x265Preset, 0)
            av_dict_set(&options, "profile", settings.isHighDynamicRange ? "main10" : settings.profile, 0)
            av_dict_set(&options, "x265-params", settings.x265Params, 0)
        case .prores:
            av_dict_set(&options, "profile", proresProfile!.encoderProfileName, 0)
        case .png:
            // Paeth prediction on every row: about as small as "mixed", far faster.
            av_dict_set(&options, "pred", "paeth", 0)
        case .vp9:
            for (key, value) in settings.vp9Options { av_dict_set(&options, key, value, 0) }
            if let bitRate = settings.bitRate {
                ctx.pointee.bit_rate = Int64(bitRate)
            } else {
                // libvpx's constant quality ("Q" mode): a CRF and no bit rate.
                av_dict_set(&options, "crf", String(settings.crf), 0)
                ctx.pointee.bit_rate = 0
            }
        case .av1:
            SVTAV1Logging.errorsOnly()
            av_dict_set(&options, "preset", String(settings.svtav1Preset), 0)
            av_dict_set(&options, "svtav1-params", settings.svtav1Params, 0)
            if let bitRate = settings.bitRate {
                ctx.pointee.bit_rate = Int64(bitRate)
            } else {
                av_dict_set(&options, "crf", String(settings.crf), 0)
            }
        }
        if settings.codec == .h264 || settings.codec == .hevc {
            // An I frame we ask for is an IDR (first frame of every chunk).
            av_dict_set(&options, "forced-idr", "1", 0)
            if let bitRate = settings.bitRate {
                ctx.pointee.bit_rate = Int64(bitRate)
                // x264: ABR with VBV. x265: ABR without VBV — its VBV re-plans row QPs from
                // the rows the wavefront threads have finished so far, so the same chunk
                // came out two ways in five renders (pools=4, two chunks at once); without
                // VBV, ten renders gave one result.
                if settings.codec == .h264 {
                    let maximum = settings.maxBitRate ?? bitRate
                    ctx.pointee.rc_max_rate = Int64(maximum)
                    ctx.pointee.rc_buffer_size = Int32(clamping: 2 * maximum)
                }
            } else {
                av_dict_set(&options, "crf", String(settings.crf), 0)
            }
        }
        // Until codecParameters is set, self is not fully initialised and deinit will not
        // run: free the context by hand on failure.
        func fail(_ error: MediaError) -> MediaError {
            var c: UnsafeMutablePointer<AVCodecContext>? = ctx
            avcodec_free_context(&c)
            return error
        }
        let status = avcodec_open2(ctx, codec, &options)
        if status < 0 { throw fail(MediaError.libav(status, what)) }
        // avcodec_open2 consumes the options it knows; a leftover one is a typo in Reel.
        if let unused = av_dict_get(options, "", nil, AV_DICT_IGNORE_SUFFIX) {
            throw fail(MediaError(code: .invalidArgument, message: "unknown option \(String(cString: unused.pointee.key))", context: what))
        }
        do {
            codecParameters = try CodecParameters(encoder: ctx, timeBase: settings.frameDuration, frameDuration: settings.frameDuration)
        } catch let error as MediaError {
            throw fail(error)
        }
    }

    deinit { var c: UnsafeMutablePointer<AVCodecContext>? = context; avcodec_free_context(&c) }

    /// The global header: SPS and PPS as libx264 emits them, or VPS/SPS/PPS as libx265 does
    /// (Annex B start codes; the MP4/MOV muxer converts it to an avcC or hvcC box); packets are
    /// Annex B too. Empty for ProRes, whose frames carry their own headers.
    public var extradata: [UInt8] { codecParameters.extradata }

    /// Encodes one frame shown at `frameIndex · frameDuration`; returns the packets the
    /// encoder released (often none at first: x264 has a lookahead).
    public func encode(_ image: YUVImage, frameIndex: Int64) throws -> [EncodedPacket] {
        guard image.width == settings.width, image.height == settings.height else {
            throw MediaError(code: .invalidArgument,
                             message: "frame is \(image.width)x\(image.height), encoder is \(settings.width)x\(settings.height)",
                             context: "encoding frame \(frameIndex)")
        }
        let f = try prepareFrame(width: image.width, height: image.height, frameIndex: frameIndex)
        if pixelFormat != AV_PIX_FMT_YUV420P && pixelFormat != AV_PIX_FMT_YUVA420P {
            try convert(image, into: f, frameIndex: frameIndex)
            try check(avcodec_send_frame(context, f), "encoding frame \(frameIndex)")
            return try receivePackets()
        }
        // 4:2:0 is copied as composited; VP9 with alpha takes the frame's alpha plane as the
        // fourth plane (opaque if the frame has none).
        let alphaPlane = pixelFormat == AV_PIX_FMT_YUVA420P ? image.a : nil
        if pixelFormat == AV_PIX_FMT_YUVA420P, alphaPlane == nil {
            let stride = Int(withUnsafeBytes(of: f.pointee.linesize) { $0.load(fromByteOffset: 3 * 4, as: Int32.self) })
            let base = withUnsafeBytes(of: f.pointee.data) { $0.load(fromByteOffset: 3 * 8, as: UnsafeMutablePointer<UInt8>.self) }
            base.update(repeating: 255, count: stride * image.height)
        }
        for (index, plane) in ([image.y, image.u, image.v] + (alphaPlane.map { [$0] } ?? [])).enumerated() {
            let stride = Int(withUnsafeBytes(of: f.pointee.linesize) { $0.load(fromByteOffset: index * 4, as: Int32.self) })
            let base = withUnsafeBytes(of: f.pointee.data) { $0.load(fromByteOffset: index * 8, as: UnsafeMutablePointer<UInt8>.self) }
            let rows = index == 0 || index == 3 ? image.height : (image.height + 1) / 2
            for r in 0..<rows {
                let dst = base + r * stride
                dst.update(from: plane.row(r), count: plane.width)
                (dst + plane.width).update(repeating: 0, count: stride - plane.width)
            }
        }
        try check(avcodec_send_frame(context, f), "encoding frame \(frameIndex)")
        return try receivePackets()
    }

    /// Encodes one frame of an HDR render (`settings.isHighDynamicRange`): its 16-bit samples
    /// rounded to 10 bits (`(v + 32) >> 6`, the nearest 10-bit code), as `yuv420p10le`.
    public func encode(_ image: DeepYUVImage, frameIndex: Int64) throws -> [EncodedPacket] {
        guard pixelFormat == AV_PIX_FMT_YUV420P10LE else {
            throw MediaError(code: .invalidArgument, message: "a 16-bit frame for an 8-bit \(codecName) encoder", context: "encoding frame \(frameIndex)")
        }
        guard image.width == settings.width, image.height == settings.height, image.subsampled else {
            throw MediaError(code: .invalidArgument,
                             message: "frame is \(image.width)x\(image.height), encoder is \(settings.width)x\(settings.height) 4:2:0",
                             context: "encoding frame \(frameIndex)")
        }
        let f = try prepareFrame(width: image.width, height: image.height, frameIndex: frameIndex)
        for (index, plane) in image.planes.enumerated() {
            let stride = Int(withUnsafeBytes(of: f.pointee.linesize) { $0.load(fromByteOffset: index * 4, as: Int32.self) }) / 2
            let base = withUnsafeBytes(of: f.pointee.data) { $0.load(fromByteOffset: index * 8, as: UnsafeMutablePointer<UInt8>.self) }
            let samples = UnsafeMutableRawPointer(base).assumingMemoryBound(to: UInt16.self)
            for r in 0..<plane.height {
                let src = plane.row(r), dst = samples + r * stride
                for x in 0..<plane.width { dst[x] = UInt16(min((Int(src[x]) + 32) >> 6, 1023)) }
                (dst + plane.width).update(repeating: 0, count: stride - plane.width)
            }
        }
        try check(avcodec_send_frame(context, f), "encoding frame \(frameIndex)")
        return try receivePackets()
    }

    /// The frame to fill for `frameIndex`: writable, sized, timed and tagged. A
    /// reference-counted picture of our own (no pointer into the image outlives the call): the
    /// previous frame's, once the encoder has let go of it (libx264, libx265 and prores_ks copy
    /// their input), else a fresh one. Reusing it spares a large allocation, and the page faults
    /// of fresh memory, per frame. The callers write every byte of it (the row padding zeroed),
    /// so each is a function of the image either way.
    private func prepareFrame(width: Int, height: Int, frameIndex: Int64) throws -> UnsafeMutablePointer<AVFrame> {
        let f = frame.pointer
        if av_frame_is_writable(f) == 0 {
            frame.unref()
            f.pointee.format = pixelFormat.rawValue
            f.pointee.width = Int32(width)
            f.pointee.height = Int32(height)
            try check(av_frame_get_buffer(f, 0), "allocating frame \(frameIndex)")
        }
        f.pointee.pts = frameIndex
        // prores_ks writes each frame header's colour from the frame, not the context (an
        // untagged header made players and ffmpeg read a ProRes output as BT.601): every frame
        // carries the context's, which the other encoders read at open.
        f.pointee.color_range = context.pointee.color_range
        f.pointee.colorspace = context.pointee.colorspace
        f.pointee.color_primaries = context.pointee.color_primaries
        f.pointee.color_trc = context.pointee.color_trc
        f.pointee.pict_type = sawFirstFrame ? AV_PICTURE_TYPE_NONE : AV_PICTURE_TYPE_I
        sawFirstFrame = true
        return f
    }

    /// Converts the composited 4:2:0 frame to the encoder's format (ProRes: 10-bit 4:2:2 or
    /// 4:4:4 with the frame's alpha) in the frame's own buffer. The padding of each row is zeroed
    /// first, so the whole buffer is a function of the image.
    private func convert(_ image: YUVImage, into f: UnsafeMutablePointer<AVFrame>, frameIndex: Int64) throws {
        let destination = PixelConverter.Planes(frame: f)
        // 4:2:2, 4:4:4 and packed RGB: every plane has the frame's height.
        for (base, stride) in zip(destination.data, destination.strides) {
            base?.update(repeating: 0, count: Int(stride) * Int(f.pointee.height))
        }
        try converter.convert(from: PixelConverter.Planes(image: image), format: image.hasAlpha ? AV_PIX_FMT_YUVA420P : AV_PIX_FMT_YUV420P,
                              fullRange: false, to: destination, format: pixelFormat, fullRange: false,
                              matrix: settings.colour.matrix, width: image.width, height: image.height, context: "converting frame \(frameIndex) for \(codecName)")
    }

    /// Flushes the encoder; returns the remaining packets. The encoder is unusable afterwards.
    public func finish() throws -> [EncodedPacket] {
        try check(avcodec_send_frame(context, nil), "flushing the \(codecName) encoder")
        return try receivePackets()
    }

    private func receivePackets() throws -> [EncodedPacket] {
        try EncodedPacket.receiveAll(from: context, into: packet, "receiving \(codecName) packets")
    }
}

extension ProResProfile {
    /// prores_ks's name for the profile (its `profile` option).
    var encoderProfileName: String {
        switch self {
        case .proxy: "proxy"
        case .lt: "lt"
        case .standard: "standard"
        case .hq: "hq"
        case .fourFourFourFour: "4444"
        case .fourFourFourFourXQ: "4444xq"
        }
    }
}

/// SVT-AV1 prints its banner and configuration to stderr, outside libav's logging, at its
/// default level; `SVT_LOG` (read when the encoder is first opened) sets the level. Reel keeps
/// it to errors, as it does libav's, unless the environment already says otherwise.
enum SVTAV1Logging {
    private static let configured: Void = { setenv("SVT_LOG", "1", 0) }()
    static func errorsOnly() { _ = configured }
}
