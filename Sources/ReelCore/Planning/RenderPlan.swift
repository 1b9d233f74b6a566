/// A validated composition with every default resolved: exactly what the renderer, the
/// audio mixer and the chunk planner consume. Produced only by `CompositionValidator`.
///
/// Invariants: `frameDuration > 0`; `duration > 0`; `frameCount == ceil(duration / frameDuration)`;
/// render and output sizes are even and in 2…8192; `instructions` tile `[0, duration)` in
/// time order; every segment's asset is in `assets`; segments of a track are sorted by `at`
/// and do not overlap; ramps of one property are sorted and do not overlap.
public struct RenderPlan: Codable, Sendable, Hashable {
    /// Composition (render) coordinates: the space transforms and overlay frames are in.
    public var renderSize: PixelSize
    /// Encoded size: `renderSize`, except preset low scales the longest side to ≤ 640 (even dims).
    public var outputSize: PixelSize
    public var frameDuration: Rational
    /// End of the last segment of any track.
    public var duration: Rational
    /// `ceil(duration / frameDuration)`.
    public var frameCount: Int
    /// Only the assets actually used by a track or an overlay.
    public var assets: [String: PlannedAsset]
    /// In composition track order.
    public var videoTracks: [PlannedTrack]
    public var audioTracks: [PlannedAudioTrack]
    /// Sorted, tiling `[0, duration)`.
    public var instructions: [PlannedInstruction]
    /// Draw order (later on top), above all video layers.
    public var overlays: [PlannedOverlay]
    public var export: ExportSettings
    /// `videoComposition.filters`: applied to the composited layers, below the overlays.
    public var filters: [LayerFilter]
    /// Subtitle tracks in composition order, written by the finaliser; nil when there are none
    /// (and in plans made before subtitles existed).
    public var subtitleTracks: [PlannedSubtitleTrack]?
    /// Subtitle files burned into the picture, above the overlays; nil when there are none
    /// (and in plans made before captions existed).
    public var captions: [PlannedCaption]?
    /// The colour the frames are composited in and the output is tagged with (docs/colour.md).
    public var colour: OutputColour

    public init(renderSize: PixelSize, outputSize: PixelSize, frameDuration: Rational, duration: Rational, frameCount: Int,
                assets: [String: PlannedAsset], videoTracks: [PlannedTrack], audioTracks: [PlannedAudioTrack],
                instructions: [PlannedInstruction], overlays: [PlannedOverlay], export: ExportSettings, filters: [LayerFilter] = [],
                subtitleTracks: [PlannedSubtitleTrack]? = nil, captions: [PlannedCaption]? = nil, colour: OutputColour = .standard) {
        self.renderSize = renderSize; self.outputSize = outputSize; self.frameDuration = frameDuration
        self.duration = duration; self.frameCount = frameCount; self.assets = assets
        self.videoTracks = videoTracks; self.audioTracks = audioTracks; self.instructions = instructions
        self.overlays = overlays; self.export = export; self.filters = filters
        self.subtitleTracks = subtitleTracks; self.captions = captions; self.colour = colour
    }

    private enum CodingKeys: String, CodingKey {
        case renderSize, outputSize, frameDuration, duration, frameCount, assets, videoTracks, audioTracks, instructions, overlays, export, filters
        case subtitleTracks, captions, colour
    }

    /// A plan written before filters existed has no `filters` key: it has none; one written before
    /// colour settings existed has no `colour`: the standard BT.709 output.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(renderSize: try c.decode(PixelSize.self, forKey: .renderSize), outputSize: try c.decode(PixelSize.self, forKey: .outputSize),
                  frameDuration: try c.decode(Rational.self, forKey: .frameDuration), duration: try c.decode(Rational.self, forKey: .duration),
                  frameCount: try c.decode(Int.self, forKey: .frameCount), assets: try c.decode([String: PlannedAsset].self, forKey: .assets),
                  videoTracks: try c.decode([PlannedTrack].self, forKey: .videoTracks),
                  audioTracks: try c.decode([PlannedAudioTrack].self, forKey: .audioTracks),
                  instructions: try c.decode([PlannedInstruction].self, forKey: .instructions),
                  overlays: try c.decode([PlannedOverlay].self, forKey: .overlays), export: try c.decode(ExportSettings.self, forKey: .export),
                  filters: try c.decodeIfPresent([LayerFilter].self, forKey: .filters) ?? [],
                  subtitleTracks: try c.decodeIfPresent([PlannedSubtitleTrack].self, forKey: .subtitleTracks),
                  captions: try c.decodeIfPresent([PlannedCaption].self, forKey: .captions),
                  colour: try c.decodeIfPresent(OutputColour.self, forKey: .colour) ?? .standard)
    }

    /// Scale from render coordinates to output pixels along x (1 unless preset low shrank the
    /// output). Text overlays are rasterised at `ceil(frame.width·s) × ceil(frame.height·s)`
    /// pixels with font size `fontSize·s`, so text is drawn 1:1 in the output, never resampled.
    public var textRasterScale: Double { Double(outputSize.width) / Double(renderSize.width) }

    /// The render → output scale every layer and overlay transform ends with.
    public var renderToOutput: AffineTransform {
        .scale(Double(outputSize.width) / Double(renderSize.width), Double(outputSize.height) / Double(renderSize.height))
    }
}

/// A source the plan uses: its resolved location and what probing it said.
public struct PlannedAsset: Codable, Sendable, Hashable {
    /// Absolute path or http(s) URL (already resolved against the composition's directory).
    public var url: String
    public var description: AssetDescription
    public init(url: String, description: AssetDescription) { self.url = url; self.description = description }
}

/// A piece of one source on the timeline: `[at, at + duration)` of the composition shows
/// source `[sourceStart, sourceStart + sourceDuration)`, scaled to fit when the two durations
/// differ (`scaleTimeRange`: a speed change). For stills `sourceStart` is 0 and every instant
/// shows the image.
public struct PlannedSegment: Codable, Sendable, Hashable {
    public var asset: String
    public var sourceStart: Rational
    public var at: Rational
    /// Composition time the segment lasts; > 0.
    public var duration: Rational
    /// Source time it plays in that time; > 0. Equal to `duration` at normal speed.
    public var sourceDuration: Rational

    public init(asset: String, sourceStart: Rational, at: Rational, duration: Rational, sourceDuration: Rational? = nil) {
        self.asset = asset; self.sourceStart = sourceStart; self.at = at; self.duration = duration
        self.sourceDuration = sourceDuration ?? duration
    }

    /// Plans stored before speed changes have no `sourceDuration`: normal speed.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        asset = try c.decode(String.self, forKey: .asset)
        sourceStart = try c.decode(Rational.self, forKey: .sourceStart)
        at = try c.decode(Rational.self, forKey: .at)
        duration = try c.decode(Rational.self, forKey: .duration)
        sourceDuration = try c.decodeIfPresent(Rational.self, forKey: .sourceDuration) ?? duration
    }

    public var end: Rational { at + duration }
    public var timeRange: TimeRange { TimeRange(start: at, duration: duration) }
    /// Source seconds per composition second: 2 plays twice as fast, 1/2 in slow motion.
    public var speed: Rational { sourceDuration / duration }
    /// Whether the segment plays at another speed than the source's own.
    public var isTimeScaled: Bool { sourceDuration != duration }

    /// Source time shown at composition `time`: `sourceStart + (time − at)·sourceDuration/duration`,
    /// exact (not clamped). The one place where composition time becomes source time.
    public func sourceTime(at time: Rational) -> Rational {
        let elapsed = time - at
        return sourceStart + (isTimeScaled ? elapsed * sourceDuration / duration : elapsed)
    }
}

/// A video track: its media segments sorted by `at`, non-overlapping (empty segments dropped).
public struct PlannedTrack: Codable, Sendable, Hashable {
    public var id: Int
    public var segments: [PlannedSegment]
    public init(id: Int, segments: [PlannedSegment]) { self.id = id; self.segments = segments }
}

/// An audio track: segments plus its volume curve (base `volume`, sorted non-overlapping ramps).
public struct PlannedAudioTrack: Codable, Sendable, Hashable {
    public var id: Int
    public var segments: [PlannedSegment]
    public var volume: Double
    public var volumeRamps: [Ramp<Double>]
    /// How its speed-changed segments are stretched.
    public var timePitchAlgorithm: AudioTimePitchAlgorithm
    /// How the track dips under others, or nil (`DuckEnvelope`).
    public var duck: Ducking?
    public init(id: Int, segments: [PlannedSegment], volume: Double = 1, volumeRamps: [Ramp<Double>] = [],
                timePitchAlgorithm: AudioTimePitchAlgorithm = .spectral, duck: Ducking? = nil) {
        self.id = id; self.segments = segments; self.volume = volume; self.volumeRamps = volumeRamps
        self.timePitchAlgorithm = timePitchAlgorithm
        self.duck = duck
    }

    /// Plans stored before speed changes have no algorithm: the default.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        segments = try c.decode([PlannedSegment].self, forKey: .segments)
        volume = try c.decode(Double.self, forKey: .volume)
        volumeRamps = try c.decode([Ramp<Double>].self, forKey: .volumeRamps)
        timePitchAlgorithm = try c.decodeIfPresent(AudioTimePitchAlgorithm.self, forKey: .timePitchAlgorithm) ?? .spectral
        duck = try c.decodeIfPresent(Ducking.self, forKey: .duck)
    }
}

/// How a layer's source pixels are placed before ramps: the three meanings a layer can have.
public enum LayerTransform: Codable, Sendable, Hashable {
    /// The source's preferred transform (upright, natural size, at the origin) — an explicit
    /// instruction's layer without a `transform`, or with `"preferred"`.
    case preferred
    /// Preferred transform, then a uniform scale to fit the render size, centred (the default without a video composition).
    case fit
    /// Preferred transform, then a uniform scale to cover the render size, centred (overhang cropped).
    case fill
    /// A transform from encoded source pixels to render coordinates.
    case explicit(AffineTransform)
}

/// One layer of an instruction: a video track with its transform, opacity and crop.
public struct PlannedLayer: Codable, Sendable, Hashable {
    public var trackID: Int
    public var transform: LayerTransform
    /// Sorted, non-overlapping; while a ramp is active or after one, it replaces `transform`.
    public var transformRamps: [Ramp<AffineTransform>]
    public var opacity: Double
    public var opacityRamps: [Ramp<Double>]
    /// Part of the source to show, in encoded source pixel coordinates.
    public var crop: Rect?
    /// Sorted, non-overlapping; while a ramp is active or after one, it replaces `crop`.
    public var cropRamps: [Ramp<Rect>]
    /// Applied in order to the layer as drawn in render space, before opacity and blending.
    public var filters: [LayerFilter]
    public var blendMode: BlendMode

    public init(trackID: Int, transform: LayerTransform, transformRamps: [Ramp<AffineTransform>] = [],
                opacity: Double = 1, opacityRamps: [Ramp<Double>] = [], crop: Rect? = nil, cropRamps: [Ramp<Rect>] = [],
                filters: [LayerFilter] = [], blendMode: BlendMode = .normal) {
        self.trackID = trackID; self.transform = transform; self.transformRamps = transformRamps
        self.opacity = opacity; self.opacityRamps = opacityRamps; self.crop = crop; self.cropRamps = cropRamps
        self.filters = filters; self.blendMode = blendMode
    }

    private enum CodingKeys: String, CodingKey {
        case trackID, transform, transformRamps, opacity, opacityRamps, crop, cropRamps, filters, blendMode
    }

    /// A layer planned before crop ramps or filters existed has no `cropRamps`, `filters` or
    /// `blendMode`: none, none, `normal`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(trackID: try c.decode(Int.self, forKey: .trackID), transform: try c.decode(LayerTransform.self, forKey: .transform),
                  transformRamps: try c.decode([Ramp<AffineTransform>].self, forKey: .transformRamps),
                  opacity: try c.decode(Double.self, forKey: .opacity), opacityRamps: try c.decode([Ramp<Double>].self, forKey: .opacityRamps),
                  crop: try c.decodeIfPresent(Rect.self, forKey: .crop),
                  cropRamps: try c.decodeIfPresent([Ramp<Rect>].self, forKey: .cropRamps) ?? [],
                  filters: try c.decodeIfPresent([LayerFilter].self, forKey: .filters) ?? [],
                  blendMode: try c.decodeIfPresent(BlendMode.self, forKey: .blendMode) ?? .normal)
    }
}

/// What to draw during `timeRange`: a background and layers, first = topmost.
public struct PlannedInstruction: Codable, Sendable, Hashable {
    public var timeRange: TimeRange
    public var backgroundColor: RGBAColor
    /// First = topmost (the file's order); `FrameDescription.layers` reverses it for drawing.
    public var layers: [PlannedLayer]
    public init(timeRange: TimeRange, backgroundColor: RGBAColor, layers: [PlannedLayer]) {
        self.timeRange = timeRange; self.backgroundColor = backgroundColor; self.layers = layers
    }
}

/// An overlay with every default resolved.
public struct PlannedOverlay: Codable, Sendable, Hashable {
    /// What the overlay bitmap is.
    public enum Kind: Codable, Sendable, Hashable {
        /// A still asset (id into `RenderPlan.assets`), bitmap at its natural size.
        case image(assetID: String)
        /// Text rasterised by the renderer (see `RenderPlan.textRasterScale`).
        case text(text: String, font: String, fontSize: Double, color: RGBAColor)
    }

    public var kind: Kind
    /// Render coordinates.
    public var frame: Rect
    public var opacity: Double
    /// When visible (defaults to the whole composition).
    public var timeRange: TimeRange
    public var animations: [OverlayAnimation]

    public init(kind: Kind, frame: Rect, opacity: Double, timeRange: TimeRange, animations: [OverlayAnimation]) {
        self.kind = kind; self.frame = frame; self.opacity = opacity; self.timeRange = timeRange; self.animations = animations
    }
}
