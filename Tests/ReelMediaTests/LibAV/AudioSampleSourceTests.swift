import Foundation
import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelMedia

@Suite("AudioSampleSource", .blocking)
struct AudioSampleSourceTests {
    /// Reads `count` samples per channel from `start` into fresh arrays.
    static func read(_ source: AudioSampleSource, start: Int64, count: Int) throws -> [[Float]] {
        var out = [[Float]](repeating: [Float](repeating: .nan, count: count), count: source.channels)
        let pointers = (0..<source.channels).map { ch in UnsafeMutablePointer<Float>.allocate(capacity: count) }
        defer { pointers.forEach { $0.deallocate() } }
        try source.read(start: start, count: count, into: pointers)
        for ch in 0..<source.channels { out[ch] = Array(UnsafeBufferPointer(start: pointers[ch], count: count)) }
        return out
    }

    static func rms(_ x: ArraySlice<Float>) -> Double {
        (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(x.count, 1))).squareRoot()
    }

    /// Index one past the last sample with |x| > threshold.
    static func end(_ x: [Float], threshold: Float = 1e-3) -> Int {
        (x.lastIndex { abs($0) > threshold } ?? -1) + 1
    }

    struct Source: Sendable, CustomStringConvertible {
        var name: String
        var ffmpegArgs: [String]
        var description: String { name }
    }

    static let sources = [
        Source(name: "mono 44.1 kHz AAC", ffmpegArgs: ["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=44100:duration=2", "-c:a", "aac", "-b:a", "128k"]),
        Source(name: "5.1 48 kHz PCM", ffmpegArgs: ["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=2",
                                                  "-af", "pan=5.1|FL=c0|FR=c0|FC=c0|LFE=c0|BL=c0|BR=c0", "-c:a", "pcm_s16le"]),
    ]

    static func make(_ source: Source, in dir: URL) throws -> String {
        let path = dir.appendingPathComponent(source.name.contains("AAC") ? "audio.m4a" : "audio.wav").path
        try TestMedia.run(source.ffmpegArgs + [path])
        return path
    }

    @Test("comes out at 48 kHz stereo with the level and length swresample's CLI gives", arguments: sources)
    func levelAndLength(source: Source) throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Self.make(source, in: dir)
        let audio = try AudioSampleSource(path: path, sampleRate: 48000, channels: 2)
        let samples = try Self.read(audio, start: 0, count: 3 * 48000)
        let reference = try TestMedia.decodeAudio(path, sampleRate: 48000, channels: 2)
        let referenceLeft = stride(from: 0, to: reference.count, by: 2).map { reference[$0] }
        // Level: same RMS as ffmpeg's own resample + downmix, over the steady middle second.
        let ours = Self.rms(samples[0][24000..<72000]), theirs = Self.rms(referenceLeft[24000..<72000])
        #expect(theirs > 0.01)
        #expect(abs(ours - theirs) / theirs < 0.01, "rms \(ours) vs \(theirs)")
        #expect(abs(Self.rms(samples[1][24000..<72000]) - ours) < 1e-4)
        // Length: 2 s (AAC may ring on for part of a frame), then silence.
        let end = Self.end(samples[0])
        #expect(abs(end - 96000) <= 1100, "ends at \(end)")
        #expect(abs(end - Self.end(referenceLeft)) <= 64)
        #expect(samples[0][(96000 + 2048)...].allSatisfy { $0 == 0 })
        // Sample-aligned with ffmpeg's decode (same start, same resampler).
        let n = min(90000, referenceLeft.count)
        let diff = zip(samples[0][1000..<n], referenceLeft[1000..<n]).map { abs($0 - $1) }.max() ?? 1
        #expect(diff < 2e-3, "max difference to ffmpeg \(diff)")
    }

    @Test("reading in pieces equals one read", arguments: sources)
    func piecewise(source: Source) throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Self.make(source, in: dir)
        let total = 100_000
        let whole = try Self.read(AudioSampleSource(path: path, sampleRate: 48000, channels: 2), start: 0, count: total)
        let pieces = try AudioSampleSource(path: path, sampleRate: 48000, channels: 2)
        var joined: [[Float]] = [[], []]
        var position = 0
        let sizes = [1, 1023, 1024, 7, 4800, 333, 30000, 2, 17_000]
        var i = 0
        while position < total {
            let count = min(sizes[i % sizes.count], total - position)
            let part = try Self.read(pieces, start: Int64(position), count: count)
            joined[0] += part[0]; joined[1] += part[1]
            position += count; i += 1
        }
        #expect(joined[0] == whole[0])
        #expect(joined[1] == whole[1])
    }

    @Test("a read after a seek equals the same range of a sequential read", arguments: sources)
    func seekAlignment(source: Source) throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Self.make(source, in: dir)
        let sequential = try Self.read(AudioSampleSource(path: path, sampleRate: 48000, channels: 2), start: 0, count: 96000)
        let random = try AudioSampleSource(path: path, sampleRate: 48000, channels: 2)
        for (start, count) in [(70_001, 5000), (12_345, 4096), (50_000, 1), (90_000, 6000), (30_000, 9999), (1, 100)] {
            let part = try Self.read(random, start: Int64(start), count: count)
            let expected = sequential[0][start..<min(start + count, 96000)]
            let worst = zip(part[0], expected).map { abs($0 - $1) }.max() ?? 0
            let firstBad = zip(part[0], expected).enumerated().first { abs($0.element.0 - $0.element.1) >= 1e-4 }?.offset
            // -66 dBFS: a re-seek to the very top of an AAC file differs by ~3e-4 in its
            // first milliseconds (decoder state after a flush vs. a fresh decoder).
            #expect(worst < 5e-4, "at \(start): max difference \(worst), first bad offset \(String(describing: firstBad))")
        }
    }

    @Test("zeros before the audio starts and negative indices")
    func leadingSilence() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Self.make(Self.sources[1], in: dir)
        let audio = try AudioSampleSource(path: path, sampleRate: 48000, channels: 1)
        let head = try Self.read(audio, start: -1000, count: 2000)
        #expect(head[0][..<1000].allSatisfy { $0 == 0 })
        #expect(head[0][1000...].contains { abs($0) > 0.01 })
    }
}
