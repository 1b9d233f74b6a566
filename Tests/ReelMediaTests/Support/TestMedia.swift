import Foundation

/// Test media made at test time with the ffmpeg/ffprobe CLIs (never committed), and
/// reference decodes to check Reel's own libav code against.
enum TestMedia {
    struct ToolError: Error, CustomStringConvertible {
        var command: [String]
        var status: Int32
        var stderr: String
        var description: String { "\(command.joined(separator: " ")) exited \(status): \(stderr)" }
    }

    /// A fresh, empty directory under the system temporary directory.
    static func tempDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("reel-test-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs `tool` with `arguments`; returns stdout and stderr. Throws on a non-zero exit.
    @discardableResult
    static func tool(_ tool: String, _ arguments: [String]) throws -> (stdout: Data, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes concurrently so neither fills up and blocks the child.
        nonisolated(unsafe) var errData = Data()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        let stderr = String(decoding: errData, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw ToolError(command: [tool] + arguments, status: process.terminationStatus, stderr: stderr)
        }
        return (outData, stderr)
    }

    /// Runs `ffmpeg -nostdin -y -v error <args>`; returns its stderr (empty when all went well).
    @discardableResult
    static func run(_ ffmpegArgs: [String]) throws -> String {
        try tool("ffmpeg", ["-nostdin", "-y", "-v", "error"] + ffmpegArgs).stderr
    }

    /// `ffprobe -show_format -show_streams` (plus `extra` arguments) as parsed JSON.
    static func ffprobeJSON(_ path: String, extra: [String] = []) throws -> [String: Any] {
        let out = try tool("ffprobe", ["-v", "error", "-of", "json", "-show_format", "-show_streams"] + extra + [path]).stdout
        return try JSONSerialization.jsonObject(with: out) as? [String: Any] ?? [:]
    }

    /// The streams array of `ffprobeJSON`.
    static func ffprobeStreams(_ path: String, extra: [String] = []) throws -> [[String: Any]] {
        try ffprobeJSON(path, extra: extra)["streams"] as? [[String: Any]] ?? []
    }

    /// An 8-bit RGB picture: `width·height·3` bytes, row-major.
    struct RGBFrame {
        var width: Int
        var height: Int
        var pixels: [UInt8]
        func pixel(_ x: Int, _ y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
            let i = (y * width + x) * 3
            return (pixels[i], pixels[i + 1], pixels[i + 2])
        }
        /// Mean of (R+G+B)/3 over the picture.
        var meanLevel: Double { Double(pixels.reduce(0) { $0 + Int($1) }) / Double(pixels.count) }
    }

    /// Frame `index` (decode order of the output, i.e. presentation order) of `path` as RGB,
    /// decoded by the ffmpeg CLI (which applies the display matrix unless `autorotate` is false).
    static func decodeFrameRGB(_ path: String, index: Int, autorotate: Bool = true) throws -> RGBFrame {
        var args = ["-nostdin", "-v", "error"]
        if !autorotate { args.append("-noautorotate") }
        args += ["-i", path, "-vf", "select=eq(n\\,\(index))", "-frames:v", "1",
                 "-f", "image2pipe", "-c:v", "ppm", "-"]
        let data = try tool("ffmpeg", args).stdout
        return try parsePPM(data)
    }

    /// Parses a binary PPM (`P6 w h 255` header + RGB bytes).
    static func parsePPM(_ data: Data) throws -> RGBFrame {
        let bytes = [UInt8](data)
        var fields: [String] = []
        var i = 0
        while fields.count < 4 && i < bytes.count {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
            var token = ""
            while i < bytes.count, !(bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09) {
                token.append(Character(UnicodeScalar(bytes[i]))); i += 1
            }
            fields.append(token)
        }
        i += 1
        guard fields.count == 4, fields[0] == "P6", let w = Int(fields[1]), let h = Int(fields[2]), bytes.count >= i + w * h * 3 else {
            throw ToolError(command: ["parse ppm"], status: -1, stderr: "not a P6 picture: \(fields)")
        }
        return RGBFrame(width: w, height: h, pixels: Array(bytes[i..<(i + w * h * 3)]))
    }

    /// Decodes the first audio stream with the ffmpeg CLI into interleaved float samples.
    static func decodeAudio(_ path: String, sampleRate: Int, channels: Int) throws -> [Float] {
        let data = try tool("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-vn", "-ar", String(sampleRate),
                                       "-ac", String(channels), "-f", "f32le", "-c:a", "pcm_f32le", "-"]).stdout
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
}
