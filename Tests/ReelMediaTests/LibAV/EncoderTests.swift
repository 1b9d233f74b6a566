import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelKernels
@testable import ReelMedia

/// Synthetic frames that change every frame (moving gradient), so the encoder has work.
func syntheticFrame(width: Int, height: Int, index: Int) -> YUVImage {
    let image = YUVImage(width: width, height: height)
    for y in 0..<height {
        let row = image.y.row(y)
        for x in 0..<width { row[x] = UInt8(truncatingIfNeeded: 16 + (x * 2 + y + index * 5) % 200) }
    }
    for plane in [image.u, image.v] {
        for y in 0..<plane.height { plane.row(y).update(repeating: UInt8(truncatingIfNeeded: 100 + index * 3 + y), count: plane.width) }
    }
    return image
}

@Suite("Encoders", .blocking)
struct EncoderTests {
    static func encodeAll(_ settings: VideoEncoderSettings, frames: Int) throws -> (extradata: [UInt8], packets: [EncodedPacket]) {
        let encoder = try VideoEncoder(settings: settings)
        var packets: [EncodedPacket] = []
        for i in 0..<frames {
            packets += try encoder.encode(syntheticFrame(width: settings.width, height: settings.height, index: i), frameIndex: Int64(i))
        }
        packets += try encoder.finish()
        return (encoder.extradata, packets)
    }

    static func withMallocPerturb<T>(_ byte: Int32, _ body: () throws -> T) rethrows -> T {
        #if canImport(Glibc)
        // mallopt(M_PERTURB, byte); <malloc.h> is not in the Glibc module, so look it up.
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        let M_PERTURB: Int32 = -6
        if let symbol = dlsym(nil, "mallopt") {
            let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
            _ = mallopt(M_PERTURB, byte)
            defer { _ = mallopt(M_PERTURB, 0) }
            return try body()
        }
        #endif
        return try body()
    }

    @Test("same settings and frames give byte-identical extradata and packets; IDR first; fixed GOP", arguments: [1, 2, 3])
    func determinism(threads: Int) throws {
        let settings = VideoEncoderSettings(width: 160, height: 120, frameDuration: Rational(1, 30), crf: 23,
                                            x264Preset: "veryfast", gopFrames: 10, threads: threads)
        let a = try Self.encodeAll(settings, frames: 30)
        // The second run sees differently dirty heap memory (glibc fills every allocation
        // with the perturb byte), as a long-lived agent process would: output must not care.
        let b = try Self.withMallocPerturb(0xA5) { try Self.encodeAll(settings, frames: 30) }
        // libx264's global header: SPS and PPS (Annex B; the MP4 muxer turns it into avcC).
        #expect(Set(nalTypes(a.extradata)).isSuperset(of: [7, 8]))
        #expect(a.extradata == b.extradata)
        // Compared packet by packet so a failure names the packet instead of dumping bytes.
        #expect(a.packets.count == b.packets.count)
        for (i, (p, q)) in zip(a.packets, b.packets).enumerated() where p != q {
            Issue.record("packet \(i) differs: pts \(p.pts)/\(q.pts) dts \(p.dts)/\(q.dts) key \(p.isKeyframe)/\(q.isKeyframe) size \(p.data.count)/\(q.data.count) first byte diff at \(String(describing: zip(p.data, q.data).enumerated().first { $0.element.0 != $0.element.1 }?.offset))")
        }
        #expect(a.packets.count == 30)
        #expect(a.packets.first?.isKeyframe == true)
        // Keyframes exactly every gopFrames frames (pts = frame index), no scene-cut extras.
        let keyframePTS = a.packets.filter(\.isKeyframe).map(\.pts).sorted()
        #expect(keyframePTS == [0, 10, 20])
        #expect(Set(a.packets.map(\.pts)) == Set(0..<30))
        // A different thread count changes nothing about validity but the settings differ.
        #expect(settings.x264Params.contains("stitchable=1"))
    }

    @Test("an encoder started mid-timeline makes its first frame an IDR")
    func firstFrameIsIDR() throws {
        let settings = VideoEncoderSettings(width: 64, height: 48, frameDuration: Rational(1, 25), x264Preset: "veryfast", gopFrames: 50, threads: 1)
        let encoder = try VideoEncoder(settings: settings)
        var packets: [EncodedPacket] = []
        for i in 37..<45 { packets += try encoder.encode(syntheticFrame(width: 64, height: 48, index: i), frameIndex: Int64(i)) }
        packets += try encoder.finish()
        let first = try #require(packets.min { $0.dts < $1.dts })
        #expect(first.isKeyframe && first.pts == 37)
        // NAL type 5 (IDR slice) present in the first packet.
        let types = nalTypes(first.data)
        #expect(types.contains(5))
    }

    @Test("bit-rate mode and wrong frame sizes")
    func bitRateAndErrors() throws {
        let settings = VideoEncoderSettings(width: 64, height: 48, frameDuration: Rational(1, 25), x264Preset: "veryfast",
                                            gopFrames: 25, threads: 1, bitRate: 200_000)
        let encoder = try VideoEncoder(settings: settings)
        #expect(throws: MediaError.self) { try encoder.encode(YUVImage(width: 32, height: 32), frameIndex: 0) }
        #expect(throws: MediaError.self) {
            try VideoEncoder(settings: VideoEncoderSettings(width: 63, height: 48, frameDuration: Rational(1, 25), gopFrames: 25))
        }
    }

    @Test("AAC: 1024-sample frames whatever the input chunking, priming signalled")
    func audio() throws {
        let encoder = try AudioEncoder(sampleRate: 48000, channels: 2, bitRate: 128_000)
        #expect(encoder.frameSize == 1024)
        #expect(encoder.initialPadding == 1024)
        #expect(encoder.extradata.count >= 2)
        let total = 48000
        let left = (0..<total).map { Float(sin(Double($0) * 2 * .pi * 1000 / 48000) * 0.5) }
        var packets: [EncodedPacket] = []
        var position = 0
        for size in [100, 5000, 1, 20000, 22899] {
            try left.withUnsafeBufferPointer { l in
                packets += try encoder.encode(planar: [l.baseAddress! + position, l.baseAddress! + position], count: size)
            }
            position += size
        }
        #expect(position == total)
        packets += try encoder.finish()
        // ceil(48000/1024) = 47 frames of input + 1 for the priming delay.
        #expect(packets.count == 48)
        #expect(packets.first?.pts == -1024)
        #expect(zip(packets, packets.dropFirst()).allSatisfy { $1.pts == $0.pts + 1024 })
    }
}

/// NAL unit types of an H.264 access unit in Annex B (start codes) or length-prefixed form.
func nalTypes(_ data: [UInt8]) -> [UInt8] {
    var types: [UInt8] = []
    if data.count > 4, data[0] == 0, data[1] == 0, (data[2] == 1 || (data[2] == 0 && data[3] == 1)) {
        var i = 0
        while i + 3 < data.count {
            if data[i] == 0, data[i + 1] == 0, data[i + 2] == 1 { types.append(data[i + 3] & 0x1F); i += 3 } else { i += 1 }
        }
    } else {
        var offset = 0
        while offset + 4 < data.count {
            let length = Int(data[offset]) << 24 | Int(data[offset + 1]) << 16 | Int(data[offset + 2]) << 8 | Int(data[offset + 3])
            types.append(data[offset + 4] & 0x1F)
            offset += 4 + length
        }
    }
    return types
}
