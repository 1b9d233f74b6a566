/// The video side of the plan after validation, with §3.2 defaults applied.
struct CheckedVideo {
    var renderSize: PixelSize
    var frameDuration: Rational
    var instructions: [PlannedInstruction]
    var overlays: [PlannedOverlay]
    var filters: [LayerFilter]
}

extension ValidationRun {
    func checkVideoComposition(tracks: CheckedTracks, duration: Rational) -> CheckedVideo? {
        let vc = composition.videoComposition ?? VideoComposition()
        let path = "videoComposition"
        let videoSources = tracks.video.flatMap { $0.segments.compactMap { described[$0.asset]?.description } }

        var renderSize: PixelSize?
        if let size = vc.renderSize {
            checkDimension(size.width, at: "\(path).renderSize.width")
            checkDimension(size.height, at: "\(path).renderSize.height")
            renderSize = size
        } else if let size = RenderDefaults.renderSize(displaying: videoSources.compactMap(\.video)) {
            if max(size.width, size.height) > RenderDefaults.maximumDimension {
                report("\(path).renderSize", "the sources' size \(size) exceeds \(RenderDefaults.maximumDimension); give a smaller renderSize")
            }
            renderSize = size
        } else if !composition.hasPicture {
            // Sound only: no picture is rendered, so no size is needed.
            renderSize = PixelSize(width: 0, height: 0)
        } else if !composition.hasVideoSegments {
            report("\(path).renderSize", "is required when no track shows video (a composition with no video track and no overlay "
                   + "is sound only and needs none)")
        }

        var frameDuration = RenderDefaults.frameDuration(of: videoSources)
        if let fd = vc.frameDuration {
            if fd <= .zero { report("\(path).frameDuration", "must be > 0") }
            else if fd < RenderLimits.minimumFrameDuration {
                report("\(path).frameDuration", "\(TimeFormatting.seconds(fd)) is more than 240 frames per second; the shortest frame duration is \(TimeFormatting.seconds(RenderLimits.minimumFrameDuration))")
            }
            frameDuration = fd
        } else if frameDuration < RenderLimits.minimumFrameDuration {
            report("\(path).frameDuration", "the sources' frame rate (\(TimeFormatting.decimal(Rational.one / frameDuration, places: 3)) fps) is above 240 fps; set frameDuration")
        }

        let instructions: [PlannedInstruction]
        if let given = vc.instructions {
            instructions = checkInstructions(given, tracks: tracks, duration: duration, at: "\(path).instructions")
        } else {
            let layers = tracks.video.map { PlannedLayer(trackID: $0.id, transform: .fit) }
            instructions = [PlannedInstruction(timeRange: TimeRange(start: .zero, duration: duration), backgroundColor: .black, layers: layers)]
        }
        let overlays = vc.overlays.enumerated().compactMap { checkOverlay($0.element, duration: duration, at: "\(path).overlays[\($0.offset)]") }
        let filters = checkFilters(vc.filters, at: "\(path).filters", onLayer: false)
        guard let renderSize, let filters else { return nil }
        return CheckedVideo(renderSize: renderSize, frameDuration: frameDuration, instructions: instructions, overlays: overlays, filters: filters)
    }

    private func checkDimension(_ value: Int, at path: String) {
        if value <= 0 { report(path, "must be > 0") }
        else if value % 2 != 0 { report(path, "must be even (H.264 4:2:0 needs even sizes)") }
        else if value > RenderDefaults.maximumDimension { report(path, "must be ≤ \(RenderDefaults.maximumDimension)") }
    }

    // MARK: - Instructions

    private func checkInstructions(_ instructions: [Instruction], tracks: CheckedTracks, duration: Rational, at path: String) -> [PlannedInstruction] {
        var planned: [(index: Int, instruction: PlannedInstruction)] = []
        for (i, instruction) in instructions.enumerated() {
            let instructionPath = "\(path)[\(i)]"
            let rangeOK = checkRange(instruction.timeRange, at: "\(instructionPath).timeRange")
            var seen: [Int: Int] = [:]
            var layers: [PlannedLayer] = []
            for (l, layer) in instruction.layerInstructions.enumerated() {
                let layerPath = "\(instructionPath).layerInstructions[\(l)]"
                switch tracks.mediaTypes[layer.track] {
                case nil: report("\(layerPath).track", "no track with id \(layer.track)")
                case .audio, .subtitle:
                    report("\(layerPath).track", "track \(layer.track) is \(tracks.mediaTypes[layer.track] == .audio ? "an audio" : "a subtitle") track; layer instructions need a video track")
                case .video:
                    if let first = seen[layer.track] {
                        report("\(layerPath).track", "track \(layer.track) already has layerInstructions[\(first)] in this instruction")
                    }
                    seen[layer.track] = l
                }
                checkUnitInterval(layer.opacity, at: "\(layerPath).opacity")
                let opacityRamps = checkRamps(layer.opacityRamps, at: "\(layerPath).opacityRamps", name: "opacityRamps") { v, p in
                    self.checkUnitInterval(v, at: p)
                }
                let transformRamps = checkRamps(layer.transformRamps, at: "\(layerPath).transformRamps", name: "transformRamps")
                if let crop = layer.cropRectangle {
                    if crop.width <= 0 { report("\(layerPath).cropRectangle.width", "must be > 0") }
                    if crop.height <= 0 { report("\(layerPath).cropRectangle.height", "must be > 0") }
                }
                // A ramp may end (or start) on an empty rectangle: that is how a wipe ends.
                let cropRamps = checkRamps(layer.cropRectangleRamps, at: "\(layerPath).cropRectangleRamps", name: "cropRectangleRamps") { rect, p in
                    if rect.width < 0 { self.report("\(p).width", "must be ≥ 0") }
                    if rect.height < 0 { self.report("\(p).height", "must be ≥ 0") }
                }
                let transform: LayerTransform
                switch layer.transform {
                case .preferred: transform = .preferred
                case .fit: transform = .fit
                case .fill: transform = .fill
                case .matrix(let m): transform = .explicit(m)
                }
                let filters = checkFilters(layer.filters, at: "\(layerPath).filters") ?? []
                layers.append(PlannedLayer(trackID: layer.track, transform: transform, transformRamps: transformRamps,
                                           opacity: layer.opacity, opacityRamps: opacityRamps, crop: layer.cropRectangle,
                                           cropRamps: cropRamps, filters: filters, blendMode: layer.blendMode))
            }
            if rangeOK {
                planned.append((i, PlannedInstruction(timeRange: instruction.timeRange, backgroundColor: instruction.backgroundColor, layers: layers)))
            }
        }
        planned.sort { ($0.instruction.timeRange.start, $0.index) < ($1.instruction.timeRange.start, $1.index) }
        checkTiling(planned.map { ($0.index, $0.instruction.timeRange) }, duration: duration, at: path)
        return planned.map(\.instruction)
    }

    /// Reports every gap in, overlap of, and overrun past `[0, duration)` by the sorted ranges.
    private func checkTiling(_ ranges: [(index: Int, range: TimeRange)], duration: Rational, at path: String) {
        guard duration > .zero else { return }
        var cursor = Rational.zero
        var latestIndex: Int?
        for entry in ranges {
            if entry.range.start > cursor {
                report(path, "gap from \(TimeFormatting.seconds(cursor)) to \(TimeFormatting.seconds(entry.range.start)) not covered by any instruction")
            } else if entry.range.start < cursor, let latestIndex {
                report("\(path)[\(entry.index)].timeRange",
                       "overlaps instructions[\(latestIndex)] from \(TimeFormatting.seconds(entry.range.start)) to \(TimeFormatting.seconds(min(cursor, entry.range.end)))")
            }
            if entry.range.end > cursor { cursor = entry.range.end; latestIndex = entry.index }
        }
        if cursor < duration {
            report(path, "gap from \(TimeFormatting.seconds(cursor)) to \(TimeFormatting.seconds(duration)) not covered by any instruction")
        } else if cursor > duration, let latestIndex {
            report("\(path)[\(latestIndex)].timeRange", "ends at \(TimeFormatting.seconds(cursor)), after the composition's end \(TimeFormatting.seconds(duration))")
        }
    }

    // MARK: - Overlays

    private func checkOverlay(_ overlay: Overlay, duration: Rational, at path: String) -> PlannedOverlay? {
        var ok = true
        let kind: PlannedOverlay.Kind
        switch overlay.content {
        case .image(let id):
            kind = .image(assetID: id)
            if composition.assets[id] == nil {
                report("\(path).image", "unknown asset \"\(id)\""); ok = false
            } else if let asset = described[id]?.description, asset.kind != .still {
                report("\(path).image", "asset \"\(id)\" is not a still image"); ok = false
            }
        case .text(let text):
            kind = .text(text: text.text, font: text.font, fontSize: text.fontSize, color: text.color)
            if text.text.isEmpty { report("\(path).text", "must not be empty"); ok = false }
            if text.font.isEmpty { report("\(path).font", "must not be empty"); ok = false }
            if !(OverlayText.fontSizeRange).contains(text.fontSize) {
                report("\(path).fontSize", "must be between \(Int(OverlayText.fontSizeRange.lowerBound)) and \(Int(OverlayText.fontSizeRange.upperBound)) pixels")
                ok = false
            }
        }
        let maximumSide = Double(RenderDefaults.maximumDimension)
        for (key, side) in [("width", overlay.frame.width), ("height", overlay.frame.height)] {
            if side <= 0 { report("\(path).frame.\(key)", "must be > 0"); ok = false }
            else if side > maximumSide { report("\(path).frame.\(key)", "must be ≤ \(RenderDefaults.maximumDimension)"); ok = false }
        }
        checkUnitInterval(overlay.opacity, at: "\(path).opacity")
        if let range = overlay.timeRange, !checkRange(range, at: "\(path).timeRange") { ok = false }
        for (a, animation) in overlay.animations.enumerated() {
            let animationPath = "\(path).animations[\(a)]"
            let timing = animation.problems(at: animationPath)
            for problem in timing { report(problem.path, problem.message) }
            if !timing.isEmpty { ok = false }
            if case .opacity(let opacity) = animation.change {
                for (i, value) in opacity.values.enumerated() { checkUnitInterval(value, at: opacity.valuePath(i, in: animationPath)) }
            }
        }
        guard ok else { return nil }
        return PlannedOverlay(kind: kind, frame: overlay.frame, opacity: overlay.opacity,
                              timeRange: overlay.timeRange ?? TimeRange(start: .zero, duration: duration),
                              animations: overlay.animations)
    }
}
