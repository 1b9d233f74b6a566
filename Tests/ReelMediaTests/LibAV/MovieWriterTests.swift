import Foundation
import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelMedia

@Suite("MovieWriter", .blocking)
struct MovieWriterTests {
    /// Top-level MP4 box types in file order.
    static func topLevelBoxes(_ path: String) throws -> [String] {
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var boxes: [String] = []
        var offset = 0
        while offset + 8 <= data.count {
            var size = Int(data[offset]) << 24 | Int(data[offset + 1]) << 16 | Int(data[offset + 2]) << 8 | Int(data[offset + 3])
            let type = String(decoding: data[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if size == 1, offset + 16 <= data.count {
                size = data[(offset + 8)..<(offset + 16)].reduce(0) { $0 << 8 | Int($1) }
            } else if size == 0 {
                size = data.count - offset
            }
            boxes.append(type)
            guard size >= 8 else { break }
            offset += size
        }
        return boxes
    }

    /// Encodes 30 frames at 30 fps and 1 s of 48 kHz stereo audio into `path`.
    static func writeMovie(to path: String, fileType: String, faststart: Bool) throws {
        let settings = VideoEncoderSettings(width: 160, height: 120, frameDuration: Rational(1, 30), crf: 23,
                                            x264Preset: "veryfast", gopFrames: 15, threads: 1)
        let video = try VideoEncoder(settings: settings)
        let audio = try AudioEncoder(sampleRate: 48000, channels: 2, bitRate: 128_000)
        let writer = try MovieWriter(path: path, fileType: fileType, faststart: faststart, video: video, audio: audio)
        let tone = (0..<48000).map { Float(sin(Double($0) * 2 * .pi * 440 / 48000) * 0.3) }
        var written = 0
        for i in 0..<30 {
            for p in try video.encode(syntheticFrame(width: 160, height: 120, index: i), frameIndex: Int64(i)) { try writer.write(video: p) }
            // Audio in step with video (1600 samples per frame), as a renderer would.
            try tone.withUnsafeBufferPointer { t in
                for p in try audio.encode(planar: [t.baseAddress! + written, t.baseAddress! + written], count: 1600) { try writer.write(audio: p) }
            }
            written += 1600
        }
        for p in try video.finish() { try writer.write(video: p) }
        for p in try audio.finish() { try writer.write(audio: p) }
        try writer.finish()
    }

    @Test("30 frames + 1 s audio: index first, 30 frames, audio from 0, decodes cleanly", arguments: ["mp4", "mov"])
    func movie(fileType: String) throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("out.\(fileType)").path
        try Self.writeMovie(to: path, fileType: fileType, faststart: true)

        let boxes = try Self.topLevelBoxes(path)
        let moov = try #require(boxes.firstIndex(of: "moov")), mdat = try #require(boxes.firstIndex(of: "mdat"))
        #expect(moov < mdat, "boxes: \(boxes)")

        let streams = try TestMedia.ffprobeStreams(path, extra: ["-count_frames"])
        let video = try #require(streams.first { $0["codec_type"] as? String == "video" })
        let audio = try #require(streams.first { $0["codec_type"] as? String == "audio" })
        #expect(video["nb_read_frames"] as? String == "30")
        #expect(video["codec_name"] as? String == "h264")
        #expect(video["profile"] as? String == "High")
        #expect(video["avg_frame_rate"] as? String == "30/1")
        #expect(video["start_time"] as? String == "0.000000")
        #expect(audio["start_time"] as? String == "0.000000")
        #expect(audio["codec_name"] as? String == "aac")
        let audioDuration = Double(audio["duration"] as? String ?? "") ?? 0
        #expect(abs(audioDuration - 1) <= 1024.0 / 48000, "audio lasts \(audioDuration)")
        // Decodes with no complaint at all.
        let stderr = try TestMedia.run(["-i", path, "-f", "null", "-"])
        #expect(stderr.isEmpty, "\(stderr)")

        // Our own reader sees the same thing.
        let asset = try MediaProbe.describe(path: path)
        #expect(asset.video?.frameDuration == Rational(1, 30))
        #expect(asset.audio?.channels == 2)
    }

    @Test("the same packets make a byte-identical file (chunks can be re-rendered)")
    func deterministicFile() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = dir.appendingPathComponent("a.mp4").path, b = dir.appendingPathComponent("b.mp4").path
        try Self.writeMovie(to: a, fileType: "mp4", faststart: true)
        try EncoderTests.withMallocPerturb(0x3C) { try Self.writeMovie(to: b, fileType: "mp4", faststart: true) }
        let bytesA = try Data(contentsOf: URL(fileURLWithPath: a)), bytesB = try Data(contentsOf: URL(fileURLWithPath: b))
        #expect(bytesA.count > 1000)
        #expect(bytesA == bytesB)
    }

    @Test("without faststart the index comes last")
    func noFaststart() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("out.mp4").path
        try Self.writeMovie(to: path, fileType: "mp4", faststart: false)
        let boxes = try Self.topLevelBoxes(path)
        #expect(try #require(boxes.firstIndex(of: "mdat")) < (try #require(boxes.firstIndex(of: "moov"))))
    }

    @Test("stream copy: packets read from one file remux into another that decodes the same")
    func remux() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("source.mp4").path
        try Self.writeMovie(to: source, fileType: "mp4", faststart: false)
        let video = try PacketReader(path: source, kind: "video"), audio = try PacketReader(path: source, kind: "audio")
        let copy = dir.appendingPathComponent("copy.mov").path
        let writer = try MovieWriter(path: copy, fileType: "mov", faststart: true, video: video.parameters, audio: audio.parameters)
        var videoPackets = 0
        while let p = try video.next() { try writer.write(video: p); videoPackets += 1 }
        while let p = try audio.next() { try writer.write(audio: p) }
        try writer.finish()
        #expect(videoPackets == 30)
        #expect(try TestMedia.run(["-i", copy, "-f", "null", "-"]).isEmpty)
        let streams = try TestMedia.ffprobeStreams(copy, extra: ["-count_frames"])
        #expect(streams.first { $0["codec_type"] as? String == "video" }?["nb_read_frames"] as? String == "30")
        #expect(streams.first { $0["codec_type"] as? String == "audio" }?["start_time"] as? String == "0.000000")
        for index in [0, 14, 29] {
            #expect(try TestMedia.decodeFrameRGB(copy, index: index).pixels == (try TestMedia.decodeFrameRGB(source, index: index).pixels))
        }
        #expect(try TestMedia.decodeAudio(copy, sampleRate: 48000, channels: 2) == (try TestMedia.decodeAudio(source, sampleRate: 48000, channels: 2)))
    }

    @Test("stream copy: codec parameters read from a file make a writer for its packets")
    func streamCopyParameters() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("source.mp4").path
        try Self.writeMovie(to: source, fileType: "mp4", faststart: false)
        let parameters = try CodecParameters(path: source, streamIndex: 0)
        #expect(parameters.codecName == "h264")
        #expect(!parameters.extradata.isEmpty)
        let copy = dir.appendingPathComponent("copy.mp4").path
        // Header-only file: proves a writer accepts stored parameters (no live encoder).
        let writer = try MovieWriter(path: copy, fileType: "mp4", faststart: false, video: parameters, audio: nil)
        try writer.finish()
        #expect(FileManager.default.fileExists(atPath: copy))
        #expect(throws: MediaError.self) { try MovieWriter(path: copy, fileType: "avi", faststart: false, video: parameters, audio: nil) }
    }
}
