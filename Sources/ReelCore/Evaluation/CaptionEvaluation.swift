/// One caption block to draw in a frame: the cues of caption `caption` on screen, and how
/// much of each the highlight has reached.
public struct CaptionDraw: Hashable, Sendable {
    /// Index into `RenderPlan.captions`.
    public var caption: Int
    /// Indices into the caption's cues, earliest start first (overlapping cues stack).
    public var cues: [Int]
    /// Per cue, the Unicode scalars of its text painted in the highlight colour (0 without one).
    public var reached: [Int]

    public init(caption: Int, cues: [Int], reached: [Int]) {
        self.caption = caption; self.cues = cues; self.reached = reached
    }
}

/// The cues of a plan's captions on screen at any time: a cue shows during `[start, end)`;
/// with a highlight colour, the text of a cue reaches each inline timestamp at its time
/// (`SubtitleCue.reachedScalars`). Pure and exact; a lookup is a binary search.
public struct CaptionTimeline: Sendable {
    private let captions: [PlannedCaption]
    /// Per caption, its cues' starts (sorted) and its longest cue.
    private let starts: [[Rational]]
    private let longest: [Rational]

    public init(_ plan: RenderPlan) {
        captions = plan.captions ?? []
        starts = captions.map { $0.cues.map(\.start) }
        longest = captions.map { $0.cues.map { $0.end - $0.start }.max() ?? .zero }
    }

    public var isEmpty: Bool { captions.allSatisfy(\.cues.isEmpty) }

    /// What to draw at composition `time`, in caption order (captions with nothing on screen left out).
    public func draws(at time: Rational) -> [CaptionDraw] {
        var out: [CaptionDraw] = []
        for (c, caption) in captions.enumerated() {
            // Cues starting at or before `time`: [0, upper).
            var lo = 0, hi = starts[c].count
            while lo < hi {
                let mid = (lo + hi) / 2
                if starts[c][mid] <= time { lo = mid + 1 } else { hi = mid }
            }
            var shown: [Int] = []
            var i = lo - 1
            // Only a cue that started less than the longest cue's length ago can still be showing.
            while i >= 0, starts[c][i] + longest[c] > time {
                if caption.cues[i].end > time { shown.append(i) }
                i -= 1
            }
            guard !shown.isEmpty else { continue }
            shown.reverse()
            let reached = shown.map { caption.highlight == nil ? 0 : caption.cues[$0].reachedScalars(at: time) }
            out.append(CaptionDraw(caption: c, cues: shown, reached: reached))
        }
        return out
    }
}
