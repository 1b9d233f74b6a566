import CFFmpeg
import Foundation
import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelMedia

/// HEVC NAL unit types of an Annex B stream (VPS 32, SPS 33, PPS 34, IDR 19/20, CRA 21).
func hevcNALTypes(_ data: [UInt8]) -> [UInt8] {
    var types: [UInt8] = []
    var i = 0
    while i + 3 < data.count {
        if data[i] == 0, data[i + 1] == 0, data[i + 2] == 1 { types.append((data[i + 3] >> 1) & 0x3F); i += 3 } else { i += 1 }
    }
    return types
}

/// The HEVC and ProRes encoders keep the chunk guarantees of the H.264 one.
@Suite("HEVC and ProRes encoders", .blocking)
struct CodecEncoderTests {
    @Test("HEVC: byte-identical re-encodes, parameter sets only in the global header, an IDR every GOP", arguments: [1, 4])
    func hevcDeterminism(threads: Int) throws {
        let settings = VideoEncoderSettings.hevc(width: 160, height: 120, frameDuration: Rational(1, 30), crf: 26, preset: "veryfast",
                                                 gopFrames: 10, threads: threads)
        let a = try EncoderTests.encodeAll(settings, frames: 30)
        let b = try EncoderTests.withMallocPerturb(0xA5) { try EncoderTests.encodeAll(settings, frames: 30) }
        #expect(a.extradata == b.extradata)
        #expect(a.packets.count == b.packets.count)
        for (i, (p, q)) in zip(a.packets, b.packets).enumerated() where p != q {
            Issue.record("packet \(i) differs: pts \(p.pts)/\(q.pts) size \(p.data.count)/\(q.data.count)")
        }
        #expect(Set(hevcNALTypes(a.extradata)).isSuperset(of: [32, 33, 34]), "VPS, SPS and PPS in the global header")
        #expect(a.packets.count == 30 && Set(a.packets.map(\.pts)) == Set(0..<30))
        #expect(a.packets.filter(\.isKeyframe).map(\.pts).sorted() == [0, 10, 20])
        for packet in a.packets {
            let types = Set(hevcNALTypes(packet.data))
            #expect(types.isDisjoint(with: [32, 33, 34]), "frame \(packet.pts) repeats parameter sets (hvc1 keeps them only in the sample entry)")
            if packet.isKeyframe { #expect(types.contains(19) || types.contains(20), "keyframe \(packet.pts) is not an IDR: \(types)") }
            // No x265 version/options SEI: it names the machine's cpuid.
            #expect(!String(decoding: packet.data, as: UTF8.self).contains("x265"), "frame \(packet.pts) carries x265's info SEI")
        }
        #expect(settings.x265Params.contains("pools=\(threads)") && settings.x265Params.contains("frame-threads=1"))
    }

    @Test("HEVC: an encoder started mid-timeline makes its first frame an IDR")
    func hevcFirstFrameIsIDR() throws {
        let settings = VideoEncoderSettings.hevc(width: 64, height: 48, frameDuration: Rational(1, 25), preset: "veryfast", gopFrames: 50, threads: 1)
        let encoder = try VideoEncoder(settings: settings)
        var packets: [EncodedPacket] = []
        for i in 37..<45 { packets += try encoder.encode(syntheticFrame(width: 64, height: 48, index: i), frameIndex: Int64(i)) }
        packets += try encoder.finish()
        let first = try #require(packets.min { $0.dts < $1.dts })
        #expect(first.isKeyframe && first.pts == 37)
        #expect(Set(hevcNALTypes(first.data)).contains(19) || Set(hevcNALTypes(first.data)).contains(20))
    }

    @Test("ProRes: every frame a keyframe, the profile's tag and pixel format, byte-identical re-encodes",
          arguments: [(ProResProfile.proxy, "apco"), (.lt, "apcs"), (.standard, "apcn"), (.hq, "apch"), (.fourFourFourFour, "ap4h"),
                      (.fourFourFourFourXQ, "ap4x")])
    func prores(_ profile: ProResProfile, _ tag: String) throws {
        let settings = VideoEncoderSettings.prores(width: 64, height: 48, frameDuration: Rational(1, 25), profile: profile, gopFrames: 5, threads: 2)
        let a = try EncoderTests.encodeAll(settings, frames: 6)
        let b = try EncoderTests.withMallocPerturb(0x5A) { try EncoderTests.encodeAll(settings, frames: 6) }
        #expect(a.packets == b.packets)
        #expect(a.packets.count == 6 && a.packets.allSatisfy(\.isKeyframe))
        let encoder = try VideoEncoder(settings: settings)
        #expect(FourCC.string(encoder.codecParameters.codecTag) == tag)
        let format = AVPixelFormat(rawValue: encoder.codecParameters.pointer.pointee.format)
        #expect(format == (profile.hasAlpha ? AV_PIX_FMT_YUVA444P10LE : AV_PIX_FMT_YUV422P10LE))
    }

    @Test("ProRes is refused in MP4 with a message saying where it goes")
    func proresNotInMP4() throws {
        let encoder = try VideoEncoder(settings: .prores(width: 64, height: 48, frameDuration: Rational(1, 25), profile: .standard, gopFrames: 5))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reel-prores-\(UUID().uuidString).mp4").path
        defer { unlink(path) }
        #expect { try MovieWriter(path: path, fileType: "mp4", faststart: false, video: encoder, audio: nil) } throws: {
            "\($0)".contains("ProRes can only be written to QuickTime (mov)")
        }
    }

    @Test("the encoders Reel uses are all in this FFmpeg")
    func catalog() {
        #expect(EncoderCatalog.available == ["libx264", "libx265", "prores_ks", "libvpx-vp9", "libsvtav1", "png", "aac", "libopus", "pcm_s16le"])
    }
}
