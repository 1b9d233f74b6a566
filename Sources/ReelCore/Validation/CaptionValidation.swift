extension ValidationRun {
    /// `videoComposition.captions`: each a subtitle asset with a style in range; planned with
    /// the style's defaults for `renderSize` and the cues cut at the composition's end.
    func checkCaptions(duration: Rational, renderSize: PixelSize?) -> [PlannedCaption] {
        var planned: [PlannedCaption] = []
        for (index, caption) in (composition.videoComposition?.captions ?? []).enumerated() {
            let path = "videoComposition.captions[\(index)]"
            var ok = true
            var document: SubtitleDocument?
            if composition.assets[caption.asset] == nil {
                report("\(path).asset", "unknown asset \"\(caption.asset)\""); ok = false
            } else if let asset = described[caption.asset]?.description {
                if asset.kind == .subtitle { document = asset.subtitles } else {
                    report("\(path).asset", "asset \"\(caption.asset)\" is not a subtitle file (.srt or .vtt)"); ok = false
                }
            }
            let style = caption.style, stylePath = "\(path).style"
            if let font = style.font, font.isEmpty { report("\(stylePath).font", "must not be empty"); ok = false }
            if let size = style.fontSize, !OverlayText.fontSizeRange.contains(size) {
                report("\(stylePath).fontSize", "must be between \(Int(OverlayText.fontSizeRange.lowerBound)) and \(Int(OverlayText.fontSizeRange.upperBound)) pixels")
                ok = false
            }
            if let width = style.outlineWidth, !(0...Self.maximumOutlineWidth).contains(width) {
                report("\(stylePath).outlineWidth", "must be between 0 and \(Int(Self.maximumOutlineWidth)) pixels"); ok = false
            }
            if let margin = style.margin, margin < 0 || renderSize.map({ margin >= Double($0.height) }) == true {
                report("\(stylePath).margin", "must be ≥ 0 and less than the render height"); ok = false
            }
            if let maxWidth = style.maxWidth, !(maxWidth > 0 && maxWidth <= 1) {
                report("\(stylePath).maxWidth", "must be a fraction of the render width: more than 0, at most 1"); ok = false
            }
            guard ok, let document, let renderSize else { continue }
            let whole = TimeRange(start: .zero, duration: duration)
            let cues = document.cues.compactMap { duration > .zero ? $0.clipped(to: whole) : nil }
                .enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
            planned.append(PlannedCaption(cues: cues, style: PlannedCaptionStyle(resolving: style, renderSize: renderSize),
                                          highlight: caption.highlight))
        }
        return planned
    }

    /// Thicker outlines swallow the letters.
    static let maximumOutlineWidth = 64.0
}
