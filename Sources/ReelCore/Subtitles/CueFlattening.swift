extension SubtitleCue {
    /// `cues` as a sequence that shows one text at a time, for formats whose samples cannot
    /// overlap (timed text in MP4): wherever cues overlap, the time is split where any of them
    /// starts or ends, and each piece shows the texts of every cue on screen then, earliest
    /// start first, one below the other. Cues that do not overlap come out unchanged (inline
    /// timestamps dropped; two touching cues with the same text become one). The result is sorted and its cues do not overlap.
    public static func flattened(_ cues: [SubtitleCue]) -> [SubtitleCue] {
        let sorted = cues.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
        let edges = Set(sorted.flatMap { [$0.start, $0.end] }).sorted()
        var out: [SubtitleCue] = []
        for (a, b) in zip(edges, edges.dropFirst()) {
            let showing = sorted.filter { $0.start <= a && $0.end >= b }
            guard !showing.isEmpty else { continue }
            let text = showing.map(\.text).joined(separator: "\n")
            if let last = out.last, last.end == a, last.text == text {
                out[out.count - 1].end = b
            } else {
                out.append(SubtitleCue(start: a, end: b, text: text))
            }
        }
        return out
    }
}
