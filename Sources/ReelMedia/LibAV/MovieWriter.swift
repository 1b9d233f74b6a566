import CFFmpeg
import ReelCore

/// Writes an MP4, MOV, M4A, WAV or WebM file with libavformat from already-encoded packets.
///
/// Streams are created from `CodecParameters`, so the same writer serves live encoders
/// (`init(path:fileType:faststart:video:audio:)` with encoders) and stream copy (parameters
/// read from an existing file with `CodecParameters(path:streamIndex:)`). Packets are given
/// in their parameters' time base and interleaved by libavformat. `faststart` moves the
/// index (moov) before the media data. An unfinished writer leaves an incomplete file.
///
/// Not thread-safe: used from one thread at a time (`@unchecked Sendable` so it can move).
public final class MovieWriter: @unchecked Sendable {
    public let path: String
    private let context: UnsafeMutablePointer<AVFormatContext>
    private let packet = Packet()
    private var videoStream: (index: Int32, timeBase: Rational)?
    /// In order; `offset` is added to every audio timestamp (see `blockTimeOffset`).
    private var audioStreams: [(index: Int32, timeBase: Rational, offset: Int64)] = []
    /// One per `SubtitleStreamDescription`, in order.
    private var subtitleStreams: [Int32] = []
    private var finished = false
    /// Whether `cutFragment()` has run (the moov is then written).
    private var cutBefore = false

    /// Creates the file with one stream per encoder given.
    public convenience init(path: String, fileType: String, faststart: Bool,
                            video: VideoEncoder?, audio: AudioEncoder?, fragmented: Bool = false) throws {
        try self.init(path: path, fileType: fileType, faststart: faststart,
                      video: video?.codecParameters, audio: audio?.codecParameters, fragmented: fragmented)
    }

    /// Creates the file with a video and/or an audio stream described by `video` / `audio`,
    /// then one audio stream per entry of `audioStreams` (with its language, title and
    /// disposition), then one timed-text stream per entry of `subtitles`; `metadata` goes into
    /// the file's own tags (the MP4 muxer keeps the keys it knows, such as `comment`).
    /// Audio streams are numbered in that order (`write(audio:stream:)`).
    public init(path: String, fileType: String, faststart: Bool,
                video: CodecParameters?, audio: CodecParameters?, audioStreams: [AudioStreamDescription] = [],
                subtitles: [SubtitleStreamDescription] = [], metadata: [String: String] = [:], fragmented: Bool = false) throws {
        self.path = path
        let what = "creating \(path)"
        guard let container = Container(fileType) else {
            throw MediaError(code: .invalidArgument, message: "file type must be one of \(FileType.allCases.map(\.rawValue).joined(separator: ", ")) "
                             + "(or ogg), got \(fileType)", context: what)
        }
        if container.holdsSoundOnly, video != nil {
            throw MediaError(code: .invalidArgument, message: "\(fileType) holds sound only, not video", context: what)
        }
        guard video != nil || audio != nil || !audioStreams.isEmpty else {
            throw MediaError(code: .invalidArgument, message: "no stream to write", context: what)
        }
        if fileType == "mp4", video?.isProRes == true {
            throw MediaError(code: .invalidArgument, message: "ProRes can only be written to QuickTime (mov), not MP4", context: what)
        }
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        try check(avformat_alloc_output_context2(&ctx, nil, container.muxerName, path), what)
        // From here on self is fully initialised: a throw runs deinit, which frees the context.
        context = ctx!
        // Matroska gives each file random segment and track UIDs, Ogg random stream serials,
        // unless asked to be bit-exact: the same render must give the same bytes.
        if container == .output(.webm) || container == .ogg { context.pointee.flags |= reel_fmt_flag_bitexact() }
        if let video { videoStream = (try addStream(video), video.timeBase) }
        let audioDescriptions = (audio.map { [AudioStreamDescription(parameters: $0)] } ?? []) + audioStreams
        for description in audioDescriptions {
            let audio = description.parameters
            let index = try addStream(audio)
            let stream = context.pointee.streams[Int(index)]!
            if let language = description.language { av_dict_set(&stream.pointee.metadata, "language", language, 0) }
            // MP4 and QuickTime keep a track's name in its handler; Matroska has a Name element.
            if let title = description.title {
                av_dict_set(&stream.pointee.metadata, container == .output(.webm) ? "title" : "handler_name", title, 0)
            }
            if let isDefault = description.isDefault {
                stream.pointee.disposition = isDefault ? stream.pointee.disposition | reel_disposition_default()
                    : stream.pointee.disposition & ~reel_disposition_default()
            }
            self.audioStreams.append((index, audio.timeBase, container == .output(.webm) ? audio.blockTimeOffset : 0))
        }
        for subtitle in subtitles { subtitleStreams.append(try addStream(subtitle, webVTT: container == .output(.webm))) }
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { av_dict_set(&context.pointee.metadata, key, value, 0) }
        try check(avio_open(&context.pointee.pb, path, reel_io_flag_write()), "opening \(path) for writing")
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        switch container {
        case .ogg:
            break
        case .output(.mp4), .output(.mov), .output(.m4a):
            if fragmented {
                // CMAF-style fragmented MP4 for HLS/DASH: the header (ftyp + moov, no samples)
                // first, then one moof + mdat per `cutFragment()`, no index at the end. The
                // moov waits for the first packet so its edit list can carry the encoder delay
                // (B-frame reordering, AAC priming): the first frame is presented at 0.
                av_dict_set(&options, "movflags", "+frag_custom+delay_moov+default_base_moof+skip_trailer", 0)
                av_dict_set(&options, "use_editlist", "1", 0)
            } else if faststart {
                av_dict_set(&options, "movflags", "+faststart", 0)
            }
        case .output(.wav):
            // A WAV header counts bytes in 32 bits: past 4 GiB (about 6 h of 48 kHz stereo) the
            // file becomes RF64, as EBU Tech 3306 has it.
            av_dict_set(&options, "rf64", "auto", 0)
        case .output(.webm):
            // The index (Cues) before the clusters, as `faststart` does for MP4.
            if faststart { av_dict_set(&options, "cues_to_front", "1", 0) }
        case .output(.hls), .output(.png):
            break
        }
        try check(avformat_write_header(context, &options), "writing the header of \(path)")
    }

    deinit {
        if context.pointee.pb != nil { avio_closep(&context.pointee.pb) }
        avformat_free_context(context)
    }

    private func addStream(_ parameters: CodecParameters) throws -> Int32 {
        guard let stream = avformat_new_stream(context, nil) else {
            throw MediaError(code: .noData, message: "cannot add a stream", context: "creating \(path)")
        }
        try check(avcodec_parameters_copy(stream.pointee.codecpar, parameters.pointer), "creating \(path)")
        stream.pointee.codecpar.pointee.codec_tag = Self.codecTag(for: parameters)
        stream.pointee.time_base = parameters.timeBase.avRational
        if let frameDuration = parameters.frameDuration {
            stream.pointee.avg_frame_rate = (Rational.one / frameDuration).avRational
        }
        return stream.pointee.index
    }

    /// A timed-text stream: `mov_text` (MP4, QuickTime), or WebVTT (`webVTT`: WebM, whose
    /// blocks hold a cue's text alone, with its title as the track's name).
    private func addStream(_ subtitle: SubtitleStreamDescription, webVTT: Bool) throws -> Int32 {
        guard let stream = avformat_new_stream(context, nil) else {
            throw MediaError(code: .noData, message: "cannot add a stream", context: "creating \(path)")
        }
        let parameters = stream.pointee.codecpar!
        parameters.pointee.codec_type = AVMEDIA_TYPE_SUBTITLE
        stream.pointee.time_base = SubtitleStreamDescription.timeBase.avRational
        av_dict_set(&stream.pointee.metadata, "language", subtitle.language, 0)
        if subtitle.isDefault { stream.pointee.disposition |= reel_disposition_default() }
        if webVTT {
            parameters.pointee.codec_id = AV_CODEC_ID_WEBVTT
            if let title = subtitle.title { av_dict_set(&stream.pointee.metadata, "title", title, 0) }
            return stream.pointee.index
        }
        parameters.pointee.codec_id = AV_CODEC_ID_MOV_TEXT
        let description = SubtitleStreamDescription.sampleDescription
        guard let extradata = av_mallocz(description.count + Int(AV_INPUT_BUFFER_PADDING_SIZE))?.assumingMemoryBound(to: UInt8.self) else {
            throw MediaError(code: .noData, message: "out of memory", context: "creating \(path)")
        }
        extradata.update(from: description, count: description.count)
        parameters.pointee.extradata = extradata   // freed with the stream
        parameters.pointee.extradata_size = Int32(description.count)
        if let title = subtitle.title { av_dict_set(&stream.pointee.metadata, "handler_name", title, 0) }
        return stream.pointee.index
    }

    /// The tag a stream is written with. The source container's tag may not be valid here, so
    /// the muxer chooses (`avc1`, `mp4a`) — except for HEVC, tagged `hvc1` (parameter sets only
    /// in the sample entry; Apple players refuse the muxer's default `hev1`), and ProRes, whose
    /// tag names its profile (`apco`, `apcs`, `apcn`, `apch`, `ap4h`: set by prores_ks and kept
    /// through stream copy), which the muxer cannot derive.
    static func codecTag(for parameters: CodecParameters) -> UInt32 {
        switch parameters.pointer.pointee.codec_id {
        case AV_CODEC_ID_HEVC: FourCC.code("hvc1")
        case AV_CODEC_ID_PRORES: parameters.codecTag
        default: 0
        }
    }

    public func write(video: EncodedPacket) throws {
        guard let videoStream else { throw MediaError(code: .invalidArgument, message: "no video stream", context: "writing \(path)") }
        try write(video, stream: videoStream.index, timeBase: videoStream.timeBase)
    }

    /// A packet of the first audio stream.
    public func write(audio: EncodedPacket) throws {
        try write(audio: audio, stream: 0)
    }

    /// A packet of audio stream `index` (in the order the streams were given).
    public func write(audio: EncodedPacket, stream index: Int) throws {
        guard audioStreams.indices.contains(index) else {
            throw MediaError(code: .invalidArgument, message: "no audio stream \(index)", context: "writing \(path)")
        }
        let stream = audioStreams[index]
        try write(audio, stream: stream.index, timeBase: stream.timeBase, offset: stream.offset)
    }

    /// A sample of subtitle stream `index` (the position of its description), timed in
    /// `SubtitleStreamDescription.timeBase`.
    public func write(subtitle: EncodedPacket, stream index: Int) throws {
        guard subtitleStreams.indices.contains(index) else {
            throw MediaError(code: .invalidArgument, message: "no subtitle stream \(index)", context: "writing \(path)")
        }
        try write(subtitle, stream: subtitleStreams[index], timeBase: SubtitleStreamDescription.timeBase)
    }

    private func write(_ encoded: EncodedPacket, stream index: Int32, timeBase: Rational, offset: Int64 = 0) throws {
        let p = packet.pointer
        packet.unref()
        try check(av_new_packet(p, Int32(encoded.data.count)), "writing \(path)")
        encoded.data.withUnsafeBufferPointer { src in
            if let base = src.baseAddress { p.pointee.data.update(from: base, count: src.count) }
        }
        p.pointee.pts = encoded.pts + offset
        p.pointee.dts = encoded.dts + offset
        p.pointee.duration = encoded.duration
        p.pointee.flags = encoded.isKeyframe ? reel_pkt_flag_key() : 0
        p.pointee.stream_index = index
        for side in encoded.sideData {
            guard let data = av_packet_new_side_data(p, AVPacketSideDataType(rawValue: side.type), side.bytes.count) else {
                throw MediaError(code: .noData, message: "cannot attach packet side data", context: "writing \(path)")
            }
            side.bytes.withUnsafeBufferPointer { data.update(from: $0.baseAddress!, count: $0.count) }
        }
        av_packet_rescale_ts(p, timeBase.avRational, context.pointee.streams[Int(index)]!.pointee.time_base)
        // av_interleaved_write_frame takes the packet's reference (and blanks it).
        try check(av_interleaved_write_frame(context, p), "writing a packet at \(encoded.pts) to \(path)")
    }

    /// Ends the current fragment of a fragmented file: the packets written since the last cut
    /// become one moof + mdat. Nothing happens before the first packet.
    public func cutFragment() throws {
        try check(av_interleaved_write_frame(context, nil), "flushing \(path)")
        // With delay_moov the first flush writes only the moov and keeps the samples for the
        // next one: flush again, so the first fragment ends here like every other.
        if !cutBefore { try check(av_write_frame(context, nil), "writing the header of \(path)") }
        cutBefore = true
        try check(av_write_frame(context, nil), "cutting a fragment of \(path)")
    }

    /// Writes the trailer (index) and closes the file.
    public func finish() throws {
        guard !finished else { return }
        finished = true
        try check(av_write_trailer(context), "finishing \(path)")
        try check(avio_closep(&context.pointee.pb), "closing \(path)")
    }
}

/// An audio stream to write: its codec parameters and, for an output with several audio
/// streams, its tags. `language` is the container's code (ISO 639-2); `isDefault` nil leaves
/// the disposition to the muxer.
public struct AudioStreamDescription {
    public var parameters: CodecParameters
    public var language: String?
    public var title: String?
    public var isDefault: Bool?

    public init(parameters: CodecParameters, language: String? = nil, title: String? = nil, isDefault: Bool? = nil) {
        self.parameters = parameters; self.language = language; self.title = title; self.isDefault = isDefault
    }
}

/// What a `MovieWriter` writes: an output container, or Ogg — the Opus audio task's file,
/// whose timestamps are exact samples (WebM rounds them to milliseconds) and which marks the
/// priming and the last packet's padding, so stream copy into WebM loses nothing.
private enum Container: Equatable {
    case output(FileType)
    case ogg

    init?(_ name: String) {
        if let fileType = FileType(rawValue: name) { self = .output(fileType) } else if name == "ogg" { self = .ogg } else { return nil }
    }

    var muxerName: String {
        switch self {
        case .output(let fileType): fileType.muxerName
        case .ogg: "ogg"
        }
    }

    var holdsSoundOnly: Bool {
        switch self {
        case .output(let fileType): fileType.isAudioOnly
        case .ogg: true
        }
    }
}

extension CodecParameters {
    /// What to add to this audio stream's timestamps in Matroska/WebM, in its time base:
    /// the encoder's priming (`initial_padding`). The muxer writes it as the track's CodecDelay
    /// but (in FFmpeg 5.1) does not add it to the block times, which must include it; the
    /// demuxer subtracts it again. Without it libavformat would shift every stream to make the
    /// first audio block non-negative, and the picture would start late by the priming.
    var blockTimeOffset: Int64 {
        let p = pointer.pointee
        guard p.initial_padding > 0, p.sample_rate > 0 else { return 0 }
        return (Rational(Int64(p.initial_padding), Int64(p.sample_rate)) / timeBase).rounded
    }
}

extension FileType {
    /// The libavformat muxer that writes the container (`ipod` is the MP4 muxer with the M4A
    /// brand, as Apple's audio files have).
    var muxerName: String {
        switch self {
        case .mp4: "mp4"
        case .mov: "mov"
        case .m4a: "ipod"
        case .wav: "wav"
        case .webm: "webm"
        // An HLS output is a folder; each of its renditions is fragmented MP4.
        case .hls: "mp4"
        // A PNG sequence is a folder of files; its chunks are QuickTime (`RenderPlan.chunkFileType`).
        case .png: "mov"
        }
    }
}
