import Foundation
import ReelCore
import ReelKernels

/// Renders one task of a plan into its own file: a video chunk (frames `a..<b`, a fresh
/// encoder, IDR first, closed GOPs, chunk-local timestamps) or the audio of the whole mix.
///
/// A chunk depends only on the plan, its frame range and the encoder thread count: the
/// same inputs give byte-identical files on any machine, so a chunk re-rendered after a fault
/// changes nothing (docs/output-guarantees.md, 5). Sources are sought to the chunk start, not decoded from 0.
public enum ChunkRenderer {
    /// Renders frames `frames` of `plan` to an MP4 (QuickTime for ProRes) at `path` (written atomically).
    /// `progress` is called with the number of frames done so far in this chunk; it may throw
    /// to abandon the render (an agent whose lease was lost), and the error is rethrown.
    /// `lastFrame`, if given, sees the chunk's last frame as rendered (for a poster frame).
    /// `media` gives the byte-range sources of assets this machine reads remotely.
    public static func renderVideo(_ plan: RenderPlan, frames: FrameRange, to path: String, encoderThreads: Int,
                                   media: MediaSources = .local,
                                   progress: ((Int) throws -> Void)? = nil,
                                   lastFrame: ((YUVImage) throws -> Void)? = nil) throws -> ChunkArtifact {
        precondition(frames.start >= 0 && frames.end <= plan.frameCount && frames.count > 0, "chunk \(frames) outside the plan")
        let partial = AtomicFile.temporaryPath(for: path)
        defer { unlink(partial) }
        let settings = plan.videoEncoderSettings(threads: encoderThreads)
        if settings.isHighDynamicRange {
            try renderDeepVideo(plan, frames: frames, to: partial, settings: settings, media: media, progress: progress)
            try AtomicFile.commit(partial, to: path)
            return try ChunkArtifact.measuring(kind: .video, frames: frames, path: path)
        }
        let renderer = FrameRenderer(plan: plan, media: media)
        let encoder = try VideoEncoder(settings: settings)
        let writer = try MovieWriter(path: partial, fileType: plan.chunkFileType.rawValue, faststart: false, video: encoder, audio: nil)
        for k in frames.start..<frames.end {
            let image = try renderer.render(frame: k)
            for packet in try encoder.encode(image, frameIndex: Int64(k - frames.start)) { try writer.write(video: packet) }
            if k == frames.end - 1 { try lastFrame?(image) }
            try progress?(k - frames.start + 1)
        }
        for packet in try encoder.finish() { try writer.write(video: packet) }
        try writer.finish()
        try AtomicFile.commit(partial, to: path)
        return try ChunkArtifact.measuring(kind: .video, frames: frames, path: path)
    }

    /// An HDR chunk: frames drawn at 16 bits (`DeepFrameRenderer`), encoded at 10. HDR chunks
    /// give no poster frame (`lastFrame` is not called): posters are 8-bit SDR pictures.
    private static func renderDeepVideo(_ plan: RenderPlan, frames: FrameRange, to partial: String, settings: VideoEncoderSettings,
                                        media: MediaSources, progress: ((Int) throws -> Void)?) throws {
        let renderer = DeepFrameRenderer(plan: plan, media: media)
        let encoder = try VideoEncoder(settings: settings)
        let writer = try MovieWriter(path: partial, fileType: plan.chunkFileType.rawValue, faststart: false, video: encoder, audio: nil)
        for k in frames.start..<frames.end {
            let image = try renderer.render(frame: k)
            for packet in try encoder.encode(image, frameIndex: Int64(k - frames.start)) { try writer.write(video: packet) }
            try progress?(k - frames.start + 1)
        }
        for packet in try encoder.finish() { try writer.write(video: packet) }
        try writer.finish()
    }

    /// Renders the whole audio mix, encoded once in the export's audio codec at `path` (written
    /// atomically): AAC in an MP4, Opus in an Ogg, or PCM in a WAV (`RenderPlan.audioTaskContainer`). One pass
    /// over the mix means no encoder restarts, so no gap, click or repeated block can appear at
    /// a video chunk join; AAC's priming is signalled by the muxer.
    /// With `export.audio.loudness` the mix is measured first and normalised (`NormalisedAudio`).
    /// With `export.audioOutputs` each output is its own mix (and normalised on its own), and
    /// the result holds one audio stream per output, in order (`AudioOutputStreams`).
    public static func renderAudio(_ plan: RenderPlan, to path: String, media: MediaSources = .local) throws -> ChunkArtifact {
        if plan.export.audioOutputs != nil { return try AudioOutputStreams.render(plan, to: path, media: media) }
        if let target = plan.export.audio.loudness { return try NormalisedAudio.render(plan, target: target, to: path, media: media) }
        let mixer = AudioMixer(plan: plan, media: media)
        precondition(mixer.hasAudio, "renderAudio on a plan without audio tracks")
        let partial = AtomicFile.temporaryPath(for: path)
        defer { unlink(partial) }
        let encoder = try AudioEncoder(codec: plan.export.audio.audioCodec ?? .aac, sampleRate: mixer.sampleRate,
                                       channels: mixer.channels, bitRate: plan.export.audio.bitRate)
        let writer = try MovieWriter(path: partial, fileType: plan.audioTaskContainer, faststart: false, video: nil, audio: encoder)
        let feed = AudioFeed(mixer: mixer, encoder: encoder)
        for packet in try feed.advance(to: mixer.sampleCount) { try writer.write(audio: packet) }
        for packet in try encoder.finish() { try writer.write(audio: packet) }
        try writer.finish()
        try AtomicFile.commit(partial, to: path)
        return try ChunkArtifact.measuring(kind: .audio, frames: FrameRange(start: 0, end: plan.frameCount), path: path)
    }
}
