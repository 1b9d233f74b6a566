import Foundation
import ReelCore
import Testing
@testable import ReelKernels
@testable import ReelMedia

/// Renders compositions with filters and blend modes in process and compares the frames,
/// plane by plane, with independent references: `Tests/References/filter_reference.py`
/// (numpy formulas) or ffmpeg's own filters, run on frames ffmpeg extracted from the sources.
enum FilterReference {
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("References/filter_reference.py").path

    static let width = 320, height = 240

    /// The matrices of the numpy reference (`--source-matrix`, `--output-matrix`): the test
    /// clips are untagged and 240 lines high, so they are read as BT.601 (as ffmpeg and
    /// AVFoundation guess them); the output carries no colour keys, so it is BT.709.
    static let matrices = ["--source-matrix", "bt601", "--output-matrix", "bt709"]
    /// For a reference computed from one of Reel's own renders (already BT.709).
    static let outputMatrices = ["--source-matrix", "bt709", "--output-matrix", "bt709"]

    /// ffmpeg's decode of an untagged clip as the output shows it: read as BT.601 by swscale,
    /// through float RGB, into BT.709 Y'CbCr (limited range) by swscale again — a conversion
    /// that shares no code with Reel's (zimg).
    static let toOutputMatrix = "scale=in_color_matrix=bt601:in_range=tv,format=gbrpf32le,scale=out_color_matrix=bt709:out_range=tv"

    /// A lossless 320×240 clip of `frames` frames at 25 fps from a lavfi `source` (a test pattern).
    static func clip(_ source: String, frames: Int = 3, in dir: URL, name: String) throws -> String {
        let path = dir.appendingPathComponent(name).path
        let options = "s=\(width)x\(height):r=25"
        let spec = source.contains("=") ? "\(source):\(options)" : "\(source)=\(options)"
        try TestMedia.run(["-f", "lavfi", "-i", spec, "-frames:v", "\(frames)",
                           "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p", path])
        return path
    }

    /// The decoded yuv420p frames of `path`, as ffmpeg decodes them, in a raw file.
    static func raw(_ path: String, in dir: URL, filter: String? = nil, name: String) throws -> String {
        let out = dir.appendingPathComponent(name).path
        var args = ["-i", path]
        if let filter { args += ["-vf", filter] }
        try TestMedia.run(args + ["-f", "rawvideo", "-pix_fmt", "yuv420p", out])
        return out
    }

    /// Renders the composition `json` (written into `dir`) frame by frame in process and
    /// writes the frames as raw yuv420p.
    static func render(_ json: String, in dir: URL, name: String) throws -> String {
        let composition = dir.appendingPathComponent(name + ".json").path
        try json.write(toFile: composition, atomically: true, encoding: .utf8)
        let plan = try CompositionLoader.load(path: composition)
        let renderer = FrameRenderer(plan: plan)
        var bytes = Data()
        for k in 0..<plan.frameCount {
            let frame = try renderer.render(frame: k)
            for plane in [frame.y, frame.u, frame.v] {
                for r in 0..<plane.height { bytes.append(UnsafeBufferPointer(start: plane.row(r), count: plane.width)) }
            }
        }
        let out = dir.appendingPathComponent(name + ".yuv").path
        try bytes.write(to: URL(fileURLWithPath: out))
        return out
    }

    /// A one-instruction composition of `frames` frames at 320×240 whose layers (top first)
    /// are `layers` (layer instruction JSON with the track ids of `clips`).
    static func composition(clips: [String], layers: [String], frames: Int = 3, pictureFilters: String? = nil, extraAssets: String = "") -> String {
        let assets = clips.enumerated().map { "\"c\($0.offset)\": {\"url\": \"\($0.element)\"}" }.joined(separator: ", ")
        let tracks = clips.indices.map { "{\"id\": \($0 + 1), \"mediaType\": \"video\", \"segments\": [{\"asset\": \"c\($0)\", \"at\": 0}]}" }
        let duration = "\"\(frames)/25\""
        return """
            {"formatVersion": 1,
             "assets": {\(assets)\(extraAssets)},
             "tracks": [\(tracks.joined(separator: ", "))],
             "videoComposition": {"renderSize": {"width": \(width), "height": \(height)}, "frameDuration": "1/25",
               \(pictureFilters.map { "\"filters\": \($0)," } ?? "")
               "instructions": [{"timeRange": {"start": 0, "duration": \(duration)}, "layerInstructions": [\(layers.joined(separator: ", "))]}]}}
            """
    }

    /// Runs the reference script; returns its standard output.
    @discardableResult
    static func python(_ arguments: [String]) throws -> Data {
        try TestMedia.tool("python3", [script] + arguments).stdout
    }

    /// Per-plane PSNR (dB) of two raw yuv420p files of 320×240 frames, `margin` luma pixels
    /// left out at every edge and the samples `skip` (a mask file) marks (999 for identical
    /// planes); `compared` is the share of samples compared.
    static func psnr(_ a: String, _ b: String, margin: Int = 0, skip: String? = nil) throws -> [String: Double] {
        let out = try python(["psnr", "--size", "\(width)x\(height)", "--a", a, "--b", b, "--margin", "\(margin)"]
                             + (skip.map { ["--skip", $0] } ?? []))
        let json = try JSONSerialization.jsonObject(with: out) as? [String: Any] ?? [:]
        return json.compactMapValues { $0 as? Double }
    }
}
