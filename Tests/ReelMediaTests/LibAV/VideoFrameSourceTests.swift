import Foundation
import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelKernels
@testable import ReelMedia

@Suite("VideoFrameSource", .blocking)
struct VideoFrameSourceTests {
    @Test("sequential reads at and between frame times pick the last frame with pts ≤ t", arguments: ["25", "30000/1001"])
    func sequential(rate: String) throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Fixtures.numberedClip(in: dir, rate: rate, frames: 40)
        let frameDuration = Rational.one / Rational(parsing: rate)!
        let source = try VideoFrameSource(path: path)
        #expect(source.naturalSize == PixelSize(width: 160, height: 120))
        for k in 0..<40 {
            let t = frameDuration * k
            #expect(Fixtures.frameNumber(try source.frame(at: t)) == k, "at \(t)")
            // Just before the next frame: still frame k (exact comparison, no rounding).
            let late = t + frameDuration - Rational(1, 1_000_000)
            #expect(Fixtures.frameNumber(try source.frame(at: late)) == k, "at \(late)")
        }
        // After the end: the last frame. Before the start: the first.
        #expect(Fixtures.frameNumber(try source.frame(at: Rational(100))) == 39)
        #expect(Fixtures.frameNumber(try source.frame(at: Rational(-1))) == 0)
    }

    @Test("backward seeks and forward jumps land on the exact frame")
    func seeking() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Fixtures.numberedClip(in: dir, frames: 75, gop: 10)
        let source = try VideoFrameSource(path: path)
        // Force seeks for short forward jumps too (the clip is shorter than the default).
        source.seekThreshold = Rational(1, 5)
        let frames = [37, 7, 74, 0, 13, 12, 60, 59, 61, 20, 45, 9, 10, 11, 70]
        for k in frames {
            let t = Rational(Int64(k), 25) + Rational(1, 100)
            #expect(Fixtures.frameNumber(try source.frame(at: t)) == k, "frame \(k)")
        }
        #expect(source.seekCount >= 8)
    }

    @Test("variable frame rate: frame times come from the file, not a nominal rate")
    func variableFrameRate() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Frames 0–9 every 40 ms, then every 100 ms, 70 ms, … (setpts with uneven steps).
        let path = try Fixtures.numberedClip(
            in: dir, frames: 30, container: "mkv",
            extra: ["-vf", "setpts='if(lt(N,10),N*0.04,if(lt(N,20),0.4+(N-10)*0.1,1.4+(N-20)*0.07))/TB'", "-fps_mode", "vfr"])
        let times = try Fixtures.frameTimes(path)
        #expect(times.count == 30)
        #expect(Set(zip(times, times.dropFirst()).map { $1 - $0 }).count >= 3, "not VFR: \(times)")
        let source = try VideoFrameSource(path: path)
        for (k, t) in times.enumerated() {
            #expect(Fixtures.frameNumber(try source.frame(at: t)) == k, "frame \(k) at \(t)")
            if k + 1 < times.count {
                let mid = (t + times[k + 1]) / Rational(2)
                #expect(Fixtures.frameNumber(try source.frame(at: mid)) == k, "between \(k) and \(k + 1)")
            }
        }
        // Random access on the same file.
        source.seekThreshold = Rational(1, 10)
        for k in [25, 3, 17, 29, 0, 11] {
            #expect(Fixtures.frameNumber(try source.frame(at: times[k])) == k, "seek to frame \(k)")
        }
    }

    @Test("asset time zero is the container's start time (MPEG-TS starts at 1.4 s)")
    func containerStartTime() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Fixtures.numberedClip(in: dir, frames: 30, container: "ts")
        let start = Double((try TestMedia.ffprobeJSON(path)["format"] as? [String: Any])?["start_time"] as? String ?? "") ?? 0
        #expect(start > 1, "the fixture should have a non-zero start time, has \(start)")
        let source = try VideoFrameSource(path: path)
        for k in [0, 1, 2, 15, 29, 4] {
            #expect(Fixtures.frameNumber(try source.frame(at: Rational(Int64(k), 25))) == k, "frame \(k)")
        }
        let asset = try MediaProbe.describe(path: path)
        #expect(asset.duration == Rational(30, 25))
    }

    @Test("the same YUVImage object is returned while the chosen frame is unchanged")
    func identity() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Fixtures.numberedClip(in: dir, frames: 10)
        let source = try VideoFrameSource(path: path)
        #expect(source.seekCount == 0)
        let a = try source.frame(at: .zero)
        let b = try source.frame(at: Rational(1, 50))
        let c = try source.frame(at: Rational(1, 25))
        #expect(a === b)
        #expect(a !== c)
        #expect(try source.frame(at: Rational(3, 50)) === c)
    }

    @Test("a frame nobody holds is written over by the next; a held frame never changes")
    func reuse() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Fixtures.numberedClip(in: dir, frames: 10)
        let source = try VideoFrameSource(path: path)
        // Not held: the next frame comes in the same image (no allocation per frame).
        let dropped = ObjectIdentifier(try source.frame(at: .zero))
        let next = try source.frame(at: Rational(1, 25))
        #expect(ObjectIdentifier(next) == dropped)
        #expect(Fixtures.frameNumber(next) == 1)
        // Held: the next frame is a new image and the held one still shows its frame.
        let held = next
        let later = try source.frame(at: Rational(2, 25))
        #expect(later !== held)
        #expect(Fixtures.frameNumber(held) == 1)
        #expect(Fixtures.frameNumber(later) == 2)
    }

    @Test("decoded pictures equal ffmpeg's decode of the same frame", arguments: [0, 17, 41])
    func matchesFFmpeg(index: Int) throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("testsrc.mp4").path
        try TestMedia.run(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=2", "-c:v", "libx264", "-preset", "veryfast",
                           "-g", "12", "-pix_fmt", "yuv420p", path])
        // Read in the clip's own colour (untagged SD: BT.601), so that only decoding is compared
        // here (conversions between colour spaces are ColourConversionTests').
        let source = try VideoFrameSource(path: path, decoderThreads: 2, colour: OutputColour(space: .bt601))
        let image = try source.frame(at: Rational(Int64(index), 25))
        // Our frame → PNG (PNGWriter) → ffmpeg's RGB, against ffmpeg's own RGB of frame `index`.
        let png = dir.appendingPathComponent("ours.png").path
        try PNGWriter.write(image, matrix: .smpte170M, to: png)
        let ours = try TestMedia.decodeFrameRGB(png, index: 0)
        let reference = try TestMedia.decodeFrameRGB(path, index: index)
        let neighbour = try TestMedia.decodeFrameRGB(path, index: index + 1)
        #expect(ours.width == reference.width && ours.height == reference.height)
        let error = meanAbsoluteDifference(ours.pixels, reference.pixels)
        #expect(error < 4, "mean difference \(error)")
        // The comparison can tell neighbouring frames apart (testsrc2 moves every frame).
        #expect(meanAbsoluteDifference(ours.pixels, neighbour.pixels) > error + 2)
    }

    @Test("a source with alpha gives yuva420p images")
    func alpha() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("alpha.mov").path
        try TestMedia.run(["-f", "lavfi", "-i", "color=c=white@0.25:s=64x48:r=10:d=0.5,format=argb", "-c:v", "qtrle", path])
        let source = try VideoFrameSource(path: path)
        #expect(source.hasAlpha)
        let image = try source.frame(at: Rational(1, 5))
        let a = try #require(image.a)
        #expect(abs(Int(a.row(20)[20]) - 64) <= 1)
        #expect(abs(Int(image.y.row(20)[20]) - 235) <= 1)
        #expect(try MediaProbe.describe(path: path).video?.hasAlpha == true)
    }

    @Test("full-range (yuvj) sources come out limited range")
    func fullRange() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("mjpeg.avi").path
        try TestMedia.run(["-f", "lavfi", "-i", "color=c=white:s=64x48:r=10:d=0.5", "-c:v", "mjpeg", "-pix_fmt", "yuvj420p", path])
        let image = try VideoFrameSource(path: path).frame(at: .zero)
        #expect(abs(Int(image.y.row(10)[10]) - 235) <= 1)
        let black = dir.appendingPathComponent("black.avi").path
        try TestMedia.run(["-f", "lavfi", "-i", "color=c=black:s=64x48:r=10:d=0.5", "-c:v", "mjpeg", "-pix_fmt", "yuvj420p", black])
        #expect(abs(Int(try VideoFrameSource(path: black).frame(at: .zero).y.row(10)[10]) - 16) <= 1)
    }
}

func meanAbsoluteDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
    guard a.count == b.count, !a.isEmpty else { return .infinity }
    var sum = 0
    for i in a.indices { sum += abs(Int(a[i]) - Int(b[i])) }
    return Double(sum) / Double(a.count)
}
