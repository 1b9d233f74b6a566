/// Everything the compositor needs to draw output frame `index`, with all timing decided
/// exactly and all geometry folded into one transform per layer.
public struct FrameDescription: Sendable, Equatable {
    public var index: Int
    /// `index · frameDuration`, exact.
    public var time: Rational
    /// The active instruction's background.
    public var background: RGBAColor
    /// Draw order: bottom first (the reverse of the instruction's top-first list); only
    /// layers whose track has a segment at `time`.
    public var layers: [LayerDraw]
    /// Draw order (later on top), above all layers; only overlays visible at `time` with opacity > 0.
    public var overlays: [OverlayDraw]
    /// `videoComposition.filters` at `time`: applied to the composited layers, below the overlays.
    public var filters: [FilterDraw]

    public init(index: Int, time: Rational, background: RGBAColor, layers: [LayerDraw], overlays: [OverlayDraw], filters: [FilterDraw] = []) {
        self.index = index; self.time = time; self.background = background; self.layers = layers; self.overlays = overlays
        self.filters = filters
    }
}

/// One source picture to composite.
public struct LayerDraw: Sendable, Equatable {
    public var trackID: Int
    /// Asset id (into `RenderPlan.assets`).
    public var asset: String
    /// The source time to decode (0 for stills): `PlannedSegment.sourceTime(at:)`, exact.
    public var sourceTime: Rational
    /// From the source's ENCODED pixels to OUTPUT pixels: preferred/fit/explicit transform,
    /// ramps, and the render → output scale all folded in.
    public var transform: AffineTransform
    /// 0…1, source-over.
    public var opacity: Double
    /// Part of the source to use, in encoded source pixels; nil = all.
    public var crop: Rect?
    /// Evaluated at this frame; applied in order to the layer as drawn, before opacity and blending.
    public var filters: [FilterDraw]
    public var blendMode: BlendMode

    public init(trackID: Int, asset: String, sourceTime: Rational, transform: AffineTransform, opacity: Double, crop: Rect?,
                filters: [FilterDraw] = [], blendMode: BlendMode = .normal) {
        self.trackID = trackID; self.asset = asset; self.sourceTime = sourceTime
        self.transform = transform; self.opacity = opacity; self.crop = crop
        self.filters = filters; self.blendMode = blendMode
    }

    /// Whether the layer needs the effect path: drawn into a layer buffer of its own, filtered,
    /// then blended. Layers without filters in `normal` mode are drawn straight onto the frame.
    public var hasEffects: Bool { !filters.isEmpty || blendMode != .normal }
}

/// One overlay bitmap to composite.
public struct OverlayDraw: Sendable, Equatable {
    /// Index into `RenderPlan.overlays`.
    public var index: Int
    /// From the overlay bitmap's pixels to OUTPUT pixels (see `RenderPlan.overlayBitmapSize`).
    public var transform: AffineTransform
    /// 0…1 (animated opacity included).
    public var opacity: Double

    public init(index: Int, transform: AffineTransform, opacity: Double) {
        self.index = index; self.transform = transform; self.opacity = opacity
    }
}
