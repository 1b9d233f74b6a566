import Foundation
import ReelCore

/// The audio task of a plan with `export.audioOutputs`: each output's mix
/// (`RenderPlan.audioMixPlans`) rendered on its own, exactly as a plan with that one mix
/// would be (with its own loudness normalisation), then the encoded streams copied, in output
/// order and interleaved by time, into one result in the task's container
/// (`RenderPlan.audioTaskContainer`).
///
/// The task stays one task that sees every whole mix, so loudness is still measured over the
/// whole programme of each output. Languages, titles and the default disposition are not in the
/// result: the finaliser writes them from the plan. The result's `comment` tag (`LoudnessTag`)
/// holds every output's figures in order, which `reel status` shows.
enum AudioOutputStreams {
    static func render(_ plan: RenderPlan, to path: String, media: MediaSources) throws -> ChunkArtifact {
        let mixes = plan.audioMixPlans
        let partial = AtomicFile.temporaryPath(for: path)
        let parts = mixes.indices.map { "\(partial).output\($0).\(plan.audioTaskContainer)" }
        defer {
            unlink(partial)
            parts.forEach { unlink($0) }
        }
        for (mix, part) in zip(mixes, parts) { _ = try ChunkRenderer.renderAudio(mix, to: part, media: media) }
        let reports = try parts.flatMap { try LoudnessTag.read(path: $0) }
        try merge(parts, to: partial, fileType: plan.audioTaskContainer, metadata: reports.isEmpty ? [:] : ["comment": LoudnessTag.text(reports)])
        try AtomicFile.commit(partial, to: path)
        return try ChunkArtifact.measuring(kind: .audio, frames: FrameRange(start: 0, end: plan.frameCount), path: path)
    }

    /// Copies the first audio stream of each file of `sources` into one file at `path`, in that
    /// order, interleaved by decoding time.
    static func merge(_ sources: [String], to path: String, fileType: String, metadata: [String: String]) throws {
        let readers = try sources.map { try PacketReader(path: $0, kind: "audio") }
        let writer = try MovieWriter(path: path, fileType: fileType, faststart: false, video: nil, audio: nil,
                                     audioStreams: readers.map { AudioStreamDescription(parameters: $0.parameters) }, metadata: metadata)
        var streams = try AudioStreamMerge(readers)
        while let (stream, packet) = try streams.next() { try writer.write(audio: packet, stream: stream) }
        try writer.finish()
    }
}

/// Several audio streams' packets in one sequence, by decoding time (seconds), the earlier
/// stream first at equal times: what a muxer wants to keep a file interleaved.
struct AudioStreamMerge {
    private let readers: [PacketReader]
    private var pending: [EncodedPacket?]

    init(_ readers: [PacketReader]) throws {
        self.readers = readers
        pending = try readers.map { try $0.next() }
    }

    /// The start of the next packet, in seconds, or nil when every stream has ended.
    var nextTime: Rational? {
        pending.indices.compactMap { i in pending[i].map { Rational($0.dts) * readers[i].parameters.timeBase } }.min()
    }

    /// The next packet and the number of its stream, or nil at the end of every stream.
    mutating func next() throws -> (Int, EncodedPacket)? {
        var best: (index: Int, time: Rational)?
        for i in pending.indices {
            guard let packet = pending[i] else { continue }
            let time = Rational(packet.dts) * readers[i].parameters.timeBase
            if best == nil || time < best!.time { best = (i, time) }
        }
        guard let best else { return nil }
        let packet = pending[best.index]!
        pending[best.index] = try readers[best.index].next()
        return (best.index, packet)
    }
}
