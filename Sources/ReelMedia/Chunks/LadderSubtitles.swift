import Foundation
import ReelCore

/// The subtitle tracks of an HLS ladder: one `SUBTITLES` rendition per track, written by the
/// finaliser from the plan's cues (no task renders them, so editing subtitles re-renders
/// nothing; the chunks' content keys do not cover them).
///
/// Each track gets a folder `subtitles-N` (`RenditionLadder.subtitleFolder`) with:
/// - one WebVTT segment per video segment (`seg-00001.vtt` …), covering exactly that segment's
///   time. Each starts with `X-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000` (RFC 8216 §3.5): cue
///   times are the programme's, and the video's first frame is at time 0 in its fragments
///   (`tfdt` 0; see `ChunkRenderer.renderLadder`). A cue is written in every segment it
///   overlaps, with its whole times, so a player that starts or seeks into the middle of a
///   cue shows it; players treat the copies (same times, same text) as one cue.
/// - `index.m3u8`, the media playlist, with the video's segment durations;
/// - `subtitles.vtt`, the whole track in one file, which the DASH manifest points at.
///
/// Times are written to the millisecond, WebVTT's precision. Cues are the plan's cues one at a
/// time (`SubtitleCue.flattened`), as the MP4 and WebM outputs write them, in plain text with
/// `&`, `<` and `>` escaped.
extension Finaliser {
    struct SubtitleRendition {
        var folder: String
        var track: PlannedSubtitleTrack
        /// Each segment's size in bytes and duration in seconds.
        var segments: [(bytes: Int, seconds: Double)]

        var peakBitRate: Int {
            Int((segments.map { Double($0.bytes * 8) / $0.seconds }.max() ?? 0).rounded(.up))
        }
        var averageBitRate: Int {
            let bytes = segments.reduce(0) { $0 + $1.bytes }, seconds = segments.reduce(0) { $0 + $1.seconds }
            return seconds == 0 ? 0 : Int((Double(bytes * 8) / seconds).rounded(.up))
        }
    }

    static let wholeSubtitleFile = "subtitles.vtt"
    static let subtitleTimestampMap = "X-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000"

    /// Writes every subtitle track of `plan` into `work`, segmented on the segments of `video`
    /// (a packaged video rendition).
    static func writeSubtitles(_ plan: RenderPlan, segments video: PackagedTrack, into work: URL) throws -> [SubtitleRendition] {
        let ranges = video.segments.map { segment in
            (start: Rational(Int64(segment.decodeTime), Int64(video.timescale)),
             end: Rational(Int64(segment.decodeTime + segment.ticks), Int64(video.timescale)))
        }
        return try (plan.subtitleTracks ?? []).enumerated().map { index, track in
            let folder = RenditionLadder.subtitleFolder(track: index)
            let directory = work.appendingPathComponent(folder)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let cues = SubtitleCue.flattened(track.cues).filter { $0.end.scaled(to: 1000) > $0.start.scaled(to: 1000) }
            var segments: [(bytes: Int, seconds: Double)] = []
            var playlist = ["#EXTM3U", "#EXT-X-VERSION:7",
                            "#EXT-X-TARGETDURATION:\(Int(video.segments.map { video.seconds($0) }.max()!.rounded(.up)))",
                            "#EXT-X-MEDIA-SEQUENCE:1", "#EXT-X-PLAYLIST-TYPE:VOD"]
            for (number, range) in ranges.enumerated() {
                let inside = cues.filter { $0.start < range.end && $0.end > range.start }
                let text = webVTT(inside, header: ["WEBVTT", subtitleTimestampMap])
                let name = String(format: "seg-%05d.vtt", number + 1)
                try write(text, to: directory.appendingPathComponent(name))
                let seconds = (range.end - range.start).seconds
                segments.append((text.utf8.count, seconds))
                playlist += [String(format: "#EXTINF:%.6f,", seconds), name]
            }
            playlist.append("#EXT-X-ENDLIST")
            try write(playlist.joined(separator: "\n") + "\n", to: directory.appendingPathComponent("index.m3u8"))
            try write(webVTT(cues, header: ["WEBVTT"]), to: directory.appendingPathComponent(wholeSubtitleFile))
            return SubtitleRendition(folder: folder, track: track, segments: segments)
        }
    }

    /// A WebVTT file: `header` lines, a blank line, then each cue (its timing line and text).
    static func webVTT(_ cues: [SubtitleCue], header: [String]) -> String {
        var text = header.joined(separator: "\n") + "\n"
        for cue in cues {
            // A blank line would end the cue: the lines of its text are kept, empty ones dropped.
            let lines = SubtitleStreamDescription.webVTTText(cue.text).split(separator: "\n", omittingEmptySubsequences: true)
            text += "\n\(webVTTTime(cue.start)) --> \(webVTTTime(cue.end))\n" + lines.joined(separator: "\n") + "\n"
        }
        return text
    }

    /// `HH:MM:SS.mmm`, rounded to the millisecond.
    static func webVTTTime(_ time: Rational) -> String {
        let ms = max(0, time.scaled(to: 1000))
        return String(format: "%02lld:%02lld:%02lld.%03lld", ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000)
    }

    /// `text` with the characters XML reserves escaped.
    static func xmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
