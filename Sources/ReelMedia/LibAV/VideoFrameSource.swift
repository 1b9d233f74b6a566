import CFFmpeg
import ReelCore
import ReelKernels

/// Frame-accurate reading of the first video stream of one file.
///
/// Time is asset time: zero is the container's start time, so A/V sync inside a file holds.
/// `frame(at:)` returns the last frame whose presentation time is ≤ t (exact rational
/// comparison, so variable frame rate and 29.97 sources pick the right frame), the first
/// frame before it, the last frame after the end.
///
/// One instance per open file; not thread-safe — used from one thread at a time (hence
/// `@unchecked Sendable`: it may move between threads, never be shared).
public final class VideoFrameSource: @unchecked Sendable {
    /// The coded size of the frames (before the preferred transform).
    public let naturalSize: PixelSize
    /// Whether frames carry alpha (then images are yuva420p).
    public let hasAlpha: Bool

    /// Forward jumps longer than this seek instead of decoding through (a GOP is ~2 s).
    public var seekThreshold = Rational(3)

    private let input: InputFile
    private let decoder: StreamDecoder
    private let converter: SourceColourConverter
    private let start: Rational
    private let timeBase: Rational

    /// The chosen frame (last shown) and its asset time.
    private var current = Frame()
    private var currentTime: Rational?
    /// A decoded frame later than `current`, held until a request reaches it.
    private var lookahead = Frame()
    private var lookaheadTime: Rational?
    /// Time assumed for a frame without timestamps: the previous one plus a frame duration.
    private let nominalFrameDuration: Rational
    /// Seeks done so far (tests check that random access really seeks).
    private(set) var seekCount = 0
    /// The image made from `current`, reused while the chosen frame does not change.
    private var cached: (time: Rational, image: YUVImage)?

    /// The colour space frames are read in (from the stream's tags, or guessed), for `reel probe`
    /// and tests; each frame's own tags, when it has them, decide its conversion.
    public let sourceColour: ColourSpace
    /// The stream's colour tags, for what frames leave unsaid.
    let streamTags: ColourTags
    /// The file read, for messages.
    var path: String { input.path }

    /// `colour`: the colour frames are converted into (the output's: docs/colour.md).
    public convenience init(path: String, decoderThreads: Int = 1, colour: OutputColour = .standard) throws {
        try self.init(try MediaSources.local.location(of: path), decoderThreads: decoderThreads, colour: colour)
    }

    public init(_ location: MediaLocation, decoderThreads: Int = 1, colour: OutputColour = .standard) throws {
        input = try InputFile(location)
        guard let index = input.firstStream(of: AVMEDIA_TYPE_VIDEO) else {
            throw MediaError(code: .noStream, message: "no video stream", context: "opening \(location)")
        }
        decoder = try StreamDecoder(input: input, streamIndex: index, threads: decoderThreads)
        let par = input.stream(index).pointee.codecpar.pointee
        naturalSize = PixelSize(width: Int(par.width), height: Int(par.height))
        hasAlpha = pixelFormatHasAlpha(AVPixelFormat(rawValue: par.format))
        let tags = ColourTags(input.stream(index).pointee.codecpar)
        converter = SourceColourConverter(output: colour, streamTags: tags)
        streamTags = tags
        let traits = PixelFormatTraits(AVPixelFormat(rawValue: par.format))
        sourceColour = tags.resolved(height: Int(par.height), rgb: traits?.isRGB ?? false,
                                     fullRangeFormat: isFullRangeFormat(AVPixelFormat(rawValue: par.format)))
        start = input.startTime
        timeBase = decoder.timeBase
        let rate = Rational(input.stream(index).pointee.avg_frame_rate) ?? Rational(input.stream(index).pointee.r_frame_rate)
        nominalFrameDuration = rate.flatMap { $0.num > 0 ? Rational.one / $0 : nil } ?? Rational(1, 25)
    }

    /// The frame shown at asset time `t`. Returns the same `YUVImage` object as the previous
    /// call when the chosen frame is unchanged. When it changed, the previous call's image is
    /// written over if nobody else holds it any more, else a new one is returned: an image a
    /// caller keeps never changes.
    public func frame(at t: Rational) throws -> YUVImage {
        let time = try select(at: t)
        if let cached, cached.time == time { return cached.image }
        // The previous frame's image is written over when nobody holds it any more (a renderer
        // draws a frame and lets it go): no fresh allocation, and no page faults, per frame.
        // One still held elsewhere is left alone, so a returned image never changes under its holder.
        var previous = cached?.image
        cached = nil
        let reusable = isKnownUniquelyReferenced(&previous) ? previous : nil
        previous = nil
        let image = try converter.image(from: current.pointer, reusing: reusable, context: "converting a frame of \(input.path)")
        cached = (time, image)
        return image
    }

    /// The decoded frame shown at asset time `t`, as decoded (its own depth and tags), valid
    /// until the next call; for HDR renders, which convert it themselves (`DeepSourceConverter`).
    func decodedFrame(at t: Rational) throws -> UnsafeMutablePointer<AVFrame> {
        _ = try select(at: t)
        return current.pointer
    }

    /// Makes `current` the frame shown at `t`; returns its time.
    private func select(at t: Rational) throws -> Rational {
        let needsSeek: Bool
        if let shown = currentTime {
            needsSeek = t < shown || t - shown > seekThreshold
        } else {
            needsSeek = t > seekThreshold
        }
        if needsSeek { try seek(to: t) }
        try decodeForward(to: t)
        if needsSeek, let shown = currentTime, shown > t, t > .zero {
            // The seek landed after t (a sparse or broken index, or t before the first
            // frame): decode from the top instead, which is always right.
            try seek(to: .zero)
            try decodeForward(to: t)
        }
        guard let time = currentTime else {
            throw MediaError(code: .noData, message: "no decodable video frame", context: "reading \(input.path) at \(TimeFormatting.seconds(t))")
        }
        return time
    }

    /// Advances `current` to the last frame with time ≤ t (or the first frame, if none is).
    private func decodeForward(to t: Rational) throws {
        while true {
            if lookaheadTime == nil, !decoder.finished {
                if try decoder.next(into: lookahead) {
                    lookaheadTime = time(of: lookahead)
                }
            }
            guard let next = lookaheadTime else { return }
            // Before the first frame, the first frame is shown.
            guard next <= t || currentTime == nil else { return }
            swap(&current, &lookahead)
            currentTime = next
            lookaheadTime = nil
        }
    }

    /// Asset time of a decoded frame; synthesised from the previous frame when it has none.
    private func time(of frame: Frame) -> Rational {
        if let ts = frame.timestamp { return Rational(ts) * timeBase - start }
        return (currentTime ?? .zero) + nominalFrameDuration
    }

    private func seek(to t: Rational) throws {
        let target = ((t + start) / timeBase).floor
        try decoder.seek(to: target)
        seekCount += 1
        current.unref(); lookahead.unref()
        currentTime = nil; lookaheadTime = nil
    }
}
