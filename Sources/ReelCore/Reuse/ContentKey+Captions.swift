extension RenderPlan {
    /// The captions drawn at `time`: for each block, its style and highlight and each cue's text
    /// with how far the highlight has reached. Nothing is written for a frame without a cue on
    /// screen (it is drawn exactly as without captions), so a chunk no cue touches keeps the key
    /// it has without captions.
    func write(captionsAt time: Rational, timeline: CaptionTimeline, to out: inout CanonicalEncoder) {
        let draws = timeline.draws(at: time)
        guard !draws.isEmpty else { return }
        out.write("captions", draws.count)
        for draw in draws {
            guard let caption = captions?[draw.caption] else { continue }
            let s = caption.style
            out.write("caption", draw.caption)
            out.write("font", s.font)
            out.write("fontSize", s.fontSize)
            out.write("color", s.color)
            out.write("backgroundColor", s.backgroundColor)
            out.write("outlineColor", s.outlineColor)
            out.write("outlineWidth", s.outlineWidth)
            out.write("position", s.position.rawValue)
            out.write("margin", s.margin)
            out.write("maxWidth", s.maxWidth)
            out.write("highlight", caption.highlight.map { "\($0.r),\($0.g),\($0.b),\($0.a)" } ?? "none")
            out.write("cues", draw.cues.count)
            for (cue, reached) in zip(draw.cues, draw.reached) {
                out.write("text", caption.cues[cue].text)
                out.write("reached", reached)
            }
        }
    }
}
