extension RenderPlan {
    /// Composition time of frame `k`: `k · frameDuration`, exact.
    public func time(ofFrame k: Int) -> Rational { frameDuration * k }

    /// What to draw for output frame `k` (0 ≤ k < frameCount).
    ///
    /// The active instruction is the one whose range contains the frame's time; layers are
    /// listed bottom first and only where their track has a segment at that time; overlays
    /// follow in array order, only while visible and not fully transparent.
    public func frame(_ k: Int) -> FrameDescription {
        let time = time(ofFrame: k)
        let instruction = instruction(at: time)
        let toOutput = renderToOutput
        var layers: [LayerDraw] = []
        for layer in (instruction?.layers ?? []).reversed() {
            guard let track = videoTracks.first(where: { $0.id == layer.trackID }),
                  let segment = track.segment(at: time),
                  let asset = assets[segment.asset]?.description,
                  let video = asset.video else { continue }
            let base: AffineTransform
            switch layer.transform {
            case .preferred: base = video.preferredTransform
            case .fit: base = RenderDefaults.fitTransform(video, into: renderSize)
            case .fill: base = RenderDefaults.fillTransform(video, into: renderSize)
            case .explicit(let t): base = t
            }
            let placed = RampedValue.value(at: time, base: base, ramps: layer.transformRamps)
            layers.append(LayerDraw(
                trackID: layer.trackID,
                asset: segment.asset,
                sourceTime: asset.kind == .still ? .zero : segment.sourceTime(at: time),
                transform: placed.concatenating(toOutput),
                opacity: RampedValue.value(at: time, base: layer.opacity, ramps: layer.opacityRamps),
                crop: RampedValue.value(at: time, base: layer.crop, ramps: layer.cropRamps),
                filters: layer.filters.map { $0.evaluated(at: time) },
                blendMode: layer.blendMode))
        }
        let overlayDraws = overlays.indices.compactMap { overlayDraw($0, at: time) }
        return FrameDescription(index: k, time: time, background: instruction?.backgroundColor ?? .black,
                                layers: layers, overlays: overlayDraws, filters: filters.map { $0.evaluated(at: time) })
    }

    /// The instruction whose range contains `time` (the last one for times at or past the end).
    public func instruction(at time: Rational) -> PlannedInstruction? {
        instructions.first { $0.timeRange.contains(time) } ?? instructions.last
    }
}
