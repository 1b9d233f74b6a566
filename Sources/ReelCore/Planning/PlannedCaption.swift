/// A caption track ready to draw: its cues on the composition timeline (a caption file's
/// times are composition times), its style with every default resolved, and the highlight.
///
/// Invariant: cues are sorted by start, each inside `[0, duration)` with `start < end`.
public struct PlannedCaption: Codable, Sendable, Hashable {
    public var cues: [SubtitleCue]
    public var style: PlannedCaptionStyle
    public var highlight: RGBAColor?

    public init(cues: [SubtitleCue], style: PlannedCaptionStyle, highlight: RGBAColor?) {
        self.cues = cues; self.style = style; self.highlight = highlight
    }
}

/// A caption style with its defaults resolved for a render size.
public struct PlannedCaptionStyle: Codable, Sendable, Hashable {
    /// fontconfig family (default `sans-serif`); missing glyphs fall back as in text overlays.
    public var font: String
    /// Pixels in render coordinates (default: the render height / 18, 40 at 720 lines).
    public var fontSize: Double
    /// Default white.
    public var color: RGBAColor
    /// Behind each line (default black at 60 %: `#00000099`); alpha 0 draws no box.
    public var backgroundColor: RGBAColor
    /// Default black.
    public var outlineColor: RGBAColor
    /// Pixels in render coordinates (default 0: no outline).
    public var outlineWidth: Double
    /// Default bottom.
    public var position: CaptionPosition
    /// Pixels in render coordinates from the bottom (or top) edge (default: 5 % of the height).
    public var margin: Double
    /// Fraction of the render width (default 0.9).
    public var maxWidth: Double

    public init(font: String, fontSize: Double, color: RGBAColor, backgroundColor: RGBAColor, outlineColor: RGBAColor,
                outlineWidth: Double, position: CaptionPosition, margin: Double, maxWidth: Double) {
        self.font = font; self.fontSize = fontSize; self.color = color; self.backgroundColor = backgroundColor
        self.outlineColor = outlineColor; self.outlineWidth = outlineWidth; self.position = position
        self.margin = margin; self.maxWidth = maxWidth
    }

    /// `style` with the defaults for a `renderSize` picture.
    public init(resolving style: CaptionStyle, renderSize: PixelSize) {
        let height = Double(renderSize.height)
        self.init(font: style.font ?? OverlayText.defaultFont,
                  fontSize: style.fontSize ?? (height / 18).rounded(),
                  color: style.color ?? .white,
                  backgroundColor: style.backgroundColor ?? RGBAColor(r: 0, g: 0, b: 0, a: 0x99),
                  outlineColor: style.outlineColor ?? .black,
                  outlineWidth: style.outlineWidth ?? 0,
                  position: style.position ?? .bottom,
                  margin: style.margin ?? (height * 0.05).rounded(),
                  maxWidth: style.maxWidth ?? 0.9)
    }
}
