import Foundation
import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelMedia

/// Media opened through a registered `ByteRangeSource` decodes exactly like the same file
/// opened by path, and a short read of a long file touches only a small part of it.
@Suite("RemoteMedia", .blocking)
struct RemoteMediaTests {
    /// A 2 s 160x120 clip with B-frames and AAC audio.
    static func smallClip(in dir: URL) throws -> String {
        let path = dir.appendingPathComponent("small.mp4").path
        try TestMedia.run(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=2",
                           "-f", "lavfi", "-i", "sine=frequency=660:sample_rate=44100:duration=2",
                           "-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-g", "12", "-pix_fmt", "yuv420p",
                           "-c:a", "aac", "-b:a", "64k", path])
        return path
    }

    static func audio(_ source: AudioSampleSource, start: Int64, count: Int) throws -> [[Float]] {
        let pointers = (0..<source.channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: count) }
        defer { pointers.forEach { $0.deallocate() } }
        try source.read(start: start, count: count, into: pointers)
        return pointers.map { Array(UnsafeBufferPointer(start: $0, count: count)) }
    }

    @Test func remoteClipDecodesLikeTheFile() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Self.smallClip(in: dir)
        let source = try CountingFileSource(path: path)
        try RemoteFixtures.withRegistered(source) { url in
            #expect(try MediaProbe.describe(path: url) == MediaProbe.describe(path: path))

            let local = try VideoFrameSource(path: path)
            let remote = try VideoFrameSource(path: url)
            #expect(remote.naturalSize == local.naturalSize)
            // Forward, a jump back, and the last frame: seeks go through the seek callback.
            for t in [Rational(0), Rational(13, 25), Rational(1), Rational(49, 25), Rational(1, 5), Rational(3)] {
                let a = try local.frame(at: t), b = try remote.frame(at: t)
                #expect(RemoteFixtures.bytes(b) == RemoteFixtures.bytes(a), "frame at \(t)")
            }

            let localAudio = try AudioSampleSource(path: path, sampleRate: 48000, channels: 2)
            let remoteAudio = try AudioSampleSource(path: url, sampleRate: 48000, channels: 2)
            for start in [Int64(0), 48000, 12345] {
                let a = try Self.audio(localAudio, start: start, count: 9600)
                let b = try Self.audio(remoteAudio, start: start, count: 9600)
                #expect(a == b, "audio from sample \(start)")
                #expect(a[0].contains { abs($0) > 0.01 }, "the test tone is audible")
            }

            let localPackets = try PacketReader(path: path, kind: "video")
            let remotePackets = try PacketReader(path: url, kind: "video")
            var count = 0
            while let a = try localPackets.next() {
                #expect(try remotePackets.next() == a)
                count += 1
            }
            #expect(try remotePackets.next() == nil)
            #expect(count == 50)
        }
        #expect(source.bytesRead > 0)
    }

    @Test func remoteStillDecodesLikeTheFile() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("logo.png").path
        try TestMedia.run(["-f", "lavfi", "-i", "testsrc2=s=96x64", "-frames:v", "1", path])
        try RemoteFixtures.withRegistered(try CountingFileSource(path: path)) { url in
            let description = try MediaProbe.describe(path: url)
            #expect(description.kind == .still)
            #expect(description == (try MediaProbe.describe(path: path)))
            #expect(RemoteFixtures.bytes(try StillImage.load(path: url)) == RemoteFixtures.bytes(try StillImage.load(path: path)))
        }
    }

    /// Half a second of video and audio from the middle of a 20 s clip reads only what the
    /// index and those GOPs need — not the file — whether the index is first or last.
    @Test(arguments: ["faststart", "moov at end"])
    func shortReadTouchesLittleOfTheFile(layout: String) throws {
        let clips = try RemoteFixtures.longClips.get()
        let path = layout == "faststart" ? clips.faststart : clips.moovAtEnd
        let source = try CountingFileSource(path: path)
        try RemoteFixtures.withRegistered(source) { url in
            let video = try VideoFrameSource(path: url)
            let local = try VideoFrameSource(path: path)
            for k in 0..<13 {
                let t = Rational(10) + Rational(Int64(k), 25)
                #expect(RemoteFixtures.bytes(try video.frame(at: t)) == RemoteFixtures.bytes(try local.frame(at: t)))
            }
            let audio = try AudioSampleSource(path: url, sampleRate: 48000, channels: 2)
            let samples = try Self.audio(audio, start: 480_000, count: 24_000)
            #expect(samples[0].contains { abs($0) > 0.01 })
        }
        let fraction = Double(source.bytesRead) / Double(source.size)
        print("remote read (\(layout)): \(source.bytesRead) of \(source.size) bytes = \(String(format: "%.1f", fraction * 100)) %")
        #expect(fraction < 0.35)
    }

    @Test func failingSourceThrowsTheSourcesError() throws {
        let clips = try RemoteFixtures.longClips.get()
        // Fails from the first byte: opening reports the source's own message.
        let deadSource = try CountingFileSource(path: clips.faststart, failFrom: 0)
        RemoteFixtures.withRegistered(deadSource) { url in
            let error = #expect(throws: MediaError.self) { try VideoFrameSource(path: url) }
            #expect(error?.description.contains("connection lost at byte 0") == true, "\(String(describing: error))")
        }
        // Fails after the index and the first seconds: opening works, a later frame throws.
        let size = try CountingFileSource(path: clips.faststart).size
        try RemoteFixtures.withRegistered(try CountingFileSource(path: clips.faststart, failFrom: size / 3)) { url in
            let video = try VideoFrameSource(path: url)
            _ = try video.frame(at: .zero)
            let error = #expect(throws: MediaError.self) { try video.frame(at: Rational(15)) }
            #expect(error?.description.contains("connection lost") == true, "\(String(describing: error))")
        }
    }

    @Test func unregisteredAssetURLIsAClearError() throws {
        let url = RemoteFixtures.uniqueURL()
        let error = #expect(throws: MediaError.self) { try MediaProbe.describe(path: url) }
        #expect(error?.message.contains("no byte-range source") == true)
    }

    @Test func unregisterKeepsOpenReadersWorking() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Self.smallClip(in: dir)
        let url = RemoteFixtures.uniqueURL()
        RemoteMedia.register(try CountingFileSource(path: path), for: url)
        let video = try VideoFrameSource(path: url)
        RemoteMedia.unregister(url: url)
        #expect(RemoteMedia.source(for: url) == nil)
        let local = try VideoFrameSource(path: path)
        #expect(RemoteFixtures.bytes(try video.frame(at: Rational(1))) == RemoteFixtures.bytes(try local.frame(at: Rational(1))))
        #expect(throws: MediaError.self) { try VideoFrameSource(path: url) }
    }
}
