import ReelCore

/// The plan's subtitle tracks as the finaliser writes them: one timed-text stream per track
/// (its language, title and default flag) and its samples in time order, handed to the writer
/// interleaved with the video and audio.
struct SubtitleMux {
    let streams: [SubtitleStreamDescription]
    /// Per stream, the samples not yet written, in time order.
    private var pending: [[EncodedPacket]]

    init(_ plan: RenderPlan) {
        let tracks = plan.subtitleTracks ?? []
        let fileType = plan.export.fileType.rawValue
        streams = tracks.map {
            SubtitleStreamDescription(language: $0.language.code(for: fileType), title: $0.title, isDefault: $0.isDefault)
        }
        pending = tracks.map { SubtitleStreamDescription.packets(SubtitleCue.flattened($0.cues), webVTT: fileType == FileType.webm.rawValue) }
    }

    /// Writes every pending sample that starts before `time` (seconds; nil: all of them).
    mutating func write(before time: Rational?, to writer: MovieWriter) throws {
        let limit = time.map { $0.scaled(to: 1000) }
        for stream in pending.indices {
            var written = 0
            for packet in pending[stream] {
                if let limit, packet.pts >= limit { break }
                try writer.write(subtitle: packet, stream: stream)
                written += 1
            }
            pending[stream].removeFirst(written)
        }
    }
}
