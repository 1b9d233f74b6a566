import CFFmpeg
import CRubberBand
import ReelCore

/// The audio of one speed-changed segment (`scaleTimeRange`), rendered whole: its source range
/// read at the export rate, then stretched to exactly the segment's length in output samples.
///
/// Always rendered from the start of the range to its end in one pass, whatever block of the
/// mix asked for it first, so every block, chunk and re-render sees the same samples.
///
/// - `.spectral`: Rubber Band in offline mode (it studies the whole range first), single
///   threaded so the result is deterministic; pitch is kept.
/// - `.varispeed`: swresample from `inputCount` to `outputCount` samples, band-limited like any
///   rate conversion; the pitch follows the speed.
enum SegmentStretcher {
    /// `channels` planes of `outputCount` samples each.
    static func render(source: AudioSampleSource, segment: PlannedSegment, algorithm: AudioTimePitchAlgorithm,
                       sampleRate: Int) throws -> [[Float]] {
        let sr = Int64(sampleRate)
        let inputStart = segment.sourceStart.scaled(to: sr)
        let inputCount = Int((segment.sourceStart + segment.sourceDuration).scaled(to: sr) - inputStart)
        let outputCount = Int((segment.at + segment.duration).scaled(to: sr) - segment.at.scaled(to: sr))
        let channels = source.channels
        guard inputCount > 0, outputCount > 0 else { return Array(repeating: Array(repeating: 0, count: max(outputCount, 0)), count: channels) }

        let input = PlanarBuffers(channels: channels, capacity: inputCount)
        try source.read(start: inputStart, count: inputCount, into: input.planes)

        var output: [[Float]]
        switch algorithm {
        case .spectral: output = try spectral(input, outputCount: outputCount, sampleRate: sampleRate)
        case .varispeed: output = try varispeed(input, outputCount: outputCount)
        }
        // Both give the length only to within a few samples: the segment's length is exact.
        for ch in 0..<channels {
            if output[ch].count > outputCount { output[ch].removeLast(output[ch].count - outputCount) }
            if output[ch].count < outputCount { output[ch].append(contentsOf: repeatElement(0, count: outputCount - output[ch].count)) }
        }
        return output
    }

    /// Rubber Band, offline: study everything, then process in blocks and collect the output.
    private static func spectral(_ input: PlanarBuffers, outputCount: Int, sampleRate: Int) throws -> [[Float]] {
        let channels = input.planes.count, inputCount = input.capacity
        let options = RubberBandOptionProcessOffline.rawValue | RubberBandOptionThreadingNever.rawValue
            | RubberBandOptionEngineFiner.rawValue | RubberBandOptionChannelsTogether.rawValue
        guard let state = rubberband_new(UInt32(sampleRate), UInt32(channels), RubberBandOptions(options),
                                         Double(outputCount) / Double(inputCount), 1.0) else {
            throw RenderError.internalInconsistency("Rubber Band could not be set up for \(channels) channels at \(sampleRate) Hz")
        }
        defer { rubberband_delete(state) }
        let block = 4096
        rubberband_set_expected_input_duration(state, UInt32(inputCount))
        rubberband_set_max_process_size(state, UInt32(block))

        var output = (0..<channels).map { _ in [Float]() }
        for ch in 0..<channels { output[ch].reserveCapacity(outputCount + block) }
        let scratch = PlanarBuffers(channels: channels, capacity: block)

        func drain() {
            while true {
                let available = Int(rubberband_available(state))
                guard available > 0 else { return }
                let targets: [UnsafeMutablePointer<Float>?] = scratch.planes
                let got = targets.withUnsafeBufferPointer { p in
                    Int(rubberband_retrieve(state, p.baseAddress, UInt32(min(available, block))))
                }
                guard got > 0 else { return }
                for ch in 0..<channels { output[ch].append(contentsOf: UnsafeBufferPointer(start: scratch.planes[ch], count: got)) }
            }
        }
        for study in [true, false] {
            var offset = 0
            while offset < inputCount {
                let n = min(block, inputCount - offset)
                let final: Int32 = offset + n == inputCount ? 1 : 0
                let planes: [UnsafePointer<Float>?] = input.planes.map { UnsafePointer($0 + offset) }
                planes.withUnsafeBufferPointer { p in
                    if study { rubberband_study(state, p.baseAddress, UInt32(n), final) }
                    else { rubberband_process(state, p.baseAddress, UInt32(n), final) }
                }
                offset += n
                if !study { drain() }
            }
        }
        // After the final block everything is available; -1 says all of it has been retrieved.
        while rubberband_available(state) > 0 { drain() }
        return output
    }

    /// swresample treating the range as `inputCount` samples that last as long as `outputCount`.
    private static func varispeed(_ input: PlanarBuffers, outputCount: Int) throws -> [[Float]] {
        let channels = input.planes.count, inputCount = input.capacity
        var g = inputCount, h = outputCount
        while h != 0 { (g, h) = (h, g % h) }
        let inRate = inputCount / g, outRate = outputCount / g
        guard inRate <= Int(Int32.max), outRate <= Int(Int32.max) else {
            throw RenderError.internalInconsistency("varispeed ratio \(inputCount):\(outputCount) is too large for the resampler")
        }
        var outLayout = AVChannelLayout(), inLayout = AVChannelLayout()
        av_channel_layout_default(&outLayout, Int32(channels))
        av_channel_layout_default(&inLayout, Int32(channels))
        defer { av_channel_layout_uninit(&outLayout); av_channel_layout_uninit(&inLayout) }
        var resampler: OpaquePointer?
        defer { swr_free(&resampler) }
        let what = "setting up the varispeed resampler (\(inputCount) → \(outputCount) samples)"
        try check(swr_alloc_set_opts2(&resampler, &outLayout, AV_SAMPLE_FMT_FLTP, Int32(outRate),
                                      &inLayout, AV_SAMPLE_FMT_FLTP, Int32(inRate), 0, nil), what)
        try check(swr_init(resampler), what)

        var output = (0..<channels).map { _ in [Float]() }
        let capacity = outputCount + 256
        let scratch = PlanarBuffers(channels: channels, capacity: capacity)
        var outPlanes: [UnsafeMutablePointer<UInt8>?] = scratch.planes.map { UnsafeMutableRawPointer($0).assumingMemoryBound(to: UInt8.self) }
        var inPlanes: [UnsafePointer<UInt8>?] = input.planes.map { UnsafePointer(UnsafeMutableRawPointer($0).assumingMemoryBound(to: UInt8.self)) }
        func convert(flush: Bool) throws {
            let n = try outPlanes.withUnsafeMutableBufferPointer { o in
                try inPlanes.withUnsafeMutableBufferPointer { i in
                    try check(swr_convert(resampler, o.baseAddress, Int32(capacity), flush ? nil : i.baseAddress,
                                          flush ? 0 : Int32(inputCount)), "resampling for varispeed")
                }
            }
            for ch in 0..<channels { output[ch].append(contentsOf: UnsafeBufferPointer(start: scratch.planes[ch], count: Int(n))) }
        }
        try convert(flush: false)
        try convert(flush: true)
        return output
    }
}
