import Foundation
@testable import ReelCore
import ReelMedia

/// Generated sources with known content, and a way to render a composition written inline.
enum Fixtures {
    /// A 64x48 clip at 25 fps whose frame n has luma 16 + 4·n everywhere (lossless, B-frames,
    /// GOP 10, so frame picking and seeking are both exercised).
    static func numberedClip(in dir: URL, seconds: Int = 2, name: String = "numbered.mp4") throws -> String {
        let path = dir.appendingPathComponent(name).path
        try Media.ffmpeg(["-f", "lavfi", "-i", "nullsrc=s=64x48:r=25:d=\(seconds),geq=lum='16+4*N':cb=128:cr=128",
                          "-c:v", "libx264", "-qp", "0", "-g", "10", "-bf", "2", "-pix_fmt", "yuv420p", path])
        return path
    }

    /// Expected luma of numbered-clip frame `n`.
    static func numberedLuma(_ n: Int64) -> Double { Double(16 + 4 * n) }

    /// Writes `json` as a composition in `dir`, renders it in-process and returns the output path.
    static func render(_ json: String, in dir: URL, name: String = "out.mp4", workers: Int = 1, chunkSeconds: Rational = 10) throws -> (path: String, plan: RenderPlan) {
        let compositionPath = dir.appendingPathComponent(name + ".json").path
        try json.write(toFile: compositionPath, atomically: true, encoding: .utf8)
        let plan = try CompositionLoader.load(path: compositionPath)
        let output = dir.appendingPathComponent(name).path
        try LocalRender.render(plan, to: output, options: LocalRender.Options(workers: workers, chunkSeconds: chunkSeconds, encoderThreads: 2))
        return (output, plan)
    }

    /// Byte offsets of the top-level MP4 boxes, by type.
    static func topLevelBoxes(_ path: String) throws -> [(type: String, offset: Int)] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        var boxes: [(String, Int)] = []
        var offset = 0
        while offset + 8 <= data.count {
            var size = Int(data[offset]) << 24 | Int(data[offset + 1]) << 16 | Int(data[offset + 2]) << 8 | Int(data[offset + 3])
            let type = String(decoding: data[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if size == 1 {
                size = (0..<8).reduce(0) { $0 << 8 | Int(data[offset + 8 + $1]) }
            } else if size == 0 {
                size = data.count - offset
            }
            boxes.append((type, offset))
            guard size >= 8 else { break }
            offset += size
        }
        return boxes
    }
}
