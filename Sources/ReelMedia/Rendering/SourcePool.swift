import ReelCore
import ReelKernels

/// Opens and keeps the decoded inputs one render needs: a frame-accurate reader per
/// (track, asset) pair, each still image once, each overlay's bitmap once.
///
/// Readers unused by the frame just drawn are closed, so a long concatenation of many clips
/// never holds more files open than the layers of one frame. Used from one thread at a time.
final class SourcePool {
    private let plan: RenderPlan
    private let media: MediaSources
    private let decoderThreads: Int
    private var readers: [ReaderKey: VideoFrameSource] = [:]
    private var usedThisFrame: Set<ReaderKey> = []
    private var stills: [String: YUVImage] = [:]
    private var overlayBitmaps: [Int: YUVImage] = [:]
    private var luts: [String: LUTKernel] = [:]
    private lazy var textRasterizer: Result<TextRasterizer, Error> = Result { try TextRasterizer() }

    private struct ReaderKey: Hashable { let track: Int; let asset: String }

    /// How R'G'B' (colours, text, captions) enters the frames: the output's matrix.
    let rgbConversion: ColorConversion

    init(plan: RenderPlan, media: MediaSources, decoderThreads: Int = 1) {
        self.plan = plan
        self.media = media
        self.decoderThreads = decoderThreads
        self.rgbConversion = ColorConversion(matrix: plan.colour.space.matrix)
    }

    /// The source image a layer shows at its source time.
    func image(for layer: LayerDraw) throws -> YUVImage {
        guard let asset = plan.assets[layer.asset] else {
            throw RenderError.internalInconsistency("layer refers to unplanned asset \(layer.asset)")
        }
        if asset.description.kind == .still {
            return try still(layer.asset, url: asset.url)
        }
        let key = ReaderKey(track: layer.trackID, asset: layer.asset)
        usedThisFrame.insert(key)
        if let reader = readers[key] { return try reader.frame(at: layer.sourceTime) }
        let reader = try VideoFrameSource(try media.location(of: asset.url), decoderThreads: decoderThreads, colour: plan.colour)
        readers[key] = reader
        return try reader.frame(at: layer.sourceTime)
    }

    /// Closes the readers the last frame did not use.
    func endFrame() {
        for key in readers.keys where !usedThisFrame.contains(key) { readers[key] = nil }
        usedThisFrame.removeAll(keepingCapacity: true)
    }

    /// The bitmap of overlay `index`: the still scaled later by the draw transform, or the text
    /// rasterised once at the plan's text raster scale.
    func overlayBitmap(_ index: Int) throws -> YUVImage {
        if let bitmap = overlayBitmaps[index] { return bitmap }
        let overlay = plan.overlays[index]
        let bitmap: YUVImage
        switch overlay.kind {
        case .image(let assetID):
            guard let asset = plan.assets[assetID] else {
                throw RenderError.internalInconsistency("overlay refers to unplanned asset \(assetID)")
            }
            bitmap = try still(assetID, url: asset.url)
        case .text(let text, let font, let fontSize, let color):
            let s = plan.textRasterScale
            let width = max(1, Int((overlay.frame.width * s).rounded(.up)))
            let height = max(1, Int((overlay.frame.height * s).rounded(.up)))
            let rgba = try textRasterizer.get().render(text: text, family: font, pixelSize: fontSize * s,
                                                       color: color, width: width, height: height)
            bitmap = rgba.pixels.withUnsafeBufferPointer {
                rgbConversion.yuvImage(rgba: $0.baseAddress!, width: rgba.width, height: rgba.height, stride: rgba.width * 4)
            }
        }
        overlayBitmaps[index] = bitmap
        return bitmap
    }

    /// The `.cube` table of a LUT asset, read once.
    func lut(_ id: String) throws -> LUTKernel {
        if let lut = luts[id] { return lut }
        guard let asset = plan.assets[id] else {
            throw RenderError.internalInconsistency("a lut filter refers to unplanned asset \(id)")
        }
        let lut = LUTKernel(try CubeLUTFile.load(try media.location(of: asset.url)))
        luts[id] = lut
        return lut
    }

    private func still(_ id: String, url: String) throws -> YUVImage {
        if let image = stills[id] { return image }
        let image = try StillImage.load(try media.location(of: url), colour: plan.colour)
        stills[id] = image
        return image
    }
}
