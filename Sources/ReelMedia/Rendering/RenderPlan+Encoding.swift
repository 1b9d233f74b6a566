import ReelCore

extension RenderPlan {
    /// The encoder settings every chunk of this plan uses.
    public func videoEncoderSettings(threads: Int) -> VideoEncoderSettings {
        var settings = VideoEncoderSettings(width: outputSize.width, height: outputSize.height, frameDuration: frameDuration,
                                            crf: export.video.crf, x264Preset: export.video.x264Preset, profile: export.video.profile,
                                            gopFrames: export.video.gopFrames, threads: threads, bitRate: export.video.bitRate)
        // A codec this Reel does not know stays H.264's settings here; validation refuses it
        // before any plan is made.
        settings.codec = export.video.videoCodec ?? .h264
        if let preset = export.video.x265Preset { settings.x265Preset = preset }
        if let speed = export.video.vp9Speed { settings.vp9Speed = speed }
        if let preset = export.video.svtav1Preset { settings.svtav1Preset = preset }
        settings.alpha = (settings.codec == .vp9 || settings.codec == .png) && export.video.writesAlpha
        settings.colour = colour.space
        settings.hdr = colour.hdr
        return settings
    }

    /// The encoder settings of each rendition of an HLS ladder, in the ladder's order (empty
    /// without a ladder): the plan's settings at the rendition's size, codec, speed preset and
    /// bit rates, with one x264 thread whatever `threads` says. Measured: x264's rate control
    /// with VBV (`bitRate` + `maxBitRate`) gave different bytes in two of three renders of the
    /// same chunk with 2 threads, and the same bytes in three of three with one; chunks and
    /// agents give the parallelism instead.
    public func renditionEncoderSettings(threads: Int) -> [VideoEncoderSettings] {
        (export.ladder?.renditions ?? []).map { rendition in
            var settings = videoEncoderSettings(threads: 1)
            settings.width = rendition.size.width
            settings.height = rendition.size.height
            settings.codec = rendition.video.videoCodec ?? .h264
            settings.profile = rendition.video.profile
            settings.x264Preset = rendition.video.x264Preset
            settings.bitRate = rendition.video.bitRate
            settings.maxBitRate = rendition.video.maxBitRate
            return settings
        }
    }

    /// The container of this plan's video chunks: MP4, except QuickTime for ProRes, which MP4
    /// cannot hold. Chunk files are internal; only the finaliser reads them. VP9 and AV1 chunks
    /// are MP4 too, whatever the output: MP4 keeps each frame's time exact in the frame duration's own
    /// time base, which the finaliser checks, where WebM would round it to milliseconds.
    /// Except VP9 with alpha: MP4 drops the BlockAdditional side data that carries the alpha,
    /// so its chunks are WebM, and the finaliser puts the rounded times back on the frame grid.
    public var chunkFileType: FileType {
        switch export.video.videoCodec {
        // A PNG sequence's chunks hold its PNG pictures as they will be written, one packet each.
        case .prores, .png: .mov
        case .vp9 where export.video.writesAlpha: .webm
        default: .mp4
        }
    }
}

extension RenderPlan {
    /// The container of this plan's audio task result, a `MovieWriter` file type: MP4 for
    /// AAC, Ogg for Opus (exact sample timestamps, priming and end padding marked), WAV for PCM.
    /// Internal like the chunks; the finaliser copies its packets into the output.
    public var audioTaskContainer: String {
        switch export.audio.audioCodec ?? .aac {
        case .aac: "mp4"
        case .opus: "ogg"
        case .pcm: "wav"
        }
    }
}
