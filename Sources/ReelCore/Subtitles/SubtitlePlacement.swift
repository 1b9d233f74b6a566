extension SubtitleDocument {
    /// The cues of `source` (a range of the file's own time) placed on the timeline at `at`:
    /// file time `source.start + t` shows at `at + t`.
    ///
    /// A cue that overlaps the range is cut at its edges (one that starts before the range
    /// starts at `at`, one that ends after it ends at `at + source.duration`); a cue wholly
    /// outside the range is dropped. Inline timestamps move with their cue and are kept inside
    /// it (a timestamp before the cut start is reached at once, one after the cut end never).
    public func cues(in source: TimeRange, placedAt at: Rational) -> [SubtitleCue] {
        let shift = at - source.start
        return cues.compactMap { $0.clipped(to: source)?.shifted(by: shift) }
    }
}

extension SubtitleCue {
    /// The part of the cue inside `range`, or nil when they do not overlap.
    public func clipped(to range: TimeRange) -> SubtitleCue? {
        let s = max(start, range.start), e = min(end, range.end)
        guard s < e else { return nil }
        let kept = marks.map { SubtitleTimeMark(offset: $0.offset, time: min(max($0.time, s), e)) }
        return SubtitleCue(start: s, end: e, text: text, marks: kept)
    }

    /// The cue `delta` later.
    public func shifted(by delta: Rational) -> SubtitleCue {
        SubtitleCue(start: start + delta, end: end + delta, text: text,
                    marks: marks.map { SubtitleTimeMark(offset: $0.offset, time: $0.time + delta) })
    }
}
