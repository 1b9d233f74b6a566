/// Which streams an output gets: a picture unless the container holds sound only or nothing
/// would draw one; sound when any track is an audio track.
///
/// Decision: a composition draws a picture when it has a video track (even one whose segments
/// are all empty: it asks for the background) or an overlay. Without either it is sound only,
/// as AVFoundation's M4A export of an audio composition: no `renderSize` is needed, no video
/// chunk is planned, and the output holds the audio stream alone, in whichever container the
/// output names (M4A by default).
extension RenderPlan {
    /// Whether the output has a video stream: the container is not audio-only and the
    /// composition has a video track or an overlay. Without a picture the plan has no video
    /// chunks (`ChunkPlanner.plan(for:)`), and `renderSize`/`outputSize` mean nothing (0×0
    /// when no source gives a size).
    public var hasPicture: Bool {
        !export.fileType.isAudioOnly && (!videoTracks.isEmpty || !overlays.isEmpty)
    }

    /// Whether the output has an audio stream (no audio track ⇒ none).
    public var hasSound: Bool { !audioTracks.isEmpty }
}

extension Composition {
    /// `RenderPlan.hasPicture` before planning, with the container `export.fileType` says (nil:
    /// not an audio-only one).
    public var hasPicture: Bool {
        if export.fileType?.isAudioOnly == true { return false }
        return tracks.contains { $0.mediaType == .video } || !(videoComposition?.overlays.isEmpty ?? true)
    }
}
