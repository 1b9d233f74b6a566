import Foundation
import Testing

/// Test media and measurements through the ffmpeg/ffprobe CLIs — an implementation
/// independent of Reel's, so the checks do not share Reel's bugs.
enum Media {
    struct Failure: Error, CustomStringConvertible { var description: String }

    /// A fresh temporary directory for one test.
    static func tempDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("reel-it-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs `executable` (in `currentDirectory` when given, else in the test's own).
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], allowFailure: Bool = false,
                    currentDirectory: URL? = nil, environment: [String: String] = [:]) throws -> (status: Int32, stdout: Data, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : "/usr/bin/\(executable)")
        process.arguments = arguments
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        // Every `reel render` gets a data home of its own: two renders sharing one would share
        // the local agents' caches, and the second is refused ("another agent is using this
        // cache directory") — right for users, wrong for tests that run side by side.
        // (`reel batch` too; a test that runs one batch twice gives its own, in `environment`.)
        let ownDataHome = executable == reel && ["render", "batch"].contains(arguments.first)
        if ownDataHome || !environment.isEmpty {
            var merged = ProcessInfo.processInfo.environment
            if ownDataHome { merged["REEL_DATA_HOME"] = try tempDirectory().appendingPathComponent("data-home").path }
            merged.merge(environment) { _, given in given }
            process.environment = merged
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Drain both pipes concurrently so a chatty process never blocks on a full pipe.
        nonisolated(unsafe) var errData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        let stderr = String(decoding: errData, as: UTF8.self)
        if process.terminationStatus != 0 && !allowFailure {
            throw Failure(description: "\(executable) \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): \(stderr)")
        }
        return (process.terminationStatus, outData, stderr)
    }

    static func ffmpeg(_ arguments: [String]) throws {
        try run("ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments)
    }

    static func probe(_ path: String) throws -> [String: Any] {
        let r = try run("ffprobe", ["-v", "error", "-print_format", "json", "-show_format", "-show_streams", path])
        return try JSONSerialization.jsonObject(with: r.stdout) as! [String: Any]
    }

    static func stream(_ probe: [String: Any], type: String) -> [String: Any]? {
        (probe["streams"] as? [[String: Any]])?.first { $0["codec_type"] as? String == type }
    }

    /// Every video frame's luma plane, limited range as coded (decoded by ffmpeg to yuv420p
    /// without scaling; `-pix_fmt gray` would stretch the levels to full range).
    static func lumaFrames(_ path: String, width: Int, height: Int) throws -> [[UInt8]] {
        let r = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        let lumaSize = width * height
        let frameSize = lumaSize + 2 * ((width + 1) / 2) * ((height + 1) / 2)
        let bytes = [UInt8](r.stdout)
        #expect(bytes.count % frameSize == 0, "decoded video is not a whole number of \(width)x\(height) frames")
        return stride(from: 0, to: bytes.count - frameSize + 1, by: frameSize).map { Array(bytes[$0..<($0 + lumaSize)]) }
    }

    /// Every video frame's luma as a BT.709 output codes it, for a source ffmpeg reads as BT.601
    /// (an untagged SD clip), re-coded by `bt601ToBT709`. What a per-pixel reference starts
    /// from when the output's matrix is not the source's.
    static func lumaFramesInBT709(_ path: String, width: Int, height: Int) throws -> [[UInt8]] {
        let r = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-vf", bt601ToBT709,
                                   "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        let lumaSize = width * height
        let frameSize = lumaSize + 2 * ((width + 1) / 2) * ((height + 1) / 2)
        let bytes = [UInt8](r.stdout)
        #expect(bytes.count % frameSize == 0, "decoded video is not a whole number of \(width)x\(height) frames")
        return stride(from: 0, to: bytes.count - frameSize + 1, by: frameSize).map { Array(bytes[$0..<($0 + lumaSize)]) }
    }

    /// ffmpeg's `colorspace` filter re-coding a BT.601 4:2:0 picture in BT.709, limited range:
    /// with primaries and transfer the same on both sides it takes its matrix-only path, which
    /// is Reel's for an SD source in a BT.709 edit (docs/colour.md, "SDR sources"): each pixel's
    /// luma with its 2×2 block's chroma, chroma from chroma alone, no clipping between.
    /// (Through swscale's float R'G'B' instead, saturated edges clip: 45 dB on testsrc's luma.)
    static let bt601ToBT709 = "colorspace=ispace=smpte170m:space=bt709:iprimaries=bt709:primaries=bt709:itrc=bt709:trc=bt709"
        + ":irange=tv:range=tv:dither=none:format=yuv420p"

    /// An untagged SD source's frames as a BT.709 render of them shows them in R'G'B': re-coded
    /// in BT.709 (`bt601ToBT709`), then converted as ffmpeg converts a BT.709 video.
    static let sdSourceAsBT709RGB = bt601ToBT709 + ",scale=in_color_matrix=bt709:in_range=tv,format=rgb24"

    /// Every video frame as packed RGB24 (through `filter` first, if given).
    static func rgbFrames(_ path: String, width: Int, height: Int, filter: String? = nil) throws -> [[UInt8]] {
        let r = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v:0"] + (filter.map { ["-vf", $0] } ?? [])
                                  + ["-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        let size = width * height * 3
        let bytes = [UInt8](r.stdout)
        return stride(from: 0, to: bytes.count - size + 1, by: size).map { Array(bytes[$0..<($0 + size)]) }
    }

    /// The first audio stream decoded to 48 kHz float, channels interleaved.
    static func audioSamples(_ path: String, channels: Int = 2) throws -> [Float] {
        let r = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-f", "f32le", "-ac", "\(channels)", "-ar", "48000", "-"])
        return r.stdout.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// What `ffmpeg -v error -i FILE -f null -` prints: must be nothing for a correct file.
    static func decodeErrors(_ path: String) throws -> String {
        let r = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "null", "-"], allowFailure: true)
        return r.stderr + (r.status == 0 ? "" : " (exit \(r.status))")
    }

    /// Frame presentation times in seconds, in decode order of presentation.
    static func framePTS(_ path: String) throws -> [Double] {
        let r = try run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time", "-of", "csv=p=0", path])
        return String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").compactMap { Double($0) }.sorted()
    }

    static func rms(_ samples: ArraySlice<Float>) -> Double {
        guard !samples.isEmpty else { return 0 }
        return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }

    /// PSNR of two 8-bit planes; +∞ when identical.
    static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        precondition(a.count == b.count)
        var se = 0.0
        for i in 0..<a.count { let d = Double(a[i]) - Double(b[i]); se += d * d }
        if se == 0 { return .infinity }
        return 10 * log10(255 * 255 / (se / Double(a.count)))
    }

    /// Mean of a rectangle of a luma plane.
    static func mean(_ plane: [UInt8], width: Int, x: Int, y: Int, w: Int, h: Int) -> Double {
        var sum = 0
        for row in y..<(y + h) { for col in x..<(x + w) { sum += Int(plane[row * width + col]) } }
        return Double(sum) / Double(w * h)
    }

    /// The `reel` executable built beside the test bundle.
    static var reel: String {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [dir, dir.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("reel").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return dir.appendingPathComponent("reel").path
    }
}
