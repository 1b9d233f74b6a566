extension RenderPlan {
    /// The pixel size of overlay `index`'s bitmap: a still at its natural size, or the text
    /// raster `ceil(frame.width·s) × ceil(frame.height·s)` with `s = textRasterScale`
    /// (the renderer lays the text out with font size `fontSize·s`).
    public func overlayBitmapSize(_ index: Int) -> PixelSize {
        let overlay = overlays[index]
        switch overlay.kind {
        case .image(let id):
            return assets[id]?.description.video?.naturalSize ?? PixelSize(width: 1, height: 1)
        case .text:
            let s = textRasterScale
            return PixelSize(width: max(1, Int((overlay.frame.width * s).rounded(.up))),
                             height: max(1, Int((overlay.frame.height * s).rounded(.up))))
        }
    }

    /// Overlay `index` at `time`: nil when outside its time range or fully transparent.
    public func overlayDraw(_ index: Int, at time: Rational) -> OverlayDraw? {
        guard overlays[index].timeRange.contains(time) else { return nil }
        return overlayDraw(index, state: OverlayAnimations(overlays[index].animations).state(of: overlays[index], at: time))
    }

    /// Overlay `index` drawn with its animated properties `state`: nil when fully transparent.
    ///
    /// The bitmap is mapped onto its frame's size, scaled and rotated about the frame centre,
    /// moved to the (animated) frame origin, then into output pixels.
    func overlayDraw(_ index: Int, state: OverlayState) -> OverlayDraw? {
        let overlay = overlays[index]
        guard state.opacity > 0 else { return nil }

        let frame = overlay.frame
        let bitmap = overlayBitmapSize(index)
        let toFrame: AffineTransform
        switch overlay.kind {
        case .image:
            toFrame = .scale(frame.width / Double(bitmap.width), frame.height / Double(bitmap.height))
        case .text:
            // Text is rasterised at the output scale, so one bitmap pixel is 1/s render units
            // (the bitmap may overhang the frame by under a pixel from the ceil; it is blank there).
            toFrame = .scale(1 / textRasterScale, 1 / textRasterScale)
        }
        let cx = frame.width / 2, cy = frame.height / 2
        let transform = toFrame
            .concatenating(.translation(-cx, -cy))
            .concatenating(.scale(state.scale, state.scale))
            .concatenating(.rotation(state.rotation))
            .concatenating(.translation(cx + state.origin.x, cy + state.origin.y))
            .concatenating(renderToOutput)
        return OverlayDraw(index: index, transform: transform, opacity: state.opacity)
    }
}

/// An overlay's animated properties at one time (see `OverlayAnimation` for the rules).
struct OverlayState {
    var rotation = 0.0
    var scale = 1.0
    var opacity: Double
    var origin: Point
}

extension OverlayAnimation: TimeOrdered {
    public var spanStart: Rational { begin }
}

/// One overlay's animations arranged for lookup by time.
///
/// Per property, the last animation in the array that has begun wins. An animation followed
/// in the array by one of the same property that begins no later can never win (once it has
/// begun, so has the later one), so per property only the others are kept, in array order —
/// where their begins strictly increase — and the winner at `t` is the last one beginning at
/// or before `t`: a binary search (`lastIndex(startingAtOrBefore:)`).
struct OverlayAnimations {
    /// Per property (`Self.property`): the animations that can win, begins increasing.
    private var candidates: [[OverlayAnimation]] = [[], [], [], []]

    init(_ animations: [OverlayAnimation]) {
        var earliestLater: [Rational?] = [nil, nil, nil, nil]
        for animation in animations.reversed() {
            let p = Self.property(animation.change)
            if let later = earliestLater[p], later <= animation.begin { continue }
            candidates[p].append(animation)
            earliestLater[p] = animation.begin
        }
        for p in candidates.indices { candidates[p].reverse() }
    }

    private static func property(_ change: OverlayAnimation.Change) -> Int {
        switch change {
        case .rotation: 0
        case .opacity: 1
        case .scale: 2
        case .position: 3
        }
    }

    func state(of overlay: PlannedOverlay, at time: Rational) -> OverlayState {
        var state = OverlayState(opacity: overlay.opacity, origin: Point(x: overlay.frame.x, y: overlay.frame.y))
        for list in candidates {
            guard let i = list.lastIndex(startingAtOrBefore: time) else { continue }
            let animation = list[i]
            let f = Self.progress(animation, at: time)
            func lerp(_ a: Double, _ b: Double) -> Double { a + (b - a) * f }
            switch animation.change {
            case .rotation(let from, let to): state.rotation = lerp(from, to)
            case .opacity(let from, let to): state.opacity = lerp(from, to)
            case .scale(let from, let to): state.scale = lerp(from, to)
            case .position(let from, let to): state.origin = Point(x: lerp(from.x, to.x), y: lerp(from.y, to.y))
            }
        }
        return state
    }

    /// 0…1 through the current period, computed exactly; 1 after a non-repeating animation ends.
    static func progress(_ animation: OverlayAnimation, at time: Rational) -> Double {
        let elapsed = time - animation.begin
        if animation.repeats {
            let phase = elapsed - animation.duration * Int(elapsed.floorDiv(animation.duration))
            return (phase / animation.duration).seconds
        }
        return elapsed >= animation.duration ? 1 : (elapsed / animation.duration).seconds
    }
}
