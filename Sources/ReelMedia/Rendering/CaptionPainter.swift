import ReelCore
import ReelKernels

/// Draws a plan's burned-in captions onto rendered frames: the blocks on screen at the frame's
/// time (`CaptionTimeline`), each rasterised once per state (cues shown, highlight reached) and
/// kept while it stays on screen, centred horizontally, `margin` from the bottom or top edge.
///
/// Only the caption's own pixels change: the block is transparent outside its line boxes and
/// glyphs, and a frame with no cue on screen is left exactly as it was. Used from one thread.
final class CaptionPainter {
    private let plan: RenderPlan
    private let timeline: CaptionTimeline
    private lazy var rasterizer: Result<TextRasterizer, Error> = Result { try TextRasterizer() }
    /// Blocks drawn in the last frame, with their place in output pixels.
    private var blocks: [CaptionDraw: (image: YUVImage, x: Int, y: Int)] = [:]

    init(plan: RenderPlan) {
        self.plan = plan
        timeline = CaptionTimeline(plan)
    }

    var isEmpty: Bool { timeline.isEmpty }

    func paint(at time: Rational, onto canvas: YUVImage) throws {
        let draws = timeline.draws(at: time)
        var kept: [CaptionDraw: (image: YUVImage, x: Int, y: Int)] = [:]
        for draw in draws {
            let block = try blocks[draw] ?? make(draw, canvas: canvas)
            kept[draw] = block
            Compositor.draw(block.image, transform: .translation(Double(block.x), Double(block.y)), opacity: 1, crop: nil, onto: canvas)
        }
        blocks = kept
    }

    private func make(_ draw: CaptionDraw, canvas: YUVImage) throws -> (image: YUVImage, x: Int, y: Int) {
        guard let caption = plan.captions?[draw.caption] else {
            throw RenderError.internalInconsistency("caption \(draw.caption) is not in the plan")
        }
        var text = "", lit: [Bool] = []
        for (cue, reached) in zip(draw.cues, draw.reached) {
            let cueText = caption.cues[cue].text
            if !text.isEmpty { text += "\n"; lit.append(false) }
            text += cueText
            let count = cueText.unicodeScalars.count
            lit += (0..<count).map { $0 < reached }
        }
        let scale = plan.textRasterScale
        let style = caption.style
        let maxWidth = max(2, Int((style.maxWidth * Double(plan.renderSize.width) * scale).rounded(.down)))
        let rgba = try rasterizer.get().renderCaption(text, lit: lit, style: style, highlight: caption.highlight,
                                                      scale: scale, maxWidth: min(maxWidth, canvas.width))
        let image = rgba.yuvImage(ColorConversion(matrix: plan.colour.space.matrix))
        // Even offsets keep the chroma samples of the block on the frame's 4:2:0 grid.
        let x = max(0, (canvas.width - rgba.width) / 2) & ~1
        let margin = Int((style.margin * scale).rounded())
        let y = style.position == .bottom ? max(0, canvas.height - margin - rgba.height) & ~1 : min(margin, canvas.height - 2) & ~1
        return (image, x, y)
    }
}
