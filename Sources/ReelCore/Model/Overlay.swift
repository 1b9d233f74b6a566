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

/// An animation of one overlay property: a `KeyframeAnimation` of its values (Core
/// Animation's keyframe or from/to form; see there for the timing rules).
///
/// Before `begin` the base value holds (rotation 0, scale 1, the overlay's opacity, the frame
/// origin). Rotation is in radians about the frame centre, positive = clockwise on screen
/// (y down); scale is uniform about the frame centre; position is the frame origin. When
/// several animations of one property have begun, the last one in the array wins.
public struct OverlayAnimation: Hashable, Sendable, Codable {
    /// The animated property with its animation.
    public enum Change: Hashable, Sendable, Codable {
        case rotation(KeyframeAnimation<Double>)
        case opacity(KeyframeAnimation<Double>)
        case position(KeyframeAnimation<Point>)
        case scale(KeyframeAnimation<Double>)
    }

    public var change: Change

    public init(change: Change) { self.change = change }

    /// Decodes the current form, or the from/to form plans were stored in before keyframes
    /// (`{"change": {"rotation": {"from", "to"}}, "duration", "begin", "repeats"}`), so a job
    /// planned before an upgrade still renders after it.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: LegacyKeys.self)
        guard let duration = try container.decodeIfPresent(Rational.self, forKey: .duration) else {
            change = try container.decode(Change.self, forKey: .change)
            return
        }
        let begin = try container.decode(Rational.self, forKey: .begin)
        let count: AnimationRepeat = try container.decode(Bool.self, forKey: .repeats) ? .forever : .once
        func basic<V>(_ from: V, _ to: V) -> KeyframeAnimation<V> { .fromTo(from, to, duration: duration, begin: begin, repeatCount: count) }
        switch try container.decode(LegacyChange.self, forKey: .change) {
        case .rotation(let from, let to): change = .rotation(basic(from, to))
        case .opacity(let from, let to): change = .opacity(basic(from, to))
        case .position(let from, let to): change = .position(basic(from, to))
        case .scale(let from, let to): change = .scale(basic(from, to))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: LegacyKeys.self)
        try container.encode(change, forKey: .change)
    }

    private enum LegacyKeys: String, CodingKey { case change, duration, begin, repeats }

    private enum LegacyChange: Decodable {
        case rotation(from: Double, to: Double)
        case opacity(from: Double, to: Double)
        case position(from: Point, to: Point)
        case scale(from: Double, to: Double)
    }

    /// When the animation starts, in composition time.
    public var begin: Rational {
        switch change {
        case .rotation(let a), .opacity(let a), .scale(let a): a.begin
        case .position(let a): a.begin
        }
    }

    /// The animation's timing problems at JSON path `path` (see `KeyframeAnimation.problems(at:)`).
    public func problems(at path: String) -> [Problem] {
        switch change {
        case .rotation(let a), .opacity(let a), .scale(let a): a.problems(at: path)
        case .position(let a): a.problems(at: path)
        }
    }

    /// The times the animation writes (`begin`, `duration`).
    public func writtenTimes(at path: String) -> [(path: String, time: Rational)] {
        switch change {
        case .rotation(let a), .opacity(let a), .scale(let a): a.writtenTimes(at: path)
        case .position(let a): a.writtenTimes(at: path)
        }
    }
}
