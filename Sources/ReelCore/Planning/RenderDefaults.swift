/// The defaults of docs/composition.md ("Defaults", "Export") that depend on the sources, as pure functions.
public enum RenderDefaults {
    /// Frame duration when the video sources do not share one nominal frame rate.
    public static let fallbackFrameDuration = Rational(1, 30)
    /// Largest render or output dimension.
    public static let maximumDimension = 8192
    /// Preset low: the output's longest side is at most this.
    public static let lowPresetLongestSide = 640

    /// The largest display width and the largest display height (after rotation) over
    /// `videos`, each rounded up to an even number (4:2:0 output needs even sizes).
    /// nil when there is no video.
    public static func renderSize(displaying videos: [VideoTrackDescription]) -> PixelSize? {
        guard !videos.isEmpty else { return nil }
        let sizes = videos.map(\.displaySize)
        let w = sizes.map(\.width).max()!, h = sizes.map(\.height).max()!
        return PixelSize(width: w + w % 2, height: h + h % 2)
    }

    /// The common nominal frame duration of the timed video sources, or 1/30 when they differ,
    /// when one does not state it, or when there is none (stills only).
    public static func frameDuration(of sources: [AssetDescription]) -> Rational {
        let timed = sources.filter { $0.kind == .movie }
        let durations = timed.map { $0.video?.frameDuration }
        guard let first = durations.first, let common = first, common > .zero,
              durations.allSatisfy({ $0 == common }) else { return fallbackFrameDuration }
        return common
    }

    /// The encoded size: `renderSize`, except for preset low, where a longest side above 640
    /// is scaled down to 640 with the aspect ratio kept and the other side rounded to the
    /// nearest even number (at least 2).
    public static func outputSize(renderSize: PixelSize, preset: ExportPreset) -> PixelSize {
        let longest = max(renderSize.width, renderSize.height)
        guard preset == .low, longest > lowPresetLongestSide else { return renderSize }
        return scaled(renderSize, longestSide: lowPresetLongestSide)
    }

    /// `size` scaled so its longest side is `limit`, aspect ratio kept, the other side rounded
    /// to the nearest even number (at least 2).
    public static func scaled(_ size: PixelSize, longestSide limit: Int) -> PixelSize {
        let longest = max(size.width, size.height)
        // Nearest even of short·limit/longest, computed exactly in integers.
        func scaled(_ side: Int) -> Int { max(2, 2 * ((side * limit + longest) / (2 * longest))) }
        return size.width >= size.height
            ? PixelSize(width: limit, height: scaled(size.height))
            : PixelSize(width: scaled(size.width), height: limit)
    }

    /// The `.fit` placement: `preferred`, then a uniform scale so the upright picture fits in
    /// `renderSize` (aspect preserved), then centred.
    public static func fitTransform(_ video: VideoTrackDescription, into renderSize: PixelSize) -> AffineTransform {
        placed(video, into: renderSize, scale: min)
    }

    /// The `.fill` placement: like `.fit`, but scaled to cover `renderSize` (the picture's
    /// overhang on one axis falls outside the render and is not drawn).
    public static func fillTransform(_ video: VideoTrackDescription, into renderSize: PixelSize) -> AffineTransform {
        placed(video, into: renderSize, scale: max)
    }

    /// `preferred`, then the uniform scale `choose(rw/w, rh/h)`, then centred.
    private static func placed(_ video: VideoTrackDescription, into renderSize: PixelSize,
                               scale choose: (Double, Double) -> Double) -> AffineTransform {
        let box = video.preferredTransform.boundingBox(
            of: Rect(x: 0, y: 0, width: Double(video.naturalSize.width), height: Double(video.naturalSize.height)))
        guard box.width > 0, box.height > 0 else { return video.preferredTransform }
        let rw = Double(renderSize.width), rh = Double(renderSize.height)
        let s = choose(rw / box.width, rh / box.height)
        return video.preferredTransform
            .concatenating(.translation(-box.x, -box.y))
            .concatenating(.scale(s, s))
            .concatenating(.translation((rw - box.width * s) / 2, (rh - box.height * s) / 2))
    }
}
