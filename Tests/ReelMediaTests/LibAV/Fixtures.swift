import Foundation
import ReelCore
@testable import ReelKernels
@testable import ReelMedia

/// Media files for the libav tests, generated with the ffmpeg CLI into a fresh directory.
enum Fixtures {
    /// A clip whose frame n is a flat picture of luma `16 + 3n` (limited range), so a decoded
    /// frame tells its own index. Lossless H.264 with B-frames and a keyframe every `gop`.
    static func numberedClip(in dir: URL, rate: String = "25", frames: Int = 50, gop: Int = 10,
                             container: String = "mp4", extra: [String] = []) throws -> String {
        let path = dir.appendingPathComponent("numbered-\(rate.replacingOccurrences(of: "/", with: "_")).\(container)").path
        try TestMedia.run(["-f", "lavfi", "-i", "color=c=black:s=160x120:r=\(rate),geq=lum=16+3*N:cb=128:cr=128",
                           "-frames:v", String(frames), "-c:v", "libx264", "-preset", "veryfast", "-qp", "0",
                           "-bf", "2", "-g", String(gop), "-sc_threshold", "0", "-pix_fmt", "yuv420p"] + extra + [path])
        return path
    }

    /// The frame number a `numberedClip` picture carries.
    static func frameNumber(_ image: YUVImage) -> Int {
        let level = Int(image.y.row(image.height / 2)[image.width / 2])
        return Int((Double(level - 16) / 3).rounded())
    }

    /// A 160x120 picture, white top half, black bottom half, stored coded landscape with
    /// `rotate` metadata (a display matrix).
    static func rotatedClip(in dir: URL, degrees: Int) throws -> String {
        let plain = dir.appendingPathComponent("unrotated-\(degrees).mp4").path
        let path = dir.appendingPathComponent("rotated-\(degrees).mp4").path
        try TestMedia.run(["-f", "lavfi", "-i", "color=c=white:s=160x120:r=25,drawbox=x=0:y=60:w=160:h=60:color=black:t=fill,drawbox=x=0:y=0:w=40:h=60:color=gray:t=fill",
                           "-frames:v", "5", "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", plain])
        // FFmpeg 5.1 turns the `rotate` tag into a display matrix only when stream-copying.
        try TestMedia.run(["-i", plain, "-c", "copy", "-metadata:s:v:0", "rotate=\(degrees)", path])
        return path
    }

    /// Exact presentation times (asset time) of every frame, read with ffprobe.
    static func frameTimes(_ path: String) throws -> [Rational] {
        let streams = try TestMedia.ffprobeStreams(path, extra: ["-select_streams", "v:0"])
        let timeBase = Rational(parsing: streams.first?["time_base"] as? String ?? "1/1")!
        let json = try TestMedia.ffprobeJSON(path, extra: ["-select_streams", "v:0", "-show_entries", "frame=best_effort_timestamp"])
        let frames = json["frames"] as? [[String: Any]] ?? []
        let start = Rational(parsing: (json["format"] as? [String: Any])?["start_time"] as? String ?? "0") ?? .zero
        return frames.compactMap { ($0["best_effort_timestamp"] as? Int).map { Rational(Int64($0)) * timeBase - start } }
    }
}
