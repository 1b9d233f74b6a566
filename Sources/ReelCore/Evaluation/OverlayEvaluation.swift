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
        // Later animations of a property override earlier ones once they have begun (an
        // animation has no value before its begin).
        for animation in overlay.animations {
            switch animation.change {
            case .rotation(let a): if let v = a.value(at: time) { rotation = v }
            case .opacity(let a): if let v = a.value(at: time) { opacity = v }
            case .scale(let a): if let v = a.value(at: time) { scale = v }
            case .position(let a): if let v = a.value(at: time) { origin = v }
            }
        }
    }
}
