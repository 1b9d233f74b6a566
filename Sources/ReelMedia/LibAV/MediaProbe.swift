import CFFmpeg
import ReelCore

/// Reads what Reel needs to know about a media file, without decoding it (except the
/// keyframe scan of `report`, which reads packets).
public enum MediaProbe {
    /// What the pure core needs: kind, duration (time zero = the container's start time),
    /// the first video and audio tracks. Still images (image2 / `*_pipe` demuxers, or a lone
    /// frame of an image codec) are `.still` with no duration.
    public static func describe(path: String) throws -> AssetDescription {
        try describe(try InputFile(path: path))
    }

    /// What the pure core needs of the media at `location` (see `describe(path:)`).
    public static func describe(_ location: MediaLocation) throws -> AssetDescription {
        try describe(try InputFile(location))
    }

    /// Everything `reel probe` prints, including the keyframe interval of the first video
    /// stream measured over its first ~10 s.
    public static func report(path: String) throws -> ProbeReport {
        let input = try InputFile(path: path)
        let asset = try describe(input)
        let format = input.context.pointee.iformat.pointee
        let bitRate = input.context.pointee.bit_rate
        var report = ProbeReport(
            path: path, format: String(cString: format.name),
            formatLongName: format.long_name.map { String(cString: $0) },
            duration: input.duration, startTime: input.startTime, bitRate: bitRate > 0 ? Int(bitRate) : nil,
            streams: (0..<input.streamCount).map { streamReport(input.stream($0)) },
            keyframeInterval: nil, asset: asset)
        if asset.kind == .movie, let index = input.firstStream(of: AVMEDIA_TYPE_VIDEO) {
            report.keyframeInterval = try keyframeInterval(input, streamIndex: index)
        }
        return report
    }

    static func describe(_ input: InputFile) throws -> AssetDescription {
        let videoIndex = input.firstStream(of: AVMEDIA_TYPE_VIDEO)
        let audioIndex = input.firstStream(of: AVMEDIA_TYPE_AUDIO)
        let video = videoIndex.map { videoDescription(input.stream($0)) }
        let audio = audioIndex.map { i -> AudioTrackDescription in
            let par = input.stream(i).pointee.codecpar.pointee
            return AudioTrackDescription(sampleRate: Int(par.sample_rate), channels: Int(par.ch_layout.nb_channels),
                                         codec: String(cString: avcodec_get_name(par.codec_id)))
        }
        if let videoIndex, audioIndex == nil, isStill(input, videoIndex: videoIndex) {
            return AssetDescription(kind: .still, duration: nil, video: video, audio: nil)
        }
        guard video != nil || audio != nil else {
            throw MediaError(code: .noStream, message: "no audio or video stream", context: "probing \(input.path)")
        }
        let duration = input.duration ?? longestStreamDuration(input)
        return AssetDescription(kind: video != nil ? .movie : .audio, duration: duration, video: video, audio: audio)
    }

    private static let imageCodecs: Set<AVCodecID> = [
        AV_CODEC_ID_PNG, AV_CODEC_ID_MJPEG, AV_CODEC_ID_BMP, AV_CODEC_ID_WEBP, AV_CODEC_ID_TIFF, AV_CODEC_ID_GIF,
        AV_CODEC_ID_JPEG2000, AV_CODEC_ID_JPEGLS, AV_CODEC_ID_PPM, AV_CODEC_ID_PGM, AV_CODEC_ID_PAM, AV_CODEC_ID_TARGA,
        AV_CODEC_ID_QOI, AV_CODEC_ID_PHOTOCD, AV_CODEC_ID_SGI, AV_CODEC_ID_DPX, AV_CODEC_ID_EXR,
    ]

    private static func isStill(_ input: InputFile, videoIndex: Int) -> Bool {
        let name = String(cString: input.context.pointee.iformat.pointee.name)
        if name == "image2" || name.hasSuffix("_pipe") { return true }
        let stream = input.stream(videoIndex).pointee
        // A single frame of an image codec in some other container (e.g. an animated-image
        // demuxer holding one picture).
        return imageCodecs.contains(stream.codecpar.pointee.codec_id) && stream.nb_frames <= 1
    }

    private static func longestStreamDuration(_ input: InputFile) -> Rational? {
        (0..<input.streamCount).compactMap { i -> Rational? in
            let s = input.stream(i).pointee
            guard s.duration != noPTS, s.duration > 0, let tb = Rational(s.time_base) else { return nil }
            return Rational(s.duration) * tb
        }.max()
    }

    static func videoDescription(_ stream: UnsafeMutablePointer<AVStream>) -> VideoTrackDescription {
        let par = stream.pointee.codecpar.pointee
        let rate = frameRate(stream)
        return VideoTrackDescription(
            naturalSize: PixelSize(width: Int(par.width), height: Int(par.height)),
            preferredTransform: DisplayMatrix.preferredTransform(of: stream),
            frameDuration: rate.map { .one / $0 },
            hasAlpha: pixelFormatHasAlpha(AVPixelFormat(rawValue: par.format)),
            codec: String(cString: avcodec_get_name(par.codec_id)))
    }

    /// The average frame rate, else the nominal one; nil when neither is a positive number.
    private static func frameRate(_ stream: UnsafeMutablePointer<AVStream>) -> Rational? {
        for q in [stream.pointee.avg_frame_rate, stream.pointee.r_frame_rate] {
            if let r = Rational(q), r > .zero { return r }
        }
        return nil
    }

    private static func streamReport(_ stream: UnsafeMutablePointer<AVStream>) -> ProbeReport.Stream {
        let s = stream.pointee, par = s.codecpar.pointee
        let type = av_get_media_type_string(par.codec_type).map { String(cString: $0) } ?? "unknown"
        var r = ProbeReport.Stream(index: Int(s.index), type: type, codec: String(cString: avcodec_get_name(par.codec_id)))
        if par.profile != reel_profile_unknown(), let name = avcodec_profile_name(par.codec_id, par.profile) {
            r.profile = String(cString: name)
        }
        r.bitRate = par.bit_rate > 0 ? Int(par.bit_rate) : nil
        r.timeBase = Rational(s.time_base)
        if s.duration != noPTS, s.duration > 0, let tb = r.timeBase { r.duration = Rational(s.duration) * tb }
        if par.codec_type == AVMEDIA_TYPE_VIDEO {
            let video = videoDescription(stream)
            r.pixelFormat = par.format >= 0 ? pixelFormatName(AVPixelFormat(rawValue: par.format)) : nil
            r.size = video.naturalSize
            r.displaySize = video.displaySize
            r.preferredTransform = video.preferredTransform
            r.rotationDegrees = DisplayMatrix.rotationDegrees(video.preferredTransform)
            r.averageFrameRate = Rational(s.avg_frame_rate).flatMap { $0 > .zero ? $0 : nil }
            r.nominalFrameRate = Rational(s.r_frame_rate).flatMap { $0 > .zero ? $0 : nil }
            r.hasAlpha = video.hasAlpha
            r.isAttachedPicture = s.disposition & reel_disposition_attached_pic() != 0
            let tags = ColourTags(s.codecpar)
            let format = AVPixelFormat(rawValue: par.format)
            r.colourTags = tags
            r.colour = tags.resolved(height: Int(par.height), rgb: PixelFormatTraits(format)?.isRGB ?? false, fullRangeFormat: isFullRangeFormat(format))
        } else if par.codec_type == AVMEDIA_TYPE_AUDIO {
            r.sampleRate = Int(par.sample_rate)
            r.channels = Int(par.ch_layout.nb_channels)
            var layout = par.ch_layout
            var name = [CChar](repeating: 0, count: 128)
            if av_channel_layout_describe(&layout, &name, name.count) >= 0 {
                r.channelLayout = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            r.sampleFormat = av_get_sample_fmt_name(AVSampleFormat(rawValue: par.format)).map { String(cString: $0) }
        }
        return r
    }

    /// Reads packets of the first ~10 s and measures the distance between keyframes of the
    /// video stream, in packets (= frames) in decode order.
    private static func keyframeInterval(_ input: InputFile, streamIndex: Int) throws -> ProbeReport.KeyframeInterval? {
        let packet = Packet()
        let timeBase = Rational(input.stream(streamIndex).pointee.time_base) ?? Rational(1, 90000)
        let limit = input.startTime + Rational(10)
        var count = 0, keyframes = 0
        var lastKey: Int?
        var gaps: [Int] = []
        while try input.read(into: packet) {
            guard packet.streamIndex == streamIndex else { continue }
            let p = packet.pointer.pointee
            let ts = p.dts != noPTS ? p.dts : p.pts
            if ts != noPTS, Rational(ts) * timeBase > limit { break }
            if packet.isKeyframe {
                if let lastKey { gaps.append(count - lastKey) }
                lastKey = count
                keyframes += 1
            }
            count += 1
        }
        guard let minimum = gaps.min(), let maximum = gaps.max() else { return nil }
        return ProbeReport.KeyframeInterval(minimum: minimum, maximum: maximum, keyframes: keyframes, packets: count)
    }
}
