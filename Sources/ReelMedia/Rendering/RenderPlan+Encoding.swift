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
        return settings
    }

    /// The container of this plan's video chunks: MP4, except QuickTime for codecs MP4 cannot
    /// hold (ProRes). Chunk files are internal; only the finaliser reads them.
    public var chunkFileType: FileType { export.video.videoCodec?.defaultFileType ?? .mp4 }
}

extension RenderPlan {
    /// The container of this plan's audio task result: MP4 for AAC, WAV for PCM. Internal like
    /// the chunks; the finaliser copies its packets into the output.
    public var audioTaskFileType: FileType {
        switch export.audio.audioCodec ?? .aac {
        case .aac: .mp4
        case .pcm: .wav
        }
    }
}
