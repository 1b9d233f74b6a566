import ReelCore

/// Draws frames of a `RenderPlan`: background, video layers bottom-up, overlays, then burned-in captions on top.
///
/// Rendering frame `k` depends only on the plan and `k` (sources are sought, not replayed),
/// so any range of frames can be rendered on its own — the unit of work of a chunk.
/// Used from one thread at a time; reuses one output buffer.
public final class FrameRenderer {
    public let plan: RenderPlan
    private let sources: SourcePool
    private let canvas: YUVImage
    private let captions: CaptionPainter?

    /// `media` gives the byte-range sources of assets this machine reads remotely.
    public init(plan: RenderPlan, media: MediaSources = .local, decoderThreads: Int = 1) {
        self.plan = plan
        self.sources = SourcePool(plan: plan, media: media, decoderThreads: decoderThreads)
        self.canvas = YUVImage(width: plan.outputSize.width, height: plan.outputSize.height)
        self.captions = plan.captions == nil ? nil : CaptionPainter(plan: plan)
    }

    /// Frame `k`, valid until the next call.
    public func render(frame k: Int) throws -> YUVImage {
        let description = plan.frame(k)
        Compositor.fill(canvas, color: description.background)
        for layer in description.layers where layer.opacity > 0 {
            let image = try sources.image(for: layer)
            Compositor.draw(image, transform: layer.transform, opacity: layer.opacity, crop: layer.crop, onto: canvas)
        }
        for overlay in description.overlays where overlay.opacity > 0 {
            let bitmap = try sources.overlayBitmap(overlay.index)
            Compositor.draw(bitmap, transform: overlay.transform, opacity: overlay.opacity, crop: nil, onto: canvas)
        }
        try captions?.paint(at: description.time, onto: canvas)
        sources.endFrame()
        return canvas
    }
}
