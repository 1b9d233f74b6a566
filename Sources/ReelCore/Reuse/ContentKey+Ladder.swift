extension RenderPlan {
    /// Everything an HLS ladder adds to a video chunk's key: the segment grid and each
    /// rendition's name, size and encoder settings (a changed rendition changes the chunk's key).
    func write(ladder: RenditionLadder, to out: inout CanonicalEncoder) {
        out.write("segmentFrames", ladder.segmentFrames)
        out.write("renditions", ladder.renditions.count)
        for rendition in ladder.renditions { ContentKey.write(rendition: rendition, to: &out) }
    }
}

extension ContentKey {
    /// The keys of each rendition of each ladder chunk of `plan` (chunks in order, renditions
    /// in the ladder's order; nil where a source has no content hash, or when `plan` is no
    /// ladder): incremental re-rendering per rendition. A rendition's chunk depends only on the
    /// chunk's picture and on its own settings — every rendition's encoder is fed the same
    /// composited frames, scaled to its size, and runs single-threaded and independently of the
    /// others — so its key is a SHA-256 over the chunk's *picture key* (the chunk key of
    /// `videoChunks` with the ladder's segment grid but none of its renditions) and that one
    /// rendition's name, size and encoder settings. Changing rendition B, or adding one,
    /// changes only that rendition's key; the segment grid, or anything in the frames, changes
    /// all of them.
    public static func renditionChunks(_ plan: RenderPlan, chunks: [FrameRange], encoderThreads: Int,
                                       assetContent: [String: String]) -> [[String]?] {
        guard let ladder = plan.export.ladder else { return chunks.map { _ in nil } }
        let pictures = walkVideoChunks(plan, chunks: chunks, encoderThreads: encoderThreads, assetContent: assetContent,
                                       picture: true) { digest($0) }
        return pictures.map { picture in
            picture.map { picture in ladder.renditions.map { rendition(picture: picture, $0) } }
        }
    }

    /// One rendition's key over its chunk's picture key.
    static func rendition(picture: String, _ rendition: PlannedRendition) -> String {
        var out = CanonicalEncoder()
        start(&out, kind: "ladder-rendition")
        out.write("picture", picture)
        write(rendition: rendition, to: &out)
        return digest(out)
    }

    /// A rendition's name, size and encoder settings: the same fields, in the same order, in
    /// a ladder chunk's key and in each rendition's own key.
    static func write(rendition: PlannedRendition, to out: inout CanonicalEncoder) {
        let video = rendition.video
        out.write("name", rendition.name)
        out.write("size", rendition.size)
        out.write("codec", video.codec)
        out.write("profile", video.profile)
        out.write("x264Preset", video.x264Preset)
        out.write("bitRate", video.bitRate)
        out.write("maxBitRate", video.maxBitRate)
    }
}
