/// What a render asks of agents, in the terms the farm's history is kept in (docs/farm.md,
/// "Estimates"): the encoder and its speed preset, the encoded picture's size, its frames, and
/// its effect load. Made from a render plan, before anything renders.
public struct RenderLoad: Codable, Sendable, Hashable {
    /// The libavcodec encoder of its video (`libx264`, `prores_ks`, …); empty when it has no picture.
    public var encoder: String
    /// The encoder's speed preset (x264's and x265's `medium`, `vp9-4`, `svtav1-8`; empty for
    /// ProRes and PNG, which have none).
    public var preset: String
    public var width: Int
    public var height: Int
    /// Frames it renders (`RenderPlan.frameCount`).
    public var frames: Int
    /// Layers drawn per frame, on average over its time: each video layer counts 1 and each of
    /// its filters 1 more, each composition filter, overlay and burned-in caption track 1; at
    /// least 1 (a frame is encoded even when nothing is drawn on it).
    public var effects: Double

    public init(encoder: String, preset: String, width: Int, height: Int, frames: Int, effects: Double) {
        self.encoder = encoder; self.preset = preset; self.width = width; self.height = height
        self.frames = frames; self.effects = effects
    }

    public init(plan: RenderPlan) {
        let video = plan.export.video
        let codec = video.videoCodec
        let preset: String
        switch codec {
        case .h264: preset = video.x264Preset
        case .hevc: preset = video.x265Preset ?? ""
        case .vp9: preset = video.vp9Speed.map { "vp9-\($0)" } ?? ""
        case .av1: preset = video.svtav1Preset.map { "svtav1-\($0)" } ?? ""
        case .prores, .png, nil: preset = ""
        }
        let duration = plan.duration.seconds
        var layerSeconds = 0.0
        for instruction in plan.instructions {
            let layers = instruction.layers.reduce(0) { $0 + 1 + $1.filters.count }
            layerSeconds += Double(layers) * instruction.timeRange.duration.seconds
        }
        let layers = duration > 0 ? layerSeconds / duration : 0
        let drawnAbove = plan.filters.count + plan.overlays.count + (plan.captions?.count ?? 0)
        self.init(encoder: plan.hasPicture ? codec?.encoderName ?? video.codec : "", preset: preset,
                  width: plan.outputSize.width, height: plan.outputSize.height, frames: plan.frameCount,
                  effects: max(1, layers + Double(drawnAbove)))
    }

    /// The work the model counts: frames × megapixels × effect load; 0 without a picture.
    public var work: Double { encoder.isEmpty ? 0 : Double(frames) * Double(width * height) / 1_000_000 * effects }
}
