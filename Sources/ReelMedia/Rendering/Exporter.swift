import Foundation
import ReelCore

/// How far a render has come; handed to a progress callback after every frame.
public struct RenderProgress: Sendable {
    public var framesDone: Int
    public var frameCount: Int
    public var fraction: Double { frameCount == 0 ? 1 : Double(framesDone) / Double(frameCount) }
}

/// Settings of one render that are not part of the composition.
public struct ExportOptions: Sendable {
    /// x264 threads. Fixed per job (not per machine) because x264's output depends on its
    /// thread count: the same composition must give the same bytes wherever it renders.
    public var encoderThreads: Int = 4
    /// Decoder threads per source (does not affect output bytes).
    public var decoderThreads: Int = 1
    public init(encoderThreads: Int = 4, decoderThreads: Int = 1) {
        self.encoderThreads = encoderThreads
        self.decoderThreads = decoderThreads
    }
}

extension RenderPlan {
    /// The encoder settings every chunk of this plan uses.
    public func videoEncoderSettings(threads: Int) -> VideoEncoderSettings {
        VideoEncoderSettings(width: outputSize.width, height: outputSize.height, frameDuration: frameDuration,
                             crf: export.video.crf, x264Preset: export.video.x264Preset, profile: export.video.profile,
                             gopFrames: export.video.gopFrames, threads: threads, bitRate: export.video.bitRate)
    }
}

/// Renders a whole plan to one file on this machine: video frames and the audio mix are
/// encoded side by side and interleaved as they are produced (memory stays flat however long
/// the composition is).
///
/// The output appears atomically: everything is written to a temporary name beside the
/// target, flushed to disk, then renamed, so a crash never leaves a half file under the
/// output name.
public enum Exporter {
    public static func export(_ plan: RenderPlan, to outputPath: String, options: ExportOptions = ExportOptions(),
                              progress: ((RenderProgress) -> Void)? = nil) throws {
        let partial = AtomicFile.temporaryPath(for: outputPath)
        defer { unlink(partial) }   // no-op once renamed
        let renderer = FrameRenderer(plan: plan, decoderThreads: options.decoderThreads)
        let videoEncoder = try VideoEncoder(settings: plan.videoEncoderSettings(threads: options.encoderThreads))
        let mixer = AudioMixer(plan: plan)
        let audioEncoder = mixer.hasAudio
            ? try AudioEncoder(sampleRate: mixer.sampleRate, channels: mixer.channels, bitRate: plan.export.audio.bitRate)
            : nil
        let writer = try MovieWriter(path: partial, fileType: plan.export.fileType.rawValue,
                                     faststart: plan.export.optimizeForNetworkUse, video: videoEncoder, audio: audioEncoder)
        var audio = audioEncoder.map { AudioFeed(mixer: mixer, encoder: $0) }

        for k in 0..<plan.frameCount {
            let frame = try renderer.render(frame: k)
            for packet in try videoEncoder.encode(frame, frameIndex: Int64(k)) { try writer.write(video: packet) }
            // Keep audio level with video so the muxer interleaves without buffering the file.
            let videoEnd = plan.frameDuration * (k + 1)
            if let feed = audio {
                for packet in try feed.advance(to: videoEnd.scaled(to: Int64(mixer.sampleRate))) { try writer.write(audio: packet) }
            }
            progress?(RenderProgress(framesDone: k + 1, frameCount: plan.frameCount))
        }
        for packet in try videoEncoder.finish() { try writer.write(video: packet) }
        if let feed = audio {
            for packet in try feed.advance(to: mixer.sampleCount) { try writer.write(audio: packet) }
            for packet in try feed.encoder.finish() { try writer.write(audio: packet) }
        }
        audio = nil
        try writer.finish()
        try AtomicFile.commit(partial, to: outputPath)
    }
}

/// Pulls mixed audio in fixed blocks and feeds the AAC encoder, up to a target sample.
final class AudioFeed {
    let mixer: AudioMixer
    let encoder: AudioEncoder
    private(set) var position: Int64 = 0
    private let block = 4096
    private let buffers: [UnsafeMutablePointer<Float>]

    init(mixer: AudioMixer, encoder: AudioEncoder) {
        self.mixer = mixer
        self.encoder = encoder
        buffers = (0..<mixer.channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 4096) }
    }
    deinit { buffers.forEach { $0.deallocate() } }

    /// Mixes and encodes samples `[position, min(target, total))`.
    func advance(to target: Int64) throws -> [EncodedPacket] {
        var packets: [EncodedPacket] = []
        let end = min(target, mixer.sampleCount)
        while position < end {
            let n = Int(min(Int64(block), end - position))
            try mixer.mix(start: position, count: n, into: buffers)
            packets += try encoder.encode(planar: buffers.map { UnsafePointer($0) }, count: n)
            position += Int64(n)
        }
        return packets
    }
}

/// Write-then-rename: the output name only ever holds a complete, flushed file.
public enum AtomicFile {
    /// A hidden name in the same directory (so the rename cannot cross file systems).
    public static func temporaryPath(for path: String) -> String {
        let url = URL(fileURLWithPath: path)
        let ext = url.pathExtension.isEmpty ? "" : "." + url.pathExtension
        return url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent).partial-\(getpid())\(ext)").path
    }

    /// fsyncs `partial`, renames it to `path`, and fsyncs the directory so the rename is durable.
    public static func commit(_ partial: String, to path: String) throws {
        try fsync(path: partial)
        guard rename(partial, path) == 0 else {
            throw RenderError.io("cannot rename \(partial) to \(path): \(String(cString: strerror(errno)))")
        }
        try? fsync(path: URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }

    static func fsync(path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw RenderError.io("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard Foundation.fsync(fd) == 0 else { throw RenderError.io("cannot fsync \(path): \(String(cString: strerror(errno)))") }
    }
}
