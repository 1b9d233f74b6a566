import CFFmpeg
import Foundation
import ReelCore
import ReelKernels

/// The tasks of an HLS ladder (`RenderPlan.export.ladder`), on top of `ChunkRenderer`:
///
/// - a video chunk draws each of its frames once, scales it to every rendition's size
///   (swscale, bicubic, bit-exact flags) and encodes it with that rendition's own encoder, each
///   rendition on a thread of its own (`RenditionLanes`) while the next frame is drawn. Each
///   rendition's chunk is a fragmented MP4 with one fragment per segment, whose decode times
///   (`tfdt`) and sequence numbers are the job's, not the chunk's: the finaliser only moves
///   its fragments into segment files.
/// - the audio task mixes the whole programme once and writes it as a fragmented MP4 (AAC),
///   cut at the AAC frame nearest each segment boundary.
extension ChunkRenderer {
    /// Renders frames `frames` of a ladder plan into one fragmented MP4 per rendition, at
    /// `paths` (in the ladder's order; each written atomically). `progress` as in `renderVideo`.
    public static func renderLadder(_ plan: RenderPlan, frames: FrameRange, to paths: [String], encoderThreads: Int,
                                    media: MediaSources = .local,
                                    progress: ((Int) throws -> Void)? = nil,
                                    lastFrame: ((YUVImage) throws -> Void)? = nil) throws -> [ChunkArtifact] {
        guard let ladder = plan.export.ladder else { throw RenderError.io("renderLadder on a plan without an HLS ladder") }
        precondition(paths.count == ladder.renditions.count, "one path per rendition")
        precondition(frames.start % ladder.segmentFrames == 0, "a ladder chunk starts on a segment boundary")
        let renderer = FrameRenderer(plan: plan, media: media)
        let settings = plan.renditionEncoderSettings(threads: encoderThreads)
        let partials = paths.map { AtomicFile.temporaryPath(for: $0) }
        defer { for partial in partials { unlink(partial) } }
        let encoders = try settings.map { try VideoEncoder(settings: $0) }
        let writers = try zip(partials, encoders).map {
            try MovieWriter(path: $0, fileType: FileType.mp4.rawValue, faststart: false, video: $1, audio: nil, fragmented: true)
        }
        let scalers = settings.map { RenditionScaler(width: $0.width, height: $0.height) }
        /// Writes a packet, first ending the fragment before the IDR frame that opens a segment.
        func write(_ packets: [EncodedPacket], to writer: MovieWriter) throws {
            for packet in packets {
                if packet.isKeyframe, packet.pts > 0, packet.pts % Int64(ladder.segmentFrames) == 0 { try writer.cutFragment() }
                try writer.write(video: packet)
            }
        }
        // Each rendition scales, encodes and writes on a lane of its own while the next frame is drawn.
        let lanes = RenditionLanes(encoders.indices.map { index in
            { image, frame in
                let k = frames.start + frame
                let scaled = try scalers[index].scale(image, context: "scaling frame \(k) to rendition \(ladder.renditions[index].name)")
                try write(try encoders[index].encode(scaled, frameIndex: Int64(frame)), to: writers[index])
            }
        })
        defer { lanes.cancel() }
        for k in frames.start..<frames.end {
            let image = try renderer.render(frame: k)
            try lanes.submit(image)
            if k == frames.end - 1 { try lastFrame?(image) }
            try progress?(k - frames.start + 1)
        }
        try lanes.finish()
        var artifacts: [ChunkArtifact] = []
        for index in encoders.indices {
            try write(try encoders[index].finish(), to: writers[index])
            try writers[index].finish()
            // The job's decode times and sequence numbers, so segments from any chunk line up.
            try rebase(partials[index], firstSegment: frames.start / ladder.segmentFrames, startFrame: frames.start,
                       frameDuration: plan.frameDuration)
            try AtomicFile.commit(partials[index], to: paths[index])
            artifacts.append(try ChunkArtifact.measuring(kind: .video, frames: frames, path: paths[index],
                                                         rendition: ladder.renditions[index].name))
        }
        return artifacts
    }

    /// Rewrites a chunk's fragments in place: decode times shifted by `startFrame` frames,
    /// sequence numbers counted from `firstSegment + 1`.
    static func rebase(_ path: String, firstSegment: Int, startFrame: Int, frameDuration: Rational) throws {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let split = try FragmentedMP4.split(bytes)
        let timescale = try FragmentedMP4.timescale(initSegment: split.initSegment)
        let ticks = frameDuration * Rational(Int64(timescale)) * Rational(Int64(startFrame))
        guard ticks.den == 1 else {
            throw RenderError.io("the ladder's track timescale \(timescale) does not hold whole frames of \(frameDuration) s")
        }
        var out = split.initSegment
        for (index, fragment) in split.fragments.enumerated() {
            out += try FragmentedMP4.shifted(fragment, byTicks: Int(ticks.num), sequenceNumber: UInt32(firstSegment + index + 1))
        }
        try Data(out).write(to: URL(fileURLWithPath: path))
    }

    /// Renders a ladder's sound as fragmented MP4 (AAC) at `path`, whose fragments end at the
    /// AAC frame nearest each segment boundary: the whole mix, or with `export.audioOutputs`
    /// each output's own mix (`RenderPlan.audioMixPlans`), their files one after another in
    /// output order (each starts with its own `ftyp`; `FragmentedMP4.files` parts them). With
    /// `export.audio.loudness` every mix is normalised on its own, as for a single file
    /// (`NormalisedAudio` finds the gain and ceiling; the same encoding is then cut into
    /// fragments), and every mix's figures, in output order, go into the first file's `comment`
    /// tag (`LoudnessTag`).
    public static func renderLadderAudio(_ plan: RenderPlan, to path: String, media: MediaSources = .local) throws -> ChunkArtifact {
        guard plan.export.ladder != nil else { throw RenderError.io("renderLadderAudio on a plan without an HLS ladder") }
        let partial = AtomicFile.temporaryPath(for: path)
        let mixes = plan.audioMixPlans
        let parts = mixes.indices.map { "\(partial).output\($0).mp4" }
        defer {
            unlink(partial)
            parts.forEach { unlink($0) }
        }
        let reports = try mixes.map { try loudnessReport($0, measuringAt: partial + ".loudness", media: media) }
        let found = reports.compactMap { $0 }
        var bytes = Data()
        for (index, (mix, part)) in zip(mixes, parts).enumerated() {
            let metadata = index == 0 && !found.isEmpty ? ["comment": LoudnessTag.text(found)] : [:]
            try renderLadderMix(mix, to: part, media: media, report: reports[index], metadata: metadata)
            bytes += try Data(contentsOf: URL(fileURLWithPath: part))
        }
        try bytes.write(to: URL(fileURLWithPath: partial))
        try AtomicFile.commit(partial, to: path)
        return try ChunkArtifact.measuring(kind: .audio, frames: FrameRange(start: 0, end: plan.frameCount), path: path)
    }

    /// The gain and limiter ceiling that meet `plan`'s loudness target, found by normalising
    /// its mix into a plain file at `path` (removed after), or nil when the plan sets none.
    static func loudnessReport(_ plan: RenderPlan, measuringAt path: String, media: MediaSources) throws -> LoudnessReport? {
        guard let target = plan.export.audio.loudness else { return nil }
        let measured = path + ".\(plan.audioTaskContainer)"
        defer { unlink(measured) }
        _ = try NormalisedAudio.render(plan, target: target, to: measured, media: media)
        guard let found = try LoudnessTag.read(path: measured).first else { throw RenderError.io("the normalised mix carries no loudness report") }
        return found
    }

    /// One mix of a ladder's sound (see `renderLadderAudio`), normalised with `report`'s gain
    /// and ceiling when there is one, with `metadata` in the file.
    static func renderLadderMix(_ plan: RenderPlan, to path: String, media: MediaSources, report: LoudnessReport?,
                                metadata: [String: String]) throws {
        guard let ladder = plan.export.ladder else { throw RenderError.io("renderLadderAudio on a plan without an HLS ladder") }
        let mixer = AudioMixer(plan: plan, media: media)
        precondition(mixer.hasAudio, "renderLadderAudio on a plan without audio tracks")
        let encoder = try AudioEncoder(codec: .aac, sampleRate: mixer.sampleRate, channels: mixer.channels, bitRate: plan.export.audio.bitRate)
        let writer = try MovieWriter(path: path, fileType: FileType.mp4.rawValue, faststart: false, video: nil, audio: encoder.codecParameters,
                                     metadata: metadata, fragmented: true)
        let segment = ladder.segmentDuration * Rational(Int64(mixer.sampleRate))
        var nextCut = 1
        /// A packet of `n` samples starting at `pts` opens a new fragment when the boundary is nearer its start than its end.
        func write(_ packets: [EncodedPacket]) throws {
            for packet in packets {
                let boundary = segment * Rational(Int64(nextCut))
                if Rational(packet.pts) + Rational(packet.duration, 2) > boundary {
                    try writer.cutFragment()
                    nextCut += 1
                }
                try writer.write(audio: packet)
            }
        }
        if let report {
            try NormalisedAudio.process(mixer, gain: report.gain, ceiling: report.ceiling) { planes, count in
                try write(try encoder.encode(planar: planes, count: count))
            }
        } else {
            let feed = AudioFeed(mixer: mixer, encoder: encoder)
            try write(try feed.advance(to: mixer.sampleCount))
        }
        try write(try encoder.finish())
        try writer.finish()
    }
}

/// Scales 8-bit 4:2:0 pictures to one rendition's size with swscale (bicubic, accurate
/// rounding, bit-exact: the same picture always gives the same bytes). A picture already at
/// that size is passed through. Used from one thread at a time.
final class RenditionScaler {
    let width: Int
    let height: Int
    private var context: OpaquePointer?
    private var output: YUVImage?

    init(width: Int, height: Int) { self.width = width; self.height = height }
    deinit { sws_freeContext(context) }

    func scale(_ image: YUVImage, context what: @autoclosure () -> String) throws -> YUVImage {
        if image.width == width, image.height == height, !image.hasAlpha { return image }
        context = sws_getCachedContext(context, Int32(image.width), Int32(image.height), AV_PIX_FMT_YUV420P,
                                       Int32(width), Int32(height), AV_PIX_FMT_YUV420P, reel_sws_flags_exact(), nil, nil, nil)
        guard let context else {
            throw MediaError(code: .invalidArgument, message: "swscale cannot scale \(image.width)x\(image.height) to \(width)x\(height)",
                             context: what())
        }
        let out = output ?? YUVImage(width: width, height: height)
        output = out
        let source = PixelConverter.Planes(image: image), destination = PixelConverter.Planes(image: out)
        let src = source.data.prefix(3).map { UnsafePointer<UInt8>($0) } + [nil]
        let dst = destination.data.prefix(3) + [nil]
        let rows = sws_scale(context, src, Array(source.strides.prefix(3)) + [0], 0, Int32(image.height), Array(dst), Array(destination.strides.prefix(3)) + [0])
        if rows < 0 { throw MediaError.libav(rows, what()) }
        return out
    }
}
