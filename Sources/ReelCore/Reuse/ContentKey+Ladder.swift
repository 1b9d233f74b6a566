extension RenderPlan {
    /// Everything an HLS ladder adds to a video chunk's key: the segment grid and each
    /// rendition's name, size and encoder settings (a changed rendition changes the chunk's key).
    func write(ladder: RenditionLadder, to out: inout CanonicalEncoder) {
        out.write("segmentFrames", ladder.segmentFrames)
        out.write("renditions", ladder.renditions.count)
        for rendition in ladder.renditions {
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
}
