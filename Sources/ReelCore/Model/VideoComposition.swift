/// `AVMutableVideoComposition`: render size, frame rate, instructions and overlays.
/// Each nil field takes its default (docs/composition.md, "Defaults") when the plan is built.
public struct VideoComposition: Hashable, Sendable, Codable {
    public var renderSize: PixelSize?
    public var frameDuration: Rational?
    /// nil = one default instruction over the whole duration (§3.2); when present they must
    /// tile `[0, duration)` exactly.
    public var instructions: [Instruction]?
    /// Drawn above all video layers, in array order (later on top).
    public var overlays: [Overlay]
    /// Applied in order to the composited picture (background and layers), below the overlays.
    public var filters: [LayerFilter]
    /// Subtitle files burned in, above the overlays, in array order.
    public var captions: [Caption]
    /// The output's colour (docs/colour.md); nil = BT.709.
    public var colorPrimaries: CompositionColorPrimaries?
    public var colorTransferFunction: CompositionTransferFunction?
    public var colorYCbCrMatrix: CompositionYCbCrMatrix?
    /// How HDR sources are brought into the output; nil = BT.2390 with ffmpeg's defaults.
    public var toneMapping: ToneMapping?
    /// HDR outputs: the mastering display (SMPTE ST 2086); nil = P3, D65, 1000 cd/m².
    public var masteringDisplay: MasteringDisplay?
    /// HDR outputs: MaxCLL and MaxFALL (CTA-861.3); nil = unknown (0, 0).
    public var contentLightLevel: ContentLightLevel?

    public init(renderSize: PixelSize? = nil, frameDuration: Rational? = nil,
                instructions: [Instruction]? = nil, overlays: [Overlay] = [], filters: [LayerFilter] = [], captions: [Caption] = [],
                colorPrimaries: CompositionColorPrimaries? = nil, colorTransferFunction: CompositionTransferFunction? = nil,
                colorYCbCrMatrix: CompositionYCbCrMatrix? = nil, toneMapping: ToneMapping? = nil,
                masteringDisplay: MasteringDisplay? = nil, contentLightLevel: ContentLightLevel? = nil) {
        self.renderSize = renderSize; self.frameDuration = frameDuration
        self.instructions = instructions; self.overlays = overlays; self.filters = filters; self.captions = captions
        self.colorPrimaries = colorPrimaries; self.colorTransferFunction = colorTransferFunction
        self.colorYCbCrMatrix = colorYCbCrMatrix; self.toneMapping = toneMapping
        self.masteringDisplay = masteringDisplay; self.contentLightLevel = contentLightLevel
    }
}

/// `AVMutableVideoCompositionInstruction`: what to draw during `timeRange`.
public struct Instruction: Hashable, Sendable, Codable {
    public var timeRange: TimeRange
    /// Default opaque black.
    public var backgroundColor: RGBAColor
    /// First = topmost.
    public var layerInstructions: [LayerInstruction]

    public init(timeRange: TimeRange, backgroundColor: RGBAColor = .black, layerInstructions: [LayerInstruction] = []) {
        self.timeRange = timeRange; self.backgroundColor = backgroundColor; self.layerInstructions = layerInstructions
    }
}

/// How a layer's source pixels map to render coordinates, as written in the file.
public enum TransformSetting: Hashable, Sendable, Codable {
    /// The source's own display matrix (upright, natural size, at the origin).
    case preferred
    /// The preferred transform, then scaled (aspect kept) to fit inside the render size and
    /// centred: letterbox or pillarbox bars show what is below.
    case fit
    /// The preferred transform, then scaled (aspect kept) to cover the render size and
    /// centred: the overhang is cropped.
    case fill
    /// An explicit CGAffineTransform from encoded source pixels to render coordinates.
    case matrix(AffineTransform)
}

/// `AVMutableVideoCompositionLayerInstruction` for one video track.
public struct LayerInstruction: Hashable, Sendable, Codable {
    /// Id of a video track.
    public var track: Int
    /// Default `.preferred` (no fitting inside an explicit instruction: docs/composition.md, "Transforms").
    public var transform: TransformSetting
    public var transformRamps: [RampSpec<AffineTransform>]
    /// Base opacity 0…1, default 1.
    public var opacity: Double
    public var opacityRamps: [RampSpec<Double>]
    /// Part of the source (encoded pixel coordinates) to show; nil = all of it.
    public var cropRectangle: Rect?
    /// `setCropRectangleRamp`: linear changes of the crop rectangle.
    public var cropRectangleRamps: [RampSpec<Rect>]
    /// Applied in order to the layer's picture as drawn in render space (after its transform
    /// and crop), before its opacity and blending.
    public var filters: [LayerFilter]
    /// How the filtered layer combines with the layers below it; default `.normal` (source-over).
    public var blendMode: BlendMode

    public init(track: Int, transform: TransformSetting = .preferred, transformRamps: [RampSpec<AffineTransform>] = [],
                opacity: Double = 1, opacityRamps: [RampSpec<Double>] = [], cropRectangle: Rect? = nil,
                cropRectangleRamps: [RampSpec<Rect>] = [], filters: [LayerFilter] = [], blendMode: BlendMode = .normal) {
        self.track = track; self.transform = transform; self.transformRamps = transformRamps
        self.opacity = opacity; self.opacityRamps = opacityRamps; self.cropRectangle = cropRectangle
        self.cropRectangleRamps = cropRectangleRamps
        self.filters = filters; self.blendMode = blendMode
    }
}
