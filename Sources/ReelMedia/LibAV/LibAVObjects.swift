import CFFmpeg
import Glibc
import ReelCore

// Small owners of libav objects. Each class owns exactly one C object and frees it in
// `deinit`; none of them is shared between threads (they live inside one source, encoder or
// writer, which is itself used from one thread at a time).

/// Owns one `AVPacket`.
final class Packet {
    let pointer: UnsafeMutablePointer<AVPacket>
    init() {
        guard let p = av_packet_alloc() else { fatalError("av_packet_alloc: out of memory") }
        pointer = p
    }
    deinit { var p: UnsafeMutablePointer<AVPacket>? = pointer; av_packet_free(&p) }
    func unref() { av_packet_unref(pointer) }
    var streamIndex: Int { Int(pointer.pointee.stream_index) }
    var isKeyframe: Bool { pointer.pointee.flags & reel_pkt_flag_key() != 0 }
}

/// Owns one `AVFrame`.
final class Frame {
    let pointer: UnsafeMutablePointer<AVFrame>
    init() {
        guard let p = av_frame_alloc() else { fatalError("av_frame_alloc: out of memory") }
        pointer = p
    }
    deinit { var p: UnsafeMutablePointer<AVFrame>? = pointer; av_frame_free(&p) }
    func unref() { av_frame_unref(pointer) }
    /// Moves the contents of `other` into this frame (which is unreferenced first).
    func take(_ other: Frame) { av_frame_unref(pointer); av_frame_move_ref(pointer, other.pointer) }
    /// `best_effort_timestamp`, falling back to `pts`; `nil` when the frame carries neither.
    var timestamp: Int64? {
        let t = pointer.pointee.best_effort_timestamp
        if t != noPTS { return t }
        let p = pointer.pointee.pts
        return p != noPTS ? p : nil
    }
}

extension Rational {
    /// An `AVRational`, or nil when it is not a usable number (0/0, x/0).
    init?(_ q: AVRational) {
        guard q.den != 0 else { return nil }
        self.init(Int64(q.num), Int64(q.den))
    }
    var avRational: AVRational { AVRational(num: Int32(clamping: num), den: Int32(clamping: den)) }
}

/// A media file opened for reading (`AVFormatContext` with stream info found).
///
/// A `.file` location is opened by libav itself; a `.byteRanges` one is read through its
/// `ByteRangeSource` by a custom `AVIOContext` (owned by `io`, which outlives the format
/// context because `deinit` closes the context before stored properties go).
final class InputFile {
    let context: UnsafeMutablePointer<AVFormatContext>
    /// What messages call the file: its path, or a remote asset's URL.
    let path: String
    /// The byte-range reader of a remote asset; nil for a local file.
    private let io: ByteRangeIO?

    /// Opens `path`. `findStreamInfo` probes the streams by decoding a few frames, which
    /// decoding needs for some formats; stream copy of MP4/MOV (the finaliser) does not, and
    /// skipping it makes opening a chunk cheap.
    /// How long opening and probing a file may take before it is abandoned (a file that
    /// never ends, a stalled read): far longer than any real file needs.
    static let openTimeout: Duration = .seconds(30)

    convenience init(path: String, findStreamInfo: Bool = true, openTimeout: Duration = InputFile.openTimeout) throws {
        try self.init(try MediaSources.local.location(of: path), findStreamInfo: findStreamInfo, openTimeout: openTimeout)
    }

    init(_ location: MediaLocation, findStreamInfo: Bool = true, openTimeout: Duration = InputFile.openTimeout) throws {
        let path = location.description
        self.path = path
        let deadline = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
        let (seconds, attoseconds) = openTimeout.components
        deadline.pointee = av_gettime_relative() + seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        self.deadline = deadline
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        let io: ByteRangeIO?
        switch location {
        case .byteRanges(let source, _):
            do { io = try ByteRangeIO(source: source, url: path) } catch { deadline.deallocate(); throw error }
        case .file:
            io = nil
            // Only regular files: a FIFO or a device would block (or never end) when read.
            var info = stat()
            if stat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG {
                deadline.deallocate()
                throw MediaError(code: .invalidArgument, message: "not a regular file (a directory, FIFO, device or socket)", context: "opening \(path)")
            }
        }
        self.io = io
        guard let allocated = avformat_alloc_context() else { fatalError("avformat_alloc_context: out of memory") }
        allocated.pointee.interrupt_callback = AVIOInterruptCB(callback: reel_deadline_interrupt_callback(), opaque: UnsafeMutableRawPointer(deadline))
        if let io { allocated.pointee.pb = io.context }
        ctx = allocated
        // On failure avformat_open_input frees the context (not a custom pb).
        let status = avformat_open_input(&ctx, path, nil, nil)
        if status < 0 {
            let timedOut = av_gettime_relative() > deadline.pointee
            deadline.deallocate()
            throw Self.failure(status, "opening \(path)", io: io, timedOut: timedOut)
        }
        guard let opened = ctx else { deadline.deallocate(); throw MediaError(code: .noData, message: "no format context", context: "opening \(path)") }
        let infoStatus = findStreamInfo ? avformat_find_stream_info(opened, nil) : 0
        let timedOut = av_gettime_relative() > deadline.pointee
        // find_stream_info treats a read error as the end of the file: ask the source too.
        if infoStatus < 0 || io?.hasFailure == true || timedOut {
            let error = Self.failure(infoStatus, "reading stream info of \(path)", io: io, timedOut: timedOut)
            avformat_close_input(&ctx)
            deadline.deallocate()
            throw error
        }
        // Opened: decoding from here on has no deadline (a long render reads for hours).
        deadline.pointee = .max
        context = opened
    }

    /// The interrupt callback's deadline; owned here, freed after the context is closed.
    private let deadline: UnsafeMutablePointer<Int64>

    /// The error for a failed (or, for remote reads, silently truncated) libav call: the
    /// byte-range source's own error when it caused the failure, libav's otherwise.
    private static func failure(_ status: Int32, _ what: String, io: ByteRangeIO?, timedOut: Bool = false) -> MediaError {
        if timedOut {
            return MediaError(code: .libav, status: reel_averror(ETIMEDOUT),
                              message: "gave up after \(InputFile.openTimeout): the file did not open in time", context: what)
        }
        if let cause = io?.takeFailure() {
            return MediaError(code: .libav, status: reel_averror(EIO), message: "\(cause)", context: what)
        }
        return MediaError.libav(status, what)
    }

    /// Throws when `status` is an error or the byte-range source failed during the call
    /// (demuxers may report a failed read as the end of the file).
    private func checkRead(_ status: Int32, _ what: @autoclosure () -> String) throws {
        if status < 0 || io?.hasFailure == true { throw Self.failure(status, what(), io: io) }
    }

    deinit {
        var c: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&c)
        deadline.deallocate()
    }

    var streamCount: Int { Int(context.pointee.nb_streams) }
    func stream(_ index: Int) -> UnsafeMutablePointer<AVStream> { context.pointee.streams[index]! }

    /// The first stream of `type`, skipping cover art (attached pictures) for video.
    func firstStream(of type: AVMediaType) -> Int? {
        (0..<streamCount).first { i in
            let s = stream(i)
            guard s.pointee.codecpar.pointee.codec_type == type else { return false }
            return type != AVMEDIA_TYPE_VIDEO || s.pointee.disposition & reel_disposition_attached_pic() == 0
        }
    }

    /// The container's start time in seconds: time zero of the asset. Zero when unknown.
    var startTime: Rational {
        let s = context.pointee.start_time
        return s == noPTS ? .zero : Rational(s, Int64(AV_TIME_BASE))
    }

    /// Container duration in seconds (end − start), if known.
    var duration: Rational? {
        let d = context.pointee.duration
        return d == noPTS || d <= 0 ? nil : Rational(d, Int64(AV_TIME_BASE))
    }

    /// Reads the next packet of any stream into `packet`; false at the end of the file.
    func read(into packet: Packet) throws -> Bool {
        packet.unref()
        let status = av_read_frame(context, packet.pointer)
        if status == averrorEOF && io?.hasFailure != true { return false }
        try checkRead(status, "reading \(path)")
        return true
    }

    /// Seeks `streamIndex` to the keyframe at or before `timestamp` (in the stream's time base).
    func seek(stream streamIndex: Int, to timestamp: Int64) throws {
        try checkRead(av_seek_frame(context, Int32(streamIndex), timestamp, reel_seek_flag_backward()),
                  "seeking \(path) to \(timestamp)")
    }
}

/// A decoder for one stream of an `InputFile`, with the read/send/receive loop that turns
/// packets into frames. Handles end-of-file draining and flushing after a seek.
final class StreamDecoder {
    let input: InputFile
    let streamIndex: Int
    let codecContext: UnsafeMutablePointer<AVCodecContext>
    let timeBase: Rational
    private let packet = Packet()
    private var draining = false
    private(set) var finished = false

    init(input: InputFile, streamIndex: Int, threads: Int = 1) throws {
        self.input = input
        self.streamIndex = streamIndex
        let stream = input.stream(streamIndex)
        let par = stream.pointee.codecpar!
        let what = "opening the decoder of stream \(streamIndex) of \(input.path)"
        guard let codec = avcodec_find_decoder(par.pointee.codec_id) else {
            throw MediaError(code: .noCodec, message: "no decoder for \(String(cString: avcodec_get_name(par.pointee.codec_id)))", context: what)
        }
        guard let ctx = avcodec_alloc_context3(codec) else { fatalError("avcodec_alloc_context3: out of memory") }
        codecContext = ctx
        timeBase = Rational(stream.pointee.time_base) ?? Rational(1, 90000)
        try check(avcodec_parameters_to_context(ctx, par), what)
        // pkt_timebase lets the decoder keep pts right when it drops priming samples.
        ctx.pointee.pkt_timebase = stream.pointee.time_base
        ctx.pointee.thread_count = Int32(max(1, threads))
        try check(avcodec_open2(ctx, codec, nil), what)
    }

    deinit { var c: UnsafeMutablePointer<AVCodecContext>? = codecContext; avcodec_free_context(&c) }

    /// Decodes the next frame into `frame`; false once the stream is exhausted.
    func next(into frame: Frame) throws -> Bool {
        while true {
            frame.unref()
            let status = avcodec_receive_frame(codecContext, frame.pointer)
            if status >= 0 { return true }
            if status == averrorEOF { finished = true; return false }
            if status != averrorEAGAIN { throw MediaError.libav(status, "decoding \(input.path)") }
            if draining { finished = true; return false }
            if try input.read(into: packet) {
                guard packet.streamIndex == streamIndex else { continue }
                let sent = avcodec_send_packet(codecContext, packet.pointer)
                packet.unref()
                // Damaged packets are skipped, as players do; anything else is fatal.
                if sent < 0 && sent != reel_averror_invaliddata() {
                    throw MediaError.libav(sent, "decoding \(input.path)")
                }
            } else {
                draining = true
                try check(avcodec_send_packet(codecContext, nil), "draining the decoder of \(input.path)")
            }
        }
    }

    /// Seeks to the keyframe at or before `timestamp` (stream time base) and resets the decoder.
    func seek(to timestamp: Int64) throws {
        try input.seek(stream: streamIndex, to: timestamp)
        avcodec_flush_buffers(codecContext)
        draining = false
        finished = false
    }
}

