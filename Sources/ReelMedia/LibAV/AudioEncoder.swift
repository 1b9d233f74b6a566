import CFFmpeg
import ReelCore

/// AAC-LC through FFmpeg's native encoder: planar float input, 1024-sample frames. Takes any
/// number of samples per call and buffers them into whole frames. The encoder's priming
/// delay (`initial_padding`) stays in the stream so the muxer writes an edit list and the
/// audio starts at 0. Packet time base is 1/sampleRate.
///
/// Not thread-safe: used from one thread at a time (`@unchecked Sendable` so it can move).
public final class AudioEncoder: @unchecked Sendable {
    public let sampleRate: Int
    public let channels: Int
    public var timeBase: Rational { Rational(1, Int64(sampleRate)) }
    /// Samples per frame (1024 for AAC).
    public let frameSize: Int
    /// Codec parameters for the muxer (AudioSpecificConfig extradata, priming).
    public let codecParameters: CodecParameters

    private let context: UnsafeMutablePointer<AVCodecContext>
    private let frame = Frame()
    private let packet = Packet()
    /// Samples not yet sent, per channel.
    private var pending: [[Float]]
    /// Samples sent so far: the next frame's pts.
    private var sent: Int64 = 0

    public init(sampleRate: Int, channels: Int, bitRate: Int) throws {
        let what = "opening the AAC encoder"
        guard sampleRate > 0, (1...8).contains(channels), bitRate > 0 else {
            throw MediaError(code: .invalidArgument, message: "\(sampleRate) Hz, \(channels) channels, \(bitRate) bit/s", context: what)
        }
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_AAC) else {
            throw MediaError(code: .noCodec, message: "no AAC encoder", context: what)
        }
        guard let ctx = avcodec_alloc_context3(codec) else { fatalError("avcodec_alloc_context3: out of memory") }
        context = ctx
        self.sampleRate = sampleRate
        self.channels = channels
        ctx.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        ctx.pointee.sample_rate = Int32(sampleRate)
        av_channel_layout_default(&ctx.pointee.ch_layout, Int32(channels))
        ctx.pointee.bit_rate = Int64(bitRate)
        ctx.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
        ctx.pointee.flags |= reel_codec_flag_global_header()
        let status = avcodec_open2(ctx, codec, nil)
        if status < 0 {
            var c: UnsafeMutablePointer<AVCodecContext>? = ctx
            avcodec_free_context(&c)
            throw MediaError.libav(status, what)
        }
        frameSize = Int(ctx.pointee.frame_size)
        pending = Array(repeating: [], count: channels)
        do {
            codecParameters = try CodecParameters(encoder: ctx, timeBase: Rational(1, Int64(sampleRate)))
        } catch {
            var c: UnsafeMutablePointer<AVCodecContext>? = ctx
            avcodec_free_context(&c)
            throw error
        }
    }

    deinit { var c: UnsafeMutablePointer<AVCodecContext>? = context; avcodec_free_context(&c) }

    public var extradata: [UInt8] { codecParameters.extradata }
    /// Priming samples the encoder puts before the first input sample.
    public var initialPadding: Int { Int(context.pointee.initial_padding) }

    /// Queues `count` samples per channel from `planar[ch]`; returns the packets completed.
    public func encode(planar: [UnsafePointer<Float>], count: Int) throws -> [EncodedPacket] {
        precondition(planar.count == channels, "encode needs one buffer per channel")
        for ch in 0..<channels { pending[ch].append(contentsOf: UnsafeBufferPointer(start: planar[ch], count: count)) }
        var packets: [EncodedPacket] = []
        var offset = 0
        while pending[0].count - offset >= frameSize {
            packets += try sendFrame(from: offset, count: frameSize)
            offset += frameSize
        }
        if offset > 0 { for ch in 0..<channels { pending[ch].removeFirst(offset) } }
        return packets
    }

    /// Encodes what is buffered (a short last frame) and drains the encoder.
    public func finish() throws -> [EncodedPacket] {
        var packets: [EncodedPacket] = []
        if !pending[0].isEmpty {
            packets += try sendFrame(from: 0, count: pending[0].count)
            for ch in 0..<channels { pending[ch].removeAll() }
        }
        try check(avcodec_send_frame(context, nil), "flushing the AAC encoder")
        return packets + (try receivePackets())
    }

    private func sendFrame(from offset: Int, count: Int) throws -> [EncodedPacket] {
        let f = frame.pointer
        frame.unref()
        f.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        f.pointee.nb_samples = Int32(count)
        f.pointee.sample_rate = Int32(sampleRate)
        try check(av_channel_layout_copy(&f.pointee.ch_layout, &context.pointee.ch_layout), "preparing an audio frame")
        try check(av_frame_get_buffer(f, 0), "allocating an audio frame")
        for ch in 0..<channels {
            let dst = UnsafeMutableRawPointer(f.pointee.extended_data[ch]!).assumingMemoryBound(to: Float.self)
            pending[ch].withUnsafeBufferPointer { dst.update(from: $0.baseAddress! + offset, count: count) }
        }
        f.pointee.pts = sent
        sent += Int64(count)
        try check(avcodec_send_frame(context, f), "encoding audio at sample \(f.pointee.pts)")
        return try receivePackets()
    }

    private func receivePackets() throws -> [EncodedPacket] {
        try EncodedPacket.receiveAll(from: context, into: packet, "receiving AAC packets")
    }
}
