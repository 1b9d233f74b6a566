import Foundation
import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelMedia

/// Media read through a `ByteRangeSource` decodes exactly like the same file
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
        let remote = RemoteFixtures.location(source)
        #expect(try MediaProbe.describe(remote) == MediaProbe.describe(path: path))

        let local = try VideoFrameSource(path: path)
        let video = try VideoFrameSource(remote)
        #expect(video.naturalSize == local.naturalSize)
        // Forward, a jump back, and the last frame: seeks go through the seek callback.
        for t in [Rational(0), Rational(13, 25), Rational(1), Rational(49, 25), Rational(1, 5), Rational(3)] {
            let a = try local.frame(at: t), b = try video.frame(at: t)
            #expect(RemoteFixtures.bytes(b) == RemoteFixtures.bytes(a), "frame at \(t)")
        }

        let localAudio = try AudioSampleSource(path: path, sampleRate: 48000, channels: 2)
        let remoteAudio = try AudioSampleSource(remote, sampleRate: 48000, channels: 2)
        for start in [Int64(0), 48000, 12345] {
            let a = try Self.audio(localAudio, start: start, count: 9600)
            let b = try Self.audio(remoteAudio, start: start, count: 9600)
            #expect(a == b, "audio from sample \(start)")
            #expect(a[0].contains { abs($0) > 0.01 }, "the test tone is audible")
        }

        let localPackets = try PacketReader(path: path, kind: "video")
        let remotePackets = try PacketReader(remote, kind: "video")
        var count = 0
        while let a = try localPackets.next() {
            #expect(try remotePackets.next() == a)
            count += 1
        }
        #expect(try remotePackets.next() == nil)
        #expect(count == 50)
        #expect(source.bytesRead > 0)
    }

    @Test func remoteStillDecodesLikeTheFile() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("logo.png").path
        try TestMedia.run(["-f", "lavfi", "-i", "testsrc2=s=96x64", "-frames:v", "1", path])
        let remote = RemoteFixtures.location(try CountingFileSource(path: path))
        let description = try MediaProbe.describe(remote)
        #expect(description.kind == .still)
        #expect(description == (try MediaProbe.describe(path: path)))
        #expect(RemoteFixtures.bytes(try StillImage.load(remote)) == RemoteFixtures.bytes(try StillImage.load(path: path)))
    }

    /// Half a second of video and audio from the middle of a 20 s clip reads only what the
    /// index and those GOPs need — not the file — whether the index is first or last.
    @Test(arguments: ["faststart", "moov at end"])
    func shortReadTouchesLittleOfTheFile(layout: String) throws {
        let clips = try RemoteFixtures.longClips.get()
        let path = layout == "faststart" ? clips.faststart : clips.moovAtEnd
        let source = try CountingFileSource(path: path)
        let remote = RemoteFixtures.location(source)
        let video = try VideoFrameSource(remote)
        let local = try VideoFrameSource(path: path)
        for k in 0..<13 {
            let t = Rational(10) + Rational(Int64(k), 25)
            #expect(RemoteFixtures.bytes(try video.frame(at: t)) == RemoteFixtures.bytes(try local.frame(at: t)))
        }
        let audio = try AudioSampleSource(remote, sampleRate: 48000, channels: 2)
        let samples = try Self.audio(audio, start: 480_000, count: 24_000)
        #expect(samples[0].contains { abs($0) > 0.01 })
        let fraction = Double(source.bytesRead) / Double(source.size)
        print("remote read (\(layout)): \(source.bytesRead) of \(source.size) bytes = \(String(format: "%.1f", fraction * 100)) %")
        #expect(fraction < 0.35)
    }

    @Test func failingSourceThrowsTheSourcesError() throws {
        let clips = try RemoteFixtures.longClips.get()
        // Fails from the first byte: opening reports the source's own message.
        let deadSource = try CountingFileSource(path: clips.faststart, failFrom: 0)
        let remote = RemoteFixtures.location(deadSource)
        let error = #expect(throws: MediaError.self) { try VideoFrameSource(remote) }
        #expect(error?.description.contains("connection lost at byte 0") == true, "\(String(describing: error))")
        // Fails after the index and the first seconds: opening works, a later frame throws.
        let size = try CountingFileSource(path: clips.faststart).size
        let video = try VideoFrameSource(RemoteFixtures.location(try CountingFileSource(path: clips.faststart, failFrom: size / 3)))
        _ = try video.frame(at: .zero)
        let later = #expect(throws: MediaError.self) { try video.frame(at: Rational(15)) }
        #expect(later?.description.contains("connection lost") == true, "\(String(describing: later))")
    }

    /// A content URL with no source is an error naming it, never a file read.
    @Test func aContentURLWithoutASourceIsAClearError() throws {
        let url = RemoteFixtures.uniqueURL()
        let error = #expect(throws: MediaError.self) { try MediaProbe.describe(path: url) }
        #expect(error?.message.contains("no byte-range source") == true)
        #expect(error?.description.contains(url) == true)
    }

    /// A render reads its remote assets through the sources it is given, and only those: the
    /// same plan renders the file's frames with them and fails without them (no process-wide
    /// table another render could fill or empty).
    @Test func aRenderReadsThroughTheSourcesItIsGiven() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Self.smallClip(in: dir)
        let compositionPath = dir.appendingPathComponent("composition.json").path
        try #"{"formatVersion": 1, "assets": {"clip": {"url": "small.mp4"}}, "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]}]}"#
            .write(toFile: compositionPath, atomically: true, encoding: .utf8)
        let localPlan = try CompositionLoader.load(path: compositionPath)
        var remotePlan = localPlan
        let url = RemoteFixtures.uniqueURL()
        remotePlan.assets["clip"] = PlannedAsset(url: url, description: localPlan.assets["clip"]!.description)
        let source = try CountingFileSource(path: path)
        var media = MediaSources()
        media.add(source, for: url)

        let local = FrameRenderer(plan: localPlan)
        let remote = FrameRenderer(plan: remotePlan, media: media)
        for k in [0, 17, 49] {
            let expected = RemoteFixtures.bytes(try local.render(frame: k))
            #expect(RemoteFixtures.bytes(try remote.render(frame: k)) == expected, "frame \(k)")
        }
        #expect(source.bytesRead > 0)
        let unsourced = #expect(throws: MediaError.self) { try FrameRenderer(plan: remotePlan).render(frame: 0) }
        #expect(unsourced?.message.contains("no byte-range source") == true)
        let otherRender = #expect(throws: MediaError.self) { try FrameRenderer(plan: remotePlan, media: MediaSources()).render(frame: 0) }
        #expect(otherRender?.message.contains("no byte-range source") == true)
    }
}
