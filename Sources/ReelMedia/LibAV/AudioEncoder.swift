import CFFmpeg
import ReelCore

/// The audio encoder of the audio task: AAC-LC through FFmpeg's native encoder (planar float,
/// 1024-sample frames), Opus through libopus for WebM (interleaved float, 20 ms frames), or PCM
/// signed 16-bit little-endian for WAV (interleaved, converted from float with rounding and
/// clipping, 1024-sample packets). Takes any number of samples per call and buffers them into
/// whole frames. AAC's and Opus's priming delay (`initial_padding`) stays in the stream so the
/// muxer signals it (an MP4 edit list, WebM's CodecDelay) and the audio starts at 0; Opus's
/// last packet carries how much of it is padding. PCM has neither.
/// Packet time base is 1/sampleRate.
///
/// Not thread-safe: used from one thread at a time (`@unchecked Sendable` so it can move).
public final class AudioEncoder: @unchecked Sendable {
    public let codec: AudioCodec
    public let sampleRate: Int
    public let channels: Int
    public var timeBase: Rational { Rational(1, Int64(sampleRate)) }
    /// Samples per frame (1024 for AAC; the packet size chosen for PCM).
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
    /// The sample format the encoder takes (AAC: planar float; PCM: interleaved s16).
    private let sampleFormat: AVSampleFormat

    /// AAC at `bitRate` (kept for callers that predate the other codecs).
    public convenience init(sampleRate: Int, channels: Int, bitRate: Int) throws {
        try self.init(codec: .aac, sampleRate: sampleRate, channels: channels, bitRate: bitRate)
    }

    /// `codec` at `sampleRate` Hz with `channels` channels; `bitRate` is used by AAC only.
    public init(codec: AudioCodec, sampleRate: Int, channels: Int, bitRate: Int) throws {
        let what = "opening the \(codec.displayName) encoder"
        guard sampleRate > 0, (1...8).contains(channels), bitRate > 0 else {
            throw MediaError(code: .invalidArgument, message: "\(sampleRate) Hz, \(channels) channels, \(bitRate) bit/s", context: what)
        }
        guard let encoder = avcodec_find_encoder_by_name(codec.encoderName) else {
            throw MediaError(code: .noCodec, message: "\(codec.encoderName) is not available in this FFmpeg", context: what)
        }
        guard let ctx = avcodec_alloc_context3(encoder) else { fatalError("avcodec_alloc_context3: out of memory") }
        context = ctx
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
        switch codec {
        case .aac: sampleFormat = AV_SAMPLE_FMT_FLTP
        case .opus: sampleFormat = AV_SAMPLE_FMT_FLT
        case .pcm: sampleFormat = AV_SAMPLE_FMT_S16
        }
        ctx.pointee.sample_fmt = sampleFormat
        ctx.pointee.sample_rate = Int32(sampleRate)
        av_channel_layout_default(&ctx.pointee.ch_layout, Int32(channels))
        if codec.hasBitRate { ctx.pointee.bit_rate = Int64(bitRate) }
        ctx.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
        ctx.pointee.flags |= reel_codec_flag_global_header()
        let status = avcodec_open2(ctx, encoder, nil)
        if status < 0 {
            var c: UnsafeMutablePointer<AVCodecContext>? = ctx
            avcodec_free_context(&c)
            throw MediaError.libav(status, what)
        }
        // PCM takes frames of any size: 1024 samples keeps its packets as fine as AAC's.
        frameSize = ctx.pointee.frame_size > 0 ? Int(ctx.pointee.frame_size) : 1024
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
        try check(avcodec_send_frame(context, nil), "flushing the \(codec.displayName) encoder")
        return packets + (try receivePackets())
    }

    private func sendFrame(from offset: Int, count: Int) throws -> [EncodedPacket] {
        let f = frame.pointer
        frame.unref()
        f.pointee.format = sampleFormat.rawValue
        f.pointee.nb_samples = Int32(count)
        f.pointee.sample_rate = Int32(sampleRate)
        try check(av_channel_layout_copy(&f.pointee.ch_layout, &context.pointee.ch_layout), "preparing an audio frame")
        try check(av_frame_get_buffer(f, 0), "allocating an audio frame")
        if sampleFormat == AV_SAMPLE_FMT_S16 {
            // Interleaved 16-bit: round to nearest, clip to the 16-bit range (the mix is
            // limited below full scale, so clipping only guards the arithmetic).
            let dst = UnsafeMutableRawPointer(f.pointee.data.0!).assumingMemoryBound(to: Int16.self)
            for ch in 0..<channels {
                pending[ch].withUnsafeBufferPointer { src in
                    for i in 0..<count {
                        let sample = src[offset + i]
                        let scaled = sample.isNaN ? 0 : (sample * 32768).rounded()
                        dst[i * channels + ch] = Int16(max(-32768, min(32767, scaled)))
                    }
                }
            }
        } else if sampleFormat == AV_SAMPLE_FMT_FLT {
            let dst = UnsafeMutableRawPointer(f.pointee.data.0!).assumingMemoryBound(to: Float.self)
            for ch in 0..<channels {
                pending[ch].withUnsafeBufferPointer { src in
                    for i in 0..<count { dst[i * channels + ch] = src[offset + i] }
                }
            }
        } else {
            for ch in 0..<channels {
                let dst = UnsafeMutableRawPointer(f.pointee.extended_data[ch]!).assumingMemoryBound(to: Float.self)
                pending[ch].withUnsafeBufferPointer { dst.update(from: $0.baseAddress! + offset, count: count) }
            }
        }
        f.pointee.pts = sent
        sent += Int64(count)
        try check(avcodec_send_frame(context, f), "encoding audio at sample \(f.pointee.pts)")
        return try receivePackets()
    }

    private func receivePackets() throws -> [EncodedPacket] {
        try EncodedPacket.receiveAll(from: context, into: packet, "receiving \(codec.displayName) packets")
    }
}
