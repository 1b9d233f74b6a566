import CFFmpeg
import Foundation
import ReelCore

/// Turns one finished video chunk into CMAF pieces for watching a render as it renders
/// (docs/delivery.md, "Watching a render"): an init segment (`ftyp` + `moov`, no samples) and a
/// media segment (`moof` + `mdat` pairs, one fragment per GOP), by stream copy with libavformat's
/// MP4 muxer. Nothing is decoded or encoded.
///
/// Decode times are absolute: the chunk's first sample decodes at its first frame's time
/// (`tfdt` = `frames.start` × frame duration), so the media segments of consecutive chunks
/// follow each other with no patching, in one timeline. H.264 with B-frames decodes
/// `reorderDelay` frames ahead of presentation; since `tfdt` cannot be negative, the whole
/// preview presents that many frames late (2 frames at x264's defaults: 80 ms at 25 fps), the
/// same shift in every chunk. The init segment depends only on the stream's codec parameters,
/// so chunks whose init segments have equal bytes can be played one after another from one
/// init segment; the caller checks that (`Pieces.initSegment`).
public enum PreviewRemuxer {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public struct Pieces: Sendable, Hashable {
        /// `ftyp` + `moov`.
        public var initSegment: [UInt8]
        /// `moof` + `mdat` pairs with absolute decode times.
        public var mediaSegment: [UInt8]
        /// Samples copied.
        public var frames: Int
        /// Frames decoding starts ahead of presentation (B-frame reordering).
        public var reorderDelay: Int64
    }

    /// Remuxes the chunk at `path`, holding plan frames `frames` at `frameDuration` seconds per
    /// frame. `scratch` is a file path the muxer may write (removed afterwards).
    /// - Throws: `Failure` when the chunk is not a closed run of whole frames on the grid
    ///   (it starts with a keyframe and holds exactly `frames.count` samples), libav's errors otherwise.
    public static func remux(chunk path: String, frames: FrameRange, frameDuration fd: Rational, scratch: String) throws -> Pieces {
        let reader = try PacketReader(path: path, kind: "video")
        let tb = reader.parameters.timeBase
        var packets: [EncodedPacket] = []
        while let packet = try reader.next() { packets.append(packet) }
        guard let first = packets.first, first.isKeyframe else {
            throw Failure(description: "chunk \(frames) does not start with a keyframe")
        }
        guard packets.count == frames.count else {
            throw Failure(description: "chunk \(frames) holds \(packets.count) frames, planned \(frames.count)")
        }
        // Frame numbers within the chunk, as the finaliser reads them.
        func frameOnGrid(_ ts: Int64) throws -> Int64 {
            let value = Rational(ts) * tb / fd
            guard value.den == 1 else { throw Failure(description: "chunk \(frames) has a timestamp off the frame grid (\(ts) × \(tb))") }
            return value.num
        }
        // A chunk's timestamps start at 0, except an HLS ladder rendition's, which are on the
        // job's timeline (its fragments become the ladder's segments): both count from the
        // first keyframe's presentation.
        let origin = try frameOnGrid(first.pts)
        guard origin == 0 || origin == Int64(frames.start) else {
            throw Failure(description: "chunk \(frames) starts at frame \(origin), neither 0 nor its place in the job")
        }
        func frame(_ ts: Int64) throws -> Int64 { try frameOnGrid(ts) - origin }
        let firstDecodeFrame = try frame(first.dts)
        let delay = max(0, -firstDecodeFrame)
        let parameters = try reader.parameters.retimed(timeBase: fd, frameDuration: fd)
        defer { unlink(scratch) }
        let muxer = try FragmentedMuxer(path: scratch, video: parameters)
        for var packet in packets {
            let pts = try frame(packet.pts), dts = try frame(packet.dts)
            guard pts >= 0, pts < Int64(frames.count) else {
                throw Failure(description: "chunk \(frames) has frame \(pts) outside its \(frames.count) frames")
            }
            packet.pts = pts + delay + Int64(frames.start)
            packet.dts = dts + delay + Int64(frames.start)
            packet.duration = 1
            try muxer.write(packet)
        }
        try muxer.finish()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: scratch)))
        let (initSegment, mediaSegment) = try split(bytes, what: "the remux of chunk \(frames)")
        return Pieces(initSegment: initSegment, mediaSegment: mediaSegment, frames: packets.count, reorderDelay: delay)
    }

    /// Splits a fragmented MP4 into its init part (`ftyp`, `moov`) and its fragments (`moof`,
    /// `mdat`); other top-level boxes (the `mfra` index) are left out. Fragments address their
    /// samples from their own `moof` (`default-base-is-moof`), so they can be cut out like this.
    static func split(_ bytes: [UInt8], what: String) throws -> (initSegment: [UInt8], media: [UInt8]) {
        var initSegment: [UInt8] = [], media: [UInt8] = []
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= 8 else { throw Failure(description: "\(what) ends inside a box header") }
            var size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            if size == 1 {
                guard bytes.count - offset >= 16 else { throw Failure(description: "\(what) ends inside a box header") }
                size = bytes[offset + 8..<offset + 16].reduce(0) { $0 << 8 | Int($1) }
            } else if size == 0 {
                size = bytes.count - offset
            }
            guard size >= 8, size <= bytes.count - offset else { throw Failure(description: "\(what) has a box (\(type)) of a wrong size") }
            switch type {
            case "ftyp", "moov": initSegment += bytes[offset..<offset + size]
            case "moof", "mdat": media += bytes[offset..<offset + size]
            default: break
            }
            offset += size
        }
        guard !initSegment.isEmpty, !media.isEmpty else { throw Failure(description: "\(what) has no init segment or no fragment") }
        return (initSegment, media)
    }
}

/// libavformat's MP4 muxer writing fragmented MP4 (`empty_moov`, one fragment per keyframe,
/// `default_base_moof`) with the first sample's decode time as the first fragment's `tfdt`
/// (`frag_discont`, no edit list, no shifting of timestamps), bit-exact (no encoder string).
private final class FragmentedMuxer {
    private let context: UnsafeMutablePointer<AVFormatContext>
    private let path: String
    private let packet = Packet()
    private let timeBase: Rational

    init(path: String, video: CodecParameters) throws {
        self.path = path
        timeBase = video.timeBase
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        try check(avformat_alloc_output_context2(&ctx, nil, "mp4", path), "creating \(path)")
        context = ctx!
        context.pointee.flags |= reel_fmt_flag_bitexact()
        guard let stream = avformat_new_stream(context, nil) else {
            throw MediaError(code: .noData, message: "cannot add a stream", context: "creating \(path)")
        }
        try check(avcodec_parameters_copy(stream.pointee.codecpar, video.pointer), "creating \(path)")
        stream.pointee.codecpar.pointee.codec_tag = MovieWriter.codecTag(for: video)
        // The demuxer measured each chunk's own bit rate; in the init segment (`btrt`) it would
        // make every chunk's init differ. The init segment must depend on the stream only.
        stream.pointee.codecpar.pointee.bit_rate = 0
        stream.pointee.time_base = video.timeBase.avRational
        if let frameDuration = video.frameDuration { stream.pointee.avg_frame_rate = (Rational.one / frameDuration).avRational }
        try check(avio_open(&context.pointee.pb, path, reel_io_flag_write()), "opening \(path) for writing")
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        av_dict_set(&options, "movflags", "+empty_moov+default_base_moof+frag_keyframe+frag_discont", 0)
        av_dict_set(&options, "use_editlist", "0", 0)
        av_dict_set(&options, "avoid_negative_ts", "0", 0)   // disabled: keep the absolute times
        try check(avformat_write_header(context, &options), "writing the header of \(path)")
    }

    deinit {
        if context.pointee.pb != nil { avio_closep(&context.pointee.pb) }
        avformat_free_context(context)
    }

    func write(_ encoded: EncodedPacket) throws {
        let p = packet.pointer
        packet.unref()
        try check(av_new_packet(p, Int32(encoded.data.count)), "writing \(path)")
        encoded.data.withUnsafeBufferPointer { src in
            if let base = src.baseAddress { p.pointee.data.update(from: base, count: src.count) }
        }
        p.pointee.pts = encoded.pts
        p.pointee.dts = encoded.dts
        p.pointee.duration = encoded.duration
        p.pointee.flags = encoded.isKeyframe ? reel_pkt_flag_key() : 0
        p.pointee.stream_index = 0
        av_packet_rescale_ts(p, timeBase.avRational, context.pointee.streams[0]!.pointee.time_base)
        try check(av_interleaved_write_frame(context, p), "writing a packet at \(encoded.pts) to \(path)")
    }

    func finish() throws {
        try check(av_write_trailer(context), "finishing \(path)")
        try check(avio_closep(&context.pointee.pb), "closing \(path)")
    }
}
