/// One video chunk of a job, as the preview of a render in progress sees it.
public struct PreviewChunk: Sendable, Hashable {
    /// The chunk's ordinal among the job's video chunks (0, 1, …): its segment is `preview/ORDINAL.m4s`.
    public var ordinal: Int
    /// The plan's frames the chunk holds.
    public var frames: FrameRange
    /// Whether its result is stored (the task is done).
    public var finished: Bool

    public init(ordinal: Int, frames: FrameRange, finished: Bool) {
        self.ordinal = ordinal; self.frames = frames; self.finished = finished
    }
}

/// The HLS media playlist of a job's preview (`GET /api/v1/jobs/{id}/preview.m3u8`): one fMP4
/// segment per video chunk, in frame order, always with `EXT-X-ENDLIST`.
///
/// - While the job runs, it lists **every planned chunk**, finished or not: the job's whole
///   timeline, known from the plan. A player plays it as a video on demand from the first chunk,
///   and the route of a segment not rendered yet answers once it is, so the player waits there
///   as it would for a slow network. (A playlist without `EXT-X-ENDLIST` would be a live stream
///   to a player: Chromium starts one at its last three segments and gives up when it does not
///   grow in real time, which a render rarely does.)
/// - Once the job has ended, it lists the finished chunks in frame order **up to the first
///   unfinished one**: for a done job, the whole picture; for a failed or cancelled one, what
///   finished before the first hole, so a player never meets one.
///
/// Pure: the caller says which chunks are finished and whether the job has ended (and may cut
/// an ended job's list shorter with `playableCount`, e.g. at a chunk whose codec parameters
/// differ from the first one's). Invariants: listed segments are a prefix of the chunks by frame
/// order, each finished once the job has ended; `targetDuration` depends on every planned chunk.
public struct PreviewPlaylist: Sendable, Hashable {
    /// The chunks listed, in frame order.
    public private(set) var segments: [PreviewChunk]
    /// Seconds per frame of the plan.
    public let frameDuration: Rational
    /// `EXT-X-TARGETDURATION`: the longest planned chunk in whole seconds, rounded up (at least 1).
    public let targetDuration: Int64
    /// Whether the job has ended: only finished chunks are listed then.
    public let ended: Bool

    /// - Parameters:
    ///   - chunks: every video chunk of the job, in any order.
    ///   - ended: whether the job has ended (done, failed or cancelled).
    ///   - playableCount: at most this many leading chunks are listed.
    public init(chunks: [PreviewChunk], frameDuration: Rational, ended: Bool, playableCount: Int? = nil) {
        precondition(frameDuration > .zero, "a plan's frame duration is positive")
        let ordered = chunks.sorted { $0.frames.start < $1.frames.start }
        var listed: [PreviewChunk] = []
        var next = ordered.first?.frames.start ?? 0
        for chunk in ordered {
            // A gap or an overlap in the frames would be a broken plan: stop there too.
            guard chunk.finished || !ended, chunk.frames.start == next, listed.count < (playableCount ?? .max) else { break }
            listed.append(chunk)
            next = chunk.frames.end
        }
        segments = listed
        self.frameDuration = frameDuration
        self.ended = ended
        let longest = ordered.map { frameDuration * $0.frames.count }.max() ?? .one
        targetDuration = max(1, longest.ceil)
    }

    /// The segment's duration in seconds.
    public func duration(of chunk: PreviewChunk) -> Rational { frameDuration * chunk.frames.count }

    /// The seconds of video listed.
    public var listedSeconds: Rational { segments.reduce(.zero) { $0 + duration(of: $1) } }

    /// The playlist's text. Segment and init URIs are relative to the playlist
    /// (`preview/init.mp4`, `preview/N.m4s`); with `token`, each carries `?token=` (percent-encoded),
    /// since a media element fetching them cannot send an `Authorization` header.
    public func text(token: String? = nil) -> String {
        let query = token.map { "?token=" + Self.percentEncoded($0) } ?? ""
        var lines = [
            "#EXTM3U",
            "#EXT-X-VERSION:7",
            "#EXT-X-TARGETDURATION:\(targetDuration)",
            "#EXT-X-MEDIA-SEQUENCE:0",
            "#EXT-X-INDEPENDENT-SEGMENTS",
        ]
        // The init segment is made from the first chunk (its route waits for it while it renders).
        if !segments.isEmpty { lines.append("#EXT-X-MAP:URI=\"preview/init.mp4\(query)\"") }
        for segment in segments {
            lines.append("#EXTINF:\(Self.decimal(duration(of: segment), places: 6)),")
            lines.append("preview/\(segment.ordinal).m4s\(query)")
        }
        // No segment is ever added: the playlist is a video on demand, not a live stream.
        lines.append("#EXT-X-ENDLIST")
        return lines.joined(separator: "\n") + "\n"
    }

    /// `value` (≥ 0) with exactly `places` decimals, rounded half up, computed exactly.
    static func decimal(_ value: Rational, places: Int) -> String {
        precondition(value >= .zero && places > 0)
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let scaled = (value.num * scale * 2 + value.den) / (value.den * 2)
        let whole = scaled / scale, fraction = String(scaled % scale)
        return "\(whole)." + String(repeating: "0", count: places - fraction.count) + fraction
    }

    /// RFC 3986 percent-encoding of everything but the unreserved characters.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".unicodeScalars)
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(digits[Int(byte >> 4)])
                out.unicodeScalars.append(digits[Int(byte & 0x0F)])
            }
        }
        return out
    }
}
