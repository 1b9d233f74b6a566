import Foundation
import ReelCore

/// How far a render has come; handed to a progress callback after every frame.
public struct RenderProgress: Sendable {
    public var framesDone: Int
    public var frameCount: Int
    public var fraction: Double { frameCount == 0 ? 1 : Double(framesDone) / Double(frameCount) }
}

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
