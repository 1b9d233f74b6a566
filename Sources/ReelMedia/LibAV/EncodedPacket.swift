import CFFmpeg
import ReelCore

/// One compressed packet, owned by Swift. Times are in the producing encoder's time base
/// (`VideoEncoder.timeBase` = the frame duration, `AudioEncoder.timeBase` = 1/sample rate).
public struct EncodedPacket: Sendable, Hashable {
    public var data: [UInt8]
    public var pts: Int64
    public var dts: Int64
    public var duration: Int64
    public var isKeyframe: Bool
    /// Side data that must travel with the packet through stream copy — Opus's last packet says
    /// how many of its samples are padding (`AV_PKT_DATA_SKIP_SAMPLES`, WebM's DiscardPadding),
    /// without which the sound would run past its end; VP9's alpha is a second bitstream beside
    /// each frame (`AV_PKT_DATA_MATROSKA_BLOCKADDITIONAL`).
    public var sideData: [SideData] = []

    /// One piece of `AVPacketSideData`, kept only when its type is in `SideData.kept`.
    public struct SideData: Sendable, Hashable {
        /// An `AVPacketSideDataType`'s raw value.
        public var type: UInt32
        public var bytes: [UInt8]
        /// The types copied: those that change what a packet decodes to (VP9's alpha frame is
        /// `AV_PKT_DATA_MATROSKA_BLOCKADDITIONAL`, kept by WebM and dropped by MP4).
        static let kept: [UInt32] = [AV_PKT_DATA_SKIP_SAMPLES.rawValue, AV_PKT_DATA_MATROSKA_BLOCKADDITIONAL.rawValue]
    }

    public init(data: [UInt8], pts: Int64, dts: Int64, duration: Int64, isKeyframe: Bool) {
        self.data = data; self.pts = pts; self.dts = dts; self.duration = duration; self.isKeyframe = isKeyframe
    }

    init(copying packet: UnsafeMutablePointer<AVPacket>) {
        let p = packet.pointee
        data = p.size > 0 ? Array(UnsafeBufferPointer(start: p.data, count: Int(p.size))) : []
        pts = p.pts
        dts = p.dts == noPTS ? p.pts : p.dts
        duration = p.duration
        isKeyframe = p.flags & reel_pkt_flag_key() != 0
        for i in 0..<Int(p.side_data_elems) {
            let side = p.side_data[i]
            if SideData.kept.contains(side.type.rawValue), let bytes = side.data {
                sideData.append(SideData(type: side.type.rawValue, bytes: Array(UnsafeBufferPointer(start: bytes, count: side.size))))
            }
        }
    }

    /// Every packet `encoder` has ready: `avcodec_receive_packet` until it wants more input or
    /// is drained, each copied out of `packet` (which is reused).
    static func receiveAll(from encoder: UnsafeMutablePointer<AVCodecContext>, into packet: Packet,
                           _ what: @autoclosure () -> String) throws -> [EncodedPacket] {
        var packets: [EncodedPacket] = []
        while true {
            let status = avcodec_receive_packet(encoder, packet.pointer)
            if status == averrorEAGAIN || status == averrorEOF { return packets }
            try check(status, what())
            packets.append(EncodedPacket(copying: packet.pointer))
            packet.unref()
        }
    }
}

/// A stream's codec parameters (`AVCodecParameters`) and time base: everything a muxer
/// needs to create the stream. Made from a live encoder today; a stream-copy path can make
/// one from a demuxed stream (`init(copying:timeBase:)`) and hand it to `MovieWriter`.
///
/// Immutable after creation, so it is safe to share (`@unchecked Sendable`).
public final class CodecParameters: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<AVCodecParameters>
    /// Time base of the packets that will be written with these parameters.
    public let timeBase: Rational
    /// Nominal frame duration of a video stream (for the container's frame rate), if any.
    public let frameDuration: Rational?

    /// Copies `parameters`.
    init(copying parameters: UnsafePointer<AVCodecParameters>, timeBase: Rational, frameDuration: Rational? = nil) throws {
        guard let p = avcodec_parameters_alloc() else { fatalError("avcodec_parameters_alloc: out of memory") }
        pointer = p
        self.timeBase = timeBase
        self.frameDuration = frameDuration
        try check(avcodec_parameters_copy(p, parameters), "copying codec parameters")
    }

    /// Snapshot of an opened encoder's parameters.
    init(encoder: UnsafeMutablePointer<AVCodecContext>, timeBase: Rational, frameDuration: Rational? = nil) throws {
        guard let p = avcodec_parameters_alloc() else { fatalError("avcodec_parameters_alloc: out of memory") }
        pointer = p
        self.timeBase = timeBase
        self.frameDuration = frameDuration
        try check(avcodec_parameters_from_context(p, encoder), "reading encoder parameters")
    }

    /// The parameters of stream `index` of the file at `path` (for stream copy).
    public convenience init(path: String, streamIndex index: Int) throws {
        let input = try InputFile(path: path)
        guard index >= 0, index < input.streamCount else {
            throw MediaError(code: .noStream, message: "no stream \(index)", context: "reading codec parameters of \(path)")
        }
        let stream = input.stream(index)
        let rate = Rational(stream.pointee.avg_frame_rate)
        try self.init(copying: stream.pointee.codecpar, timeBase: Rational(stream.pointee.time_base) ?? Rational(1, 90000),
                      frameDuration: rate.flatMap { $0.num > 0 ? .one / $0 : nil })
    }

    deinit { var p: UnsafeMutablePointer<AVCodecParameters>? = pointer; avcodec_parameters_free(&p) }

    /// Codec-specific global header (H.264: avcC from MP4 files, Annex B SPS/PPS from
    /// libx264; AAC: AudioSpecificConfig).
    public var extradata: [UInt8] {
        let p = pointer.pointee
        guard let data = p.extradata, p.extradata_size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(p.extradata_size)))
    }
    public var codecName: String { String(cString: avcodec_get_name(pointer.pointee.codec_id)) }
    /// The container's four-character code (`avc1`, `hvc1`, `apch`, …; 0 when unset).
    public var codecTag: UInt32 { pointer.pointee.codec_tag }
    /// What, besides the extradata, must agree for two streams to be one stream: codec, tag
    /// (a ProRes profile is only in its tag), size and pixel format.
    public var streamShape: String {
        let p = pointer.pointee
        return "\(codecName) \(FourCC.string(p.codec_tag)) \(p.width)x\(p.height) format \(p.format)"
    }
    var isProRes: Bool { pointer.pointee.codec_id == AV_CODEC_ID_PRORES }
}

/// Four-character codes as libavformat stores them (first character in the low byte).
enum FourCC {
    static func code(_ s: String) -> UInt32 {
        s.utf8.prefix(4).enumerated().reduce(0) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
    }
    static func string(_ tag: UInt32) -> String {
        guard tag != 0 else { return "-" }
        return String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: tag >> (8 * $0)) }, as: UTF8.self)
    }
}
