extension Composition {
    /// Every time written in the composition, with its JSON path, in file order.
    var writtenTimes: [(path: String, time: Rational)] {
        var times: [(String, Rational)] = []
        func range(_ r: TimeRange, _ path: String) {
            times.append(("\(path).start", r.start))
            times.append(("\(path).duration", r.duration))
        }
        func ramps<V>(_ list: [RampSpec<V>], _ path: String) {
            for (i, ramp) in list.enumerated() { range(ramp.timeRange, "\(path)[\(i)].timeRange") }
        }
        for (t, track) in tracks.enumerated() {
            for (s, segment) in track.segments.enumerated() {
                let path = "tracks[\(t)].segments[\(s)]"
                switch segment {
                case .empty(let r):
                    range(r, "\(path).empty")
                case .media(let m):
                    if let at = m.at { times.append(("\(path).at", at)) }
                    if let r = m.sourceRange { range(r, "\(path).sourceRange") }
                    if let d = m.duration { times.append(("\(path).duration", d)) }
                }
            }
        }
        for (m, mix) in audioMix.enumerated() { ramps(mix.volumeRamps, "audioMix[\(m)].volumeRamps") }
        /// The begin and duration of every animated filter parameter.
        func filters(_ list: [LayerFilter], _ path: String) {
            for (f, filter) in list.enumerated() {
                for (key, parameter) in filter.parameters { times += parameter.writtenTimes(at: "\(path)[\(f)].\(key)") }
            }
        }
        if let vc = videoComposition {
            if let fd = vc.frameDuration { times.append(("videoComposition.frameDuration", fd)) }
            filters(vc.filters, "videoComposition.filters")
            for (i, instruction) in (vc.instructions ?? []).enumerated() {
                let path = "videoComposition.instructions[\(i)]"
                range(instruction.timeRange, "\(path).timeRange")
                for (l, layer) in instruction.layerInstructions.enumerated() {
                    ramps(layer.opacityRamps, "\(path).layerInstructions[\(l)].opacityRamps")
                    ramps(layer.transformRamps, "\(path).layerInstructions[\(l)].transformRamps")
                    ramps(layer.cropRectangleRamps, "\(path).layerInstructions[\(l)].cropRectangleRamps")
                    filters(layer.filters, "\(path).layerInstructions[\(l)].filters")
                }
            }
            for (o, overlay) in vc.overlays.enumerated() {
                let path = "videoComposition.overlays[\(o)]"
                if let r = overlay.timeRange { range(r, "\(path).timeRange") }
                for (a, animation) in overlay.animations.enumerated() {
                    times += animation.writtenTimes(at: "\(path).animations[\(a)]")
                }
            }
        }
        if let gop = export.video.gopDuration { times.append(("export.video.gopDuration", gop)) }
        return times
    }
}

extension ValidationRun {
    /// Checks that every written time lies in `TimeDomain` and that together they keep one
    /// timescale ≤ 2³². Returns false when any does not: the rest of validation is skipped,
    /// because its arithmetic would no longer be exact (and its messages would be noise).
    func checkWrittenTimes() -> Bool {
        var ok = true
        for (path, time) in composition.writtenTimes {
            if let problem = TimeDomain.problem(with: time) {
                report(path, problem)
                ok = false
            } else if !timescale.include(time) {
                report(path, "the fraction \(time) cannot be combined exactly with this composition's other times "
                       + "(their common denominator would exceed \(TimeDomain.maximumTimescale)); "
                       + "write it with at most 6 decimals or with a denominator the other times share")
                ok = false
            }
        }
        return ok
    }

    /// Adds a time that comes from a source file (a whole asset's duration, the sources'
    /// frame duration) to the composition's timescale; reports `message` at `path` if it cannot join.
    @discardableResult
    func includeDerivedTime(_ time: Rational, at path: String, _ message: @autoclosure () -> String) -> Bool {
        if TimeDomain.contains(time) && timescale.include(time) { return true }
        report(path, message())
        return false
    }

    /// Without a written `frameDuration`, the sources' common one (§3.2) joins the timescale
    /// before any asset duration does, so an asset with an odd time base is what gets named.
    func includeDefaultFrameDuration() {
        guard composition.videoComposition?.frameDuration == nil else { return }
        let sources = composition.tracks.filter { $0.mediaType == .video }.flatMap(\.segments).compactMap { segment -> AssetDescription? in
            guard case .media(let media) = segment else { return nil }
            return described[media.asset]?.description
        }
        let frameDuration = RenderDefaults.frameDuration(of: sources)
        guard frameDuration >= RenderLimits.minimumFrameDuration else { return } // reported with the video composition
        includeDerivedTime(frameDuration, at: "videoComposition.frameDuration",
                           "the sources' frame duration \(TimeFormatting.seconds(frameDuration)) cannot be combined exactly with this composition's times; set frameDuration")
    }
}
