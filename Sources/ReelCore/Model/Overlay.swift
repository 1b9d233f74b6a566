/// An image or a text drawn above the video (the `AVVideoCompositionCoreAnimationTool` role).
///
/// Decisions (documented in docs/composition.md, Overlays): exactly one of `"image"` (the id of a still asset) or
/// `"text"`; `frame` is required (render coordinates); `opacity` defaults to 1; `timeRange`
/// defaults to the whole composition; text keys `font` (a fontconfig family, default
/// `"sans-serif"`), `fontSize` (pixels in render coordinates, default 32), `color`
/// (default `#FFFFFF`) are only allowed with `text`.
public struct Overlay: Hashable, Sendable, Codable {
    public var content: OverlayContent
    /// Where the overlay is drawn, in render coordinates; animations move/scale/rotate it.
    public var frame: Rect
    /// Base opacity 0…1.
    public var opacity: Double
    /// When it is visible; nil = the whole composition.
    public var timeRange: TimeRange?
    public var animations: [OverlayAnimation]

    public init(content: OverlayContent, frame: Rect, opacity: Double = 1, timeRange: TimeRange? = nil,
                animations: [OverlayAnimation] = []) {
        self.content = content; self.frame = frame; self.opacity = opacity
        self.timeRange = timeRange; self.animations = animations
    }
}

/// What an overlay shows.
public enum OverlayContent: Hashable, Sendable, Codable {
    /// A still asset (by id), scaled into the frame.
    case image(asset: String)
    /// Text laid out inside the frame: left-aligned, wrapped, clipped.
    case text(OverlayText)
}

/// A text overlay's content and style.
public struct OverlayText: Hashable, Sendable, Codable {
    public var text: String
    /// fontconfig family name; missing glyphs fall back through fontconfig.
    public var font: String
    /// Pixels in render coordinates; must be > 0.
    /// Font sizes (pixels) accepted: FreeType renders every size in this range.
    public static let fontSizeRange: ClosedRange<Double> = 1...4096
    public var fontSize: Double
    public var color: RGBAColor

    public static let defaultFont = "sans-serif"
    public static let defaultFontSize = 32.0

    public init(text: String, font: String = OverlayText.defaultFont, fontSize: Double = OverlayText.defaultFontSize,
                color: RGBAColor = .white) {
        self.text = text; self.font = font; self.fontSize = fontSize; self.color = color
    }
}

/// A linear animation of one overlay property.
///
/// Decisions: `begin` is composition time (default 0); `duration` must be > 0. Before
/// `begin` the base value holds (rotation 0, scale 1, the overlay's opacity, the frame
/// origin); during `[begin, begin + duration)` the value goes linearly from `from` to `to`;
/// afterwards `to` holds, or, with `repeats`, the animation restarts from `from` every
/// `duration`. Rotation is in radians about the frame centre, positive = clockwise on
/// screen (y down); scale is uniform about the frame centre; position is the frame origin.
/// When several animations of one property have begun, the last one in the array wins.
public struct OverlayAnimation: Hashable, Sendable, Codable {
    /// The animated property with its end values.
    public enum Change: Hashable, Sendable, Codable {
        case rotation(from: Double, to: Double)
        case opacity(from: Double, to: Double)
        case position(from: Point, to: Point)
        case scale(from: Double, to: Double)
    }

    public var change: Change
    public var duration: Rational
    public var begin: Rational
    public var repeats: Bool

    public init(change: Change, duration: Rational, begin: Rational = .zero, repeats: Bool = false) {
        self.change = change; self.duration = duration; self.begin = begin; self.repeats = repeats
    }
}
