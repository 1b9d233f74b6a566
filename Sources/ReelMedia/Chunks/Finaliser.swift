import CFFmpeg
import Foundation
import ReelCore

/// Joins a plan's video chunks by stream copy and muxes the audio into the output file. A plan
/// without a picture (`RenderPlan.hasPicture`) has no chunks: its output is the audio result's
/// packets alone, copied into the output's container.
///
/// Before writing anything it checks every chunk is present with its planned size and
/// SHA-256. While copying it checks each chunk has the first chunk's codec parameters and
/// extradata, codec, tag, size and pixel format (so the video is one stream), starts with a keyframe and holds exactly
/// its planned frame count, on the frame grid; any failure discards the temporary output. Timestamps are rebuilt from the planned frame
/// numbers: chunk-local frame `i` of a chunk starting at `a` becomes frame `a + i`.
/// Subtitle tracks are written here, whole, from the plan's cues (`SubtitleMux`): chunks never
/// cut them, so a cue that spans a chunk join comes out once with its exact times.
/// The output is written under a temporary name, fsynced and renamed: a crash or a failed
/// check never leaves a half file under the output name.
public enum Finaliser {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public struct Report: Sendable {
        public var frames: Int
        public var audioPackets: Int
        public var byteCount: Int
        /// What loudness normalisation did to each audio output, in order, as the audio result
        /// reports it (`LoudnessTag`); empty without normalisation.
        public var loudness: [LoudnessReport] = []
    }

    public static func finalise(_ plan: RenderPlan, chunks: [ChunkArtifact], audio: ChunkArtifact?, to outputPath: String) throws -> Report {
        if plan.export.ladder != nil { return try finaliseLadder(plan, chunks: chunks, audio: audio, to: outputPath) }
        if plan.export.fileType == .png {
            guard audio == nil else { throw Failure(description: "a PNG sequence holds no sound, but an audio result was given") }
            return try FrameSequenceFinaliser.finalise(plan, chunks: chunks, to: outputPath)
        }
        let ordered = chunks.sorted { $0.frames.start < $1.frames.start }
        if plan.hasPicture {
            try checkTiling(ordered, frameCount: plan.frameCount)
        } else if !ordered.isEmpty {
            throw Failure(description: "the output has no picture (sound only), but \(ordered.count) video chunk(s) were given")
        }
        for chunk in ordered + (audio.map { [$0] } ?? []) { try verifyBytes(chunk) }
        if plan.hasSound && audio == nil {
            throw Failure(description: "the plan has audio but no audio result was given")
        }
        guard plan.hasPicture || audio != nil else { throw Failure(description: "the plan has neither a picture nor sound") }

        // Each chunk is opened once: its parameters are checked against the first chunk's just
        // before its packets are copied (the output is a temporary file until the very end).
        let firstReader = try ordered.first.map { try PacketReader(path: $0.path, kind: "video") }
        let fd = plan.frameDuration
        let videoParameters = try firstReader.map {
            try $0.parameters.retimed(timeBase: fd, frameDuration: fd, alpha: plan.export.video.writesAlpha && plan.chunkFileType == .webm)
        }
        // One audio stream per audio output (`export.audioOutputs`), each tagged; a single mix as it is.
        let audioReaders = try audio.map { audio in
            try (0..<max(1, plan.audioStreamCount)).map { try PacketReader(path: audio.path, kind: "audio", ordinal: $0) }
        } ?? []
        let partial = AtomicFile.temporaryPath(for: outputPath)
        defer { unlink(partial) }
        var subtitles = SubtitleMux(plan)
        let fileType = plan.export.fileType.rawValue
        let outputs = plan.export.audioOutputs
        let audioStreams = audioReaders.enumerated().map { i, reader in
            AudioStreamDescription(parameters: reader.parameters, language: outputs?[i].language.code(for: fileType),
                                   title: outputs?[i].title, isDefault: outputs.map { _ in i == 0 })
        }
        let writer = try MovieWriter(path: partial, fileType: fileType, faststart: plan.export.optimizeForNetworkUse,
                                     video: videoParameters, audio: nil, audioStreams: audioStreams, subtitles: subtitles.streams)

        var audioPackets = 0
        var pendingAudio = try AudioStreamMerge(audioReaders)
        /// Writes audio and subtitle packets that start before `time` (seconds), keeping the file interleaved.
        func writeAudio(before time: Rational?) throws {
            while let next = pendingAudio.nextTime, time.map({ next < $0 }) ?? true, let (stream, packet) = try pendingAudio.next() {
                try writer.write(audio: packet, stream: stream)
                audioPackets += 1
            }
            try subtitles.write(before: time, to: writer)
        }

        var frames = 0
        for (index, chunk) in ordered.enumerated() {
            // Results are content-addressed, so identical chunks (a still held longer than a
            // chunk, a title card) share one file: every chunk gets a reader of its own.
            let reader = index == 0 ? firstReader! : try PacketReader(path: chunk.path, kind: "video")
            let reference = firstReader!.parameters, first = ordered[0]
            guard reader.parameters.extradata == reference.extradata, reader.parameters.streamShape == reference.streamShape else {
                let shapes = reader.parameters.streamShape == reference.streamShape ? "extradata differs"
                    : "\(reader.parameters.streamShape), not \(reference.streamShape)"
                throw Failure(description: "chunk \(chunk.frames) was encoded with different parameters than chunk \(first.frames) "
                              + "(\(shapes)): it cannot be joined without re-encoding; re-render it")
            }
            let tb = reader.parameters.timeBase
            var count = 0
            while var packet = try reader.next() {
                if count == 0 && !packet.isKeyframe {
                    throw Failure(description: "chunk \(chunk.frames) does not start with a keyframe; re-render it")
                }
                guard let pts = Self.frameNumber(packet.pts, timeBase: tb, frameDuration: fd),
                      let dts = Self.frameNumber(packet.dts, timeBase: tb, frameDuration: fd) else {
                    throw Failure(description: "chunk \(chunk.frames) has a timestamp off the frame grid (\(packet.pts) × \(tb))")
                }
                guard pts.num >= 0, pts.num < Int64(chunk.frames.count) else {
                    throw Failure(description: "chunk \(chunk.frames) has frame \(pts.num) outside its \(chunk.frames.count) frames")
                }
                packet.pts = pts.num + Int64(chunk.frames.start)
                packet.dts = dts.num + Int64(chunk.frames.start)
                packet.duration = 1
                try writeAudio(before: Rational(packet.dts) * fd)
                try writer.write(video: packet)
                count += 1
            }
            guard count == chunk.frames.count else {
                throw Failure(description: "chunk \(chunk.frames) holds \(count) frames, planned \(chunk.frames.count); re-render it")
            }
            frames += count
        }
        try writeAudio(before: nil)
        try writer.finish()
        try AtomicFile.commit(partial, to: outputPath)
        let size = (try? FileManager.default.attributesOfItem(atPath: outputPath)[.size]) as? Int ?? 0
        return Report(frames: frames, audioPackets: audioPackets, byteCount: size,
                      // Figures are for people: a result without readable ones never fails the job.
                      loudness: audio.map { (try? LoudnessTag.read(path: $0.path)) ?? [] } ?? [])
    }

    /// The frame a timestamp `t × timeBase` stands for: exact in MP4 and QuickTime chunks,
    /// whose time base divides the frame duration; within half a tick of a frame in WebM chunks
    /// (VP9 with alpha), whose millisecond ticks round a frame time of 1/30 s. Nil off the grid.
    static func frameNumber(_ t: Int64, timeBase: Rational, frameDuration: Rational) -> Rational? {
        let exact = Rational(t) * timeBase / frameDuration
        if exact.den == 1 { return exact }
        let nearest = Rational(Int64((Double(exact.num) / Double(exact.den)).rounded()))
        let error = (Rational(t) * timeBase - nearest * frameDuration)
        return (error < .zero ? .zero - error : error) * 2 <= timeBase ? nearest : nil
    }

    static func checkTiling(_ chunks: [ChunkArtifact], frameCount: Int) throws {
        var next = 0
        for chunk in chunks {
            guard chunk.kind == .video else { throw Failure(description: "an audio result was given as a video chunk") }
            guard chunk.frames.start == next else {
                throw Failure(description: chunk.frames.start > next
                    ? "frames [\(next), \(chunk.frames.start)) have no chunk" : "chunk \(chunk.frames) overlaps the chunk before it")
            }
            next = chunk.frames.end
        }
        guard next == frameCount else { throw Failure(description: "frames [\(next), \(frameCount)) have no chunk") }
    }

    static func verifyBytes(_ chunk: ChunkArtifact) throws {
        guard FileManager.default.fileExists(atPath: chunk.path) else {
            throw Failure(description: "the \(chunk.kind) result for frames \(chunk.frames) is missing (\(chunk.path))")
        }
        let (count, digest) = try FileDigest.sha256(path: chunk.path)
        guard count == chunk.byteCount, digest == chunk.sha256 else {
            throw Failure(description: "the \(chunk.kind) result for frames \(chunk.frames) is damaged: \(count) bytes, SHA-256 \(digest); "
                          + "expected \(chunk.byteCount) bytes, \(chunk.sha256)")
        }
    }
}

extension CodecParameters {
    /// The same codec parameters, for packets in another time base.
    /// With `alpha`, the stream is marked `yuva420p`, so the WebM muxer writes the track's
    /// AlphaMode (the chunks' demuxer leaves the pixel format unset) and players decode the
    /// BlockAdditional alpha the packets carry.
    func retimed(timeBase: Rational, frameDuration: Rational?, alpha: Bool = false) throws -> CodecParameters {
        let copy = try CodecParameters(copying: pointer, timeBase: timeBase, frameDuration: frameDuration)
        if alpha { copy.pointer.pointee.format = AV_PIX_FMT_YUVA420P.rawValue }
        return copy
    }
}
