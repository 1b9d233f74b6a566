/// A subtitle track after its segments were checked: its cues placed on the timeline (not
/// yet cut at the composition's end, which is known only once every track is checked).
struct CheckedSubtitleTrack {
    /// Position in `tracks` (for JSON paths).
    var index: Int
    var track: Track
    var cues: [SubtitleCue]
}

extension ValidationRun {
    /// One segment of a subtitle track: a subtitle asset, trimmed by `sourceRange` (default: the
    /// whole file, up to the end of its last cue) and placed `at`. A subtitle file has no
    /// length of its own, so a `sourceRange` may reach past its last cue.
    /// `start`: the segment's `at`, or where the previous segment ends when it has none.
    func checkSubtitleSegment(_ media: MediaSegment, start: Rational, at path: String) -> (range: TimeRange, cues: [SubtitleCue])? {
        var ok = true
        if start < .zero { report("\(path).at", "must be ≥ 0"); ok = false }
        guard composition.assets[media.asset] != nil else {
            report("\(path).asset", "unknown asset \"\(media.asset)\"")
            return nil
        }
        guard let asset = described[media.asset]?.description else { return nil }
        guard asset.kind == .subtitle, let document = asset.subtitles else {
            report("\(path).asset", "asset \"\(media.asset)\" is not a subtitle file (.srt or .vtt); a subtitle track holds subtitle files")
            return nil
        }
        if media.duration != nil {
            report("\(path).duration", "only for still images; trim a subtitle file with sourceRange")
            ok = false
        }
        let range = media.sourceRange ?? TimeRange(start: .zero, duration: document.end)
        if media.sourceRange != nil, !checkRange(range, at: "\(path).sourceRange") { ok = false }
        guard ok else { return nil }
        // A file without cues occupies nothing.
        guard range.duration > .zero else { return nil }
        return (TimeRange(start: start, duration: range.duration), document.cues(in: range, placedAt: start))
    }

    /// The subtitle tracks as planned: languages checked, at most one default, cues sorted and
    /// cut at the composition's end (subtitle tracks never lengthen a composition).
    func checkSubtitleTracks(_ checked: [CheckedSubtitleTrack], duration: Rational) -> [PlannedSubtitleTrack] {
        var planned: [PlannedSubtitleTrack] = []
        var firstDefault: Int?
        let whole = TimeRange(start: .zero, duration: duration)
        for entry in checked {
            let path = "tracks[\(entry.index)]"
            guard let options = entry.track.subtitle else { continue }
            if options.isDefault {
                if let firstDefault {
                    report("\(path).default", "tracks[\(firstDefault)] is already the default subtitle track; at most one can be")
                } else {
                    firstDefault = entry.index
                }
            }
            if let title = options.title, title.isEmpty { report("\(path).title", "must not be empty (leave it out instead)") }
            let language: LanguageTag
            switch LanguageTag.parse(options.language) {
            case .success(let tag): language = tag
            case .failure(let error): report("\(path).language", error.message); continue
            }
            let cues = entry.cues.compactMap { duration > .zero ? $0.clipped(to: whole) : nil }
                .enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
            planned.append(PlannedSubtitleTrack(id: entry.track.id, language: language, title: options.title,
                                                isDefault: options.isDefault, cues: cues))
        }
        return planned
    }
}
