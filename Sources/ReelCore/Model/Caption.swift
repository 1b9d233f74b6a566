/// `videoComposition.captions[]`: a subtitle file burned into the picture (docs/composition.md,
/// "Captions"). Every key of `style` is optional; the validator fills in the defaults.
public struct Caption: Hashable, Sendable, Codable {
    /// A subtitle asset (`.srt` or `.vtt`); its cues show at their own times.
    public var asset: String
    public var style: CaptionStyle
    /// With WebVTT inline timestamps: each word is painted in this colour from its time on.
    public var highlight: RGBAColor?

    public init(asset: String, style: CaptionStyle = CaptionStyle(), highlight: RGBAColor? = nil) {
        self.asset = asset; self.style = style; self.highlight = highlight
    }
}

/// Where captions sit.
public enum CaptionPosition: String, Hashable, Sendable, Codable, CaseIterable {
    case bottom, top
}

/// A caption style as written: nil means the default (`PlannedCaptionStyle`).
public struct CaptionStyle: Hashable, Sendable, Codable {
    public var font: String?
    /// Pixels in render coordinates.
    public var fontSize: Double?
    public var color: RGBAColor?
    public var backgroundColor: RGBAColor?
    public var outlineColor: RGBAColor?
    /// Pixels in render coordinates.
    public var outlineWidth: Double?
    public var position: CaptionPosition?
    /// Pixels in render coordinates between the caption and the frame's edge.
    public var margin: Double?
    /// The widest a caption line may be, as a fraction of the render width.
    public var maxWidth: Double?

    public init(font: String? = nil, fontSize: Double? = nil, color: RGBAColor? = nil, backgroundColor: RGBAColor? = nil,
                outlineColor: RGBAColor? = nil, outlineWidth: Double? = nil, position: CaptionPosition? = nil,
                margin: Double? = nil, maxWidth: Double? = nil) {
        self.font = font; self.fontSize = fontSize; self.color = color; self.backgroundColor = backgroundColor
        self.outlineColor = outlineColor; self.outlineWidth = outlineWidth; self.position = position
        self.margin = margin; self.maxWidth = maxWidth
    }
}
