import ReelCore
import ReelKernels

/// Draws frames of a `RenderPlan`: background, video layers bottom-up, overlays, then burned-in captions on top.
/// When the export writes alpha (`VideoExportSettings.writesAlpha`) the frame has an alpha plane:
/// everything is composited source-over on it, and the frame returned has straight alpha.
///
/// Rendering frame `k` depends only on the plan and `k` (sources are sought, not replayed),
/// so any range of frames can be rendered on its own — the unit of work of a chunk.
/// Used from one thread at a time; reuses one output buffer.
public final class FrameRenderer {
    public let plan: RenderPlan
    private let sources: SourcePool
    private let canvas: YUVImage
    /// Frames are rendered in order, so each lookup by time costs O(1).
    private var cursor: FrameCursor
    private let captions: CaptionPainter?
    /// The effect path's buffers and kernels, made for the first frame that needs them.
    private lazy var effectLayer = EffectLayer(width: canvas.width, height: canvas.height)
    private lazy var filters: FilterPipeline = {
        let sources = sources
        // The kernels read and write the frame in the output's matrix: filters and blend modes
        // compute on the output's own R'G'B', and each pixel's luma comes from its own result.
        return FilterPipeline(scale: plan.renderToOutput.a, matrix: plan.colour.space.matrix) { try sources.lut($0) }
    }()

    /// `media` gives the byte-range sources of assets this machine reads remotely.
    public init(plan: RenderPlan, media: MediaSources = .local, decoderThreads: Int = 1) {
        self.plan = plan
        self.sources = SourcePool(plan: plan, media: media, decoderThreads: decoderThreads)
        // An alpha plane only when the output writes alpha: opaque renders do no alpha work.
        self.canvas = YUVImage(width: plan.outputSize.width, height: plan.outputSize.height, hasAlpha: plan.export.video.writesAlpha)
        self.cursor = FrameCursor(plan: plan)
        self.captions = plan.captions == nil ? nil : CaptionPainter(plan: plan)
    }

    /// Frame `k`, valid until the next call.
    public func render(frame k: Int) throws -> YUVImage {
        let description = cursor.frame(k)
        Compositor.fill(canvas, color: description.background, conversion: sources.rgbConversion)
        for layer in description.layers where layer.opacity > 0 {
            let image = try sources.image(for: layer)
            if layer.hasEffects {
                try drawWithEffects(image, layer)
            } else {
                Compositor.draw(image, transform: layer.transform, opacity: layer.opacity, crop: layer.crop, onto: canvas)
            }
        }
        if !description.filters.isEmpty { try filters.apply(description.filters, to: canvas) }
        for overlay in description.overlays where overlay.opacity > 0 {
            let bitmap = try sources.overlayBitmap(overlay.index)
            Compositor.draw(bitmap, transform: overlay.transform, opacity: overlay.opacity, crop: nil, onto: canvas)
        }
        try captions?.paint(at: description.time, onto: canvas)
        // Composited premultiplied over black (Compositor); the encoder takes straight alpha.
        Compositor.unpremultiply(canvas)
        sources.endFrame()
        return canvas
    }

    /// A layer with filters or a blend mode: drawn into a buffer of its own as it would land
    /// on the frame, filtered there, then composited with its opacity and blend mode.
    private func drawWithEffects(_ image: YUVImage, _ layer: LayerDraw) throws {
        effectLayer.render(image, transform: layer.transform, crop: layer.crop)
        try filters.apply(layer.filters, to: effectLayer.buffer)
        Compositor.blend(effectLayer.buffer, onto: canvas, mode: layer.blendMode, opacity: layer.opacity, matrix: plan.colour.space.matrix)
    }
}
