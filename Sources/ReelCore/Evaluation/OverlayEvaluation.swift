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
    ///
    /// The bitmap is mapped onto its frame's size, scaled and rotated about the frame centre,
    /// moved to the (animated) frame origin, then into output pixels.
    public func overlayDraw(_ index: Int, at time: Rational) -> OverlayDraw? {
        let overlay = overlays[index]
        guard overlay.timeRange.contains(time) else { return nil }
        let state = OverlayState(overlay, at: time)
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

    init(_ overlay: PlannedOverlay, at time: Rational) {
        opacity = overlay.opacity
        origin = Point(x: overlay.frame.x, y: overlay.frame.y)
        // Later animations of a property override earlier ones once they have begun.
        for animation in overlay.animations where animation.begin <= time {
            let f = OverlayState.progress(animation, at: time)
            func lerp(_ a: Double, _ b: Double) -> Double { a + (b - a) * f }
            switch animation.change {
            case .rotation(let from, let to): rotation = lerp(from, to)
            case .opacity(let from, let to): opacity = lerp(from, to)
            case .scale(let from, let to): scale = lerp(from, to)
            case .position(let from, let to): origin = Point(x: lerp(from.x, to.x), y: lerp(from.y, to.y))
            }
        }
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
