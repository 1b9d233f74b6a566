import CFFmpeg
import ReelCore

/// The first audio stream of one file as planar float samples at the export rate and
/// channel count (resampled and re-matrixed by swresample's standard matrix).
///
/// Sample index 0 is the container's start time. Samples are placed on an exact grid: the
/// resampler is only ever started at an input sample whose time is a whole number of output
/// samples (silence is injected before the first decoded frame to reach one), so a read that
/// follows a seek returns the same samples, at the same indices, as a sequential read. A seek
/// starts decoding a short pre-roll early so decoder and resampler transients fall outside
/// the requested range.
///
/// Not thread-safe: used from one thread at a time (`@unchecked Sendable` so it can move).
public final class AudioSampleSource: @unchecked Sendable {
    public let sampleRate: Int
    public let channels: Int

    private let input: InputFile
    private let decoder: StreamDecoder
    private let start: Rational
    private let frame = Frame()
    private var resampler: OpaquePointer?
    private var outputLayout = AVChannelLayout()

    /// Decoded, resampled samples; `buffer[ch][head]` is sample index `bufferStart`.
    private var buffer: [[Float]]
    private var head = 0
    private var bufferStart: Int64 = 0
    /// Whether `bufferStart` is established (the first frame since open/seek was decoded).
    private var aligned = false
    /// Before alignment: where decoding is expected to begin (the seek target).
    private var expectedStart: Int64 = 0
    /// The buffer starts at the stream's first sample: nothing exists before it.
    private var atStreamStart = true
    private var ended = false

    /// Decoding starts this much before a seek target (covers AAC's overlap window and the
    /// resampler's filter).
    private var preroll: Int64 { Int64(sampleRate / 5) }

    public convenience init(path: String, sampleRate: Int, channels: Int) throws {
        try self.init(try MediaSources.local.location(of: path), sampleRate: sampleRate, channels: channels)
    }

    public init(_ location: MediaLocation, sampleRate: Int, channels: Int) throws {
        guard sampleRate > 0, (1...8).contains(channels) else {
            throw MediaError(code: .invalidArgument, message: "unsupported output \(sampleRate) Hz × \(channels) channels", context: "opening \(location)")
        }
        self.sampleRate = sampleRate
        self.channels = channels
        input = try InputFile(location)
        guard let index = input.firstStream(of: AVMEDIA_TYPE_AUDIO) else {
            throw MediaError(code: .noStream, message: "no audio stream", context: "opening \(location)")
        }
        decoder = try StreamDecoder(input: input, streamIndex: index)
        start = input.startTime
        buffer = Array(repeating: [], count: channels)
        av_channel_layout_default(&outputLayout, Int32(channels))
    }

    deinit {
        swr_free(&resampler)
        av_channel_layout_uninit(&outputLayout)
    }

    /// Fills `count` samples per channel, from sample index `start`, into `out[ch]`.
    /// Zeros before the stream's first sample and after its last.
    public func read(start: Int64, count: Int, into out: [UnsafeMutablePointer<Float>]) throws {
        precondition(out.count == channels, "read needs one buffer per output channel")
        guard count > 0 else { return }
        let end = start + Int64(count)
        let available = Int64(buffer[0].count - head)
        let known = aligned ? bufferStart : expectedStart
        let knownEnd = aligned ? bufferStart + available : expectedStart
        let jumpBack = start < known && !atStreamStart
        let jumpAhead = start > knownEnd + Int64(sampleRate) && !ended
        if jumpBack || jumpAhead { try seek(to: start) }

        while !ended && (!aligned || bufferStart + Int64(buffer[0].count - head) < end) {
            try decodeMore()
        }

        let bufferEnd = bufferStart + Int64(buffer[0].count - head)
        let lo = aligned ? max(start, bufferStart) : end
        let hi = aligned ? min(end, bufferEnd) : end
        for ch in 0..<channels {
            let dst = out[ch]
            if lo >= hi {
                dst.update(repeating: 0, count: count)
                continue
            }
            dst.update(repeating: 0, count: Int(lo - start))
            buffer[ch].withUnsafeBufferPointer { src in
                (dst + Int(lo - start)).update(from: src.baseAddress! + head + Int(lo - bufferStart), count: Int(hi - lo))
            }
            (dst + Int(hi - start)).update(repeating: 0, count: Int(end - hi))
        }
        if aligned { discard(before: min(start, bufferEnd)) }
    }

    /// Drops samples before index `index` (reads move forward; a read before them seeks).
    private func discard(before index: Int64) {
        let drop = Int(index - bufferStart)
        guard drop > 0 else { return }
        head += drop
        bufferStart = index
        atStreamStart = false
        if head > 1 << 16 && head > buffer[0].count / 2 {
            for ch in 0..<channels { buffer[ch].removeFirst(head) }
            head = 0
        }
    }

    private func seek(to index: Int64) throws {
        let target = index - preroll
        if target <= 0 {
            let stream = input.stream(decoder.streamIndex).pointee
            let first = stream.start_time != noPTS ? stream.start_time : (start / decoder.timeBase).floor
            // Aim a second before the first timestamp: demuxers then return the very first
            // packet, including priming packets with negative pts (AAC in MP4), so the
            // decoder warms up exactly as in a read from the top.
            try decoder.seek(to: first - (Rational.one / decoder.timeBase).ceil)
            atStreamStart = true
            expectedStart = 0
        } else {
            let seconds = Rational(target, Int64(sampleRate)) + start
            try decoder.seek(to: (seconds / decoder.timeBase).floor)
            atStreamStart = false
            expectedStart = target
        }
        for ch in 0..<channels { buffer[ch].removeAll(keepingCapacity: true) }
        head = 0
        aligned = false
        ended = false
        swr_free(&resampler)
    }

    private func decodeMore() throws {
        guard try decoder.next(into: frame) else {
            if resampler != nil { try resample(nil, count: 0) }
            ended = true
            return
        }
        if !aligned { try align(on: frame) }
        let data = UnsafeMutableRawPointer(frame.pointer.pointee.extended_data!).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
        try resample(data, count: Int(frame.pointer.pointee.nb_samples))
    }

    /// Sets up the resampler for the first frame after open/seek and fixes `bufferStart`.
    private func align(on frame: Frame) throws {
        let f = frame.pointer.pointee
        let inputRate = Int64(f.sample_rate)
        var inputLayout = AVChannelLayout()
        defer { av_channel_layout_uninit(&inputLayout) }
        if f.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC {
            av_channel_layout_default(&inputLayout, f.ch_layout.nb_channels)
        } else {
            var source = f.ch_layout
            try check(av_channel_layout_copy(&inputLayout, &source), "reading the channel layout of \(input.path)")
        }
        let what = "setting up the resampler for \(input.path)"
        try check(swr_alloc_set_opts2(&resampler, &outputLayout, AV_SAMPLE_FMT_FLTP, Int32(sampleRate),
                                      &inputLayout, AVSampleFormat(rawValue: f.format), f.sample_rate, 0, nil), what)
        try check(swr_init(resampler), what)

        // The first input sample's index, then back to the nearest input sample that lies
        // exactly on an output sample (inputRate/g input samples = outputRate/g output samples).
        let m: Int64
        if let ts = frame.timestamp {
            m = ((Rational(ts) * decoder.timeBase - start) * Rational(inputRate)).rounded
        } else {
            m = expectedStart * inputRate / Int64(sampleRate)
        }
        let g = greatestCommonDivisor(inputRate, Int64(sampleRate))
        let step = inputRate / g, outputStep = Int64(sampleRate) / g
        let pad = ((m % step) + step) % step
        bufferStart = (m - pad) / step * outputStep
        aligned = true
        if pad > 0 { try check(swr_inject_silence(resampler, Int32(pad)), what) }
    }

    /// Pushes `count` input samples (nil = flush) through the resampler into the buffer.
    private func resample(_ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, count: Int) throws {
        while true {
            let capacity = Int(swr_get_out_samples(resampler, Int32(count))) + 32
            var produced: Int32 = 0
            for ch in 0..<channels { buffer[ch].reserveCapacity(buffer[ch].count + capacity) }
            let scratch = UnsafeMutablePointer<Float>.allocate(capacity: capacity * channels)
            defer { scratch.deallocate() }
            var planes: [UnsafeMutablePointer<UInt8>?] = (0..<channels).map {
                UnsafeMutableRawPointer(scratch + $0 * capacity).assumingMemoryBound(to: UInt8.self)
            }
            produced = try planes.withUnsafeMutableBufferPointer { p in
                try check(swr_convert(resampler, p.baseAddress, Int32(capacity), data, Int32(count)), "resampling \(input.path)")
            }
            for ch in 0..<channels {
                buffer[ch].append(contentsOf: UnsafeBufferPointer(start: scratch + ch * capacity, count: Int(produced)))
            }
            // Input is consumed in one call; only a flush may need several to empty the filter.
            if data != nil || produced == 0 { return }
        }
    }
}

private func greatestCommonDivisor(_ a: Int64, _ b: Int64) -> Int64 {
    var a = a, b = b
    while b != 0 { (a, b) = (b, a % b) }
    return max(a, 1)
}
