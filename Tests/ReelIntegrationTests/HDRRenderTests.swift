import Foundation
import Testing
import ReelCore
import ReelMedia
import ReelThreadTesting

/// HDR outputs (docs/colour.md, "HDR outputs"): HDR10 and HLG as HEVC Main10, rendered at 16
/// bits and encoded at 10. Sources are made here with ffmpeg (lavfi, zscale, libx265 Main10);
/// every check reads the output with ffmpeg/ffprobe: its stream and frame side data, its
/// decoded 10-bit samples, ffmpeg's own `psnr` filter, and ST 2084's formula for where SDR
/// white must land.
@Suite(.blocking) struct HDRRenderTests {
    // MARK: - Sources

    /// A 10-bit horizontal luma ramp from code 64 to 940 (877 codes over 1280 pixels), neutral
    /// chroma, tagged BT.2020/PQ and coded losslessly by libx265 Main10: `seconds` long at 25 fps.
    static func pqGradient(to path: String, seconds: Double = 0.4) throws {
        try Media.ffmpeg(["-f", "lavfi", "-i", "nullsrc=s=1280x72:r=25:d=\(seconds)",
                          "-vf", "format=yuv420p10le,geq=lum='64+X*876/1279':cb=512:cr=512,"
                          + "setparams=colorspace=bt2020nc:color_primaries=bt2020:color_trc=smpte2084:range=tv",
                          "-c:v", "libx265", "-x265-params", "log-level=error:lossless=1:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc",
                          "-tag:v", "hvc1", path])
    }

    /// BT.709 bars (moving: a scrolling test pattern over them would do, but bars keep the
    /// reference exact) taken to BT.2020 HLG by zscale, 10-bit HEVC Main10, 640×360.
    static func hlgClip(to path: String, seconds: Double = 0.8) throws {
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=\(seconds)",
                          "-vf", "zscale=t=arib-std-b67:p=bt2020:m=bt2020nc:r=tv:tin=bt709:pin=bt709:min=bt709:npl=1000:agamma=0,format=yuv420p10le",
                          "-c:v", "libx265", "-x265-params", "log-level=error:crf=12:colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc",
                          "-tag:v", "hvc1", path])
    }

    // MARK: - Measurements

    /// Every frame of `path` decoded by ffmpeg to `yuv420p10le`, as 16-bit samples (Y, then Cb, Cr).
    static func frames10(_ path: String, width: Int, height: Int) throws -> [[UInt16]] {
        let data = try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "yuv420p10le", "-"]).stdout
        let frameSamples = width * height * 3 / 2
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
        return stride(from: 0, to: samples.count - frameSamples + 1, by: frameSamples).map { Array(samples[$0..<($0 + frameSamples)]) }
    }

    /// ffmpeg's `psnr` filter between two files at 10 bits (its average over Y, Cb, Cr and frames).
    static func psnr10(_ a: String, _ b: String) throws -> Double {
        let r = try Media.run("ffmpeg", ["-nostdin", "-v", "info", "-i", a, "-i", b, "-lavfi",
                                         "[0:v]format=yuv420p10le[a];[1:v]format=yuv420p10le[b];[a][b]psnr", "-f", "null", "-"])
        guard let line = r.stderr.split(separator: "\n").last(where: { $0.contains("PSNR y:") }),
              let range = line.range(of: "average:") else { throw Media.Failure(description: "no PSNR in \(r.stderr)") }
        let value = line[range.upperBound...].prefix { !$0.isWhitespace }
        return value == "inf" ? 99 : Double(value)!
    }

    /// The first video frame's side data as ffprobe reports it.
    static func frameSideData(_ path: String) throws -> [[String: Any]] {
        let r = try Media.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-read_intervals", "%+#1", "-show_frames",
                                          "-show_entries", "frame=side_data_list", "-print_format", "json", path])
        let json = try JSONSerialization.jsonObject(with: r.stdout) as! [String: Any]
        let frames = json["frames"] as? [[String: Any]] ?? []
        return frames.first?["side_data_list"] as? [[String: Any]] ?? []
    }

    /// The HEVC bitstream of `path` in Annex B form.
    static func annexB(_ path: String) throws -> [UInt8] {
        [UInt8](try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-c:v", "copy", "-bsf:v", "hevc_mp4toannexb", "-f", "hevc", "-"]).stdout)
    }

    static func composition(_ asset: String, size: (Int, Int), seconds: Double, colour: String, layers: String? = nil,
                            export: String = #""export": {"fileType": "mp4", "video": {"codec": "hevc", "crf": 16, "x265Preset": "fast"}}"#) -> String {
        """
        {"formatVersion": 1, "assets": {"src": {"url": "\(asset)"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "src", "at": 0, "sourceRange": {"start": 0, "duration": \(seconds)}}]}],
         "videoComposition": {"renderSize": {"width": \(size.0), "height": \(size.1)}, "frameDuration": "1/25", \(colour)
           \(layers.map { #", "instructions": [{"timeRange": {"start": 0, "duration": \#(seconds)}, "layerInstructions": \#($0)}]"# } ?? "")},
         \(export)}
        """
    }

    static let hdr10 = #""colorPrimaries": "ITU_R_2020", "colorTransferFunction": "SMPTE_ST_2084_PQ", "colorYCbCrMatrix": "ITU_R_2020","#
        + #" "masteringDisplay": {"primaries": "ITU_R_2020", "maxLuminance": 4000, "minLuminance": 0.005},"#
        + #" "contentLightLevel": {"maxCLL": 1200, "maxFALL": 300}"#

    // MARK: - HDR10

    /// A PQ gradient in an HDR10 composition: HEVC Main10 `yuv420p10le`, tagged BT.2020/PQ in
    /// the stream and the `colr` box, mastering display and light levels in every frame's SEI
    /// as the composition says; the 877 codes of the ramp survive (an 8-bit path keeps at most
    /// 220), and the picture is the source's.
    @Test func hdr10OutputIsMain10PQWithItsMetadataAndKeepsTenBits() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("gradient.mp4").path
        try Self.pqGradient(to: source)
        let (out, plan) = try Fixtures.render(Self.composition(source, size: (1280, 72), seconds: 0.4, colour: Self.hdr10), in: dir, name: "hdr10.mp4")
        #expect(plan.colour.space.transfer == .pq)

        let stream = try #require(Media.stream(try Media.probe(out), type: "video"))
        #expect(stream["codec_name"] as? String == "hevc" && stream["profile"] as? String == "Main 10", "\(stream)")
        #expect(stream["pix_fmt"] as? String == "yuv420p10le" && stream["color_space"] as? String == "bt2020nc"
                && stream["color_primaries"] as? String == "bt2020" && stream["color_transfer"] as? String == "smpte2084"
                && stream["color_range"] as? String == "tv", "\(stream)")
        // The MP4 `colr` box: nclx, primaries 9, transfer 16, matrix 9 (H.273 codes).
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        let colr = try #require((0..<(bytes.count - 14)).first { bytes[$0..<($0 + 8)].elementsEqual(Array("colrnclx".utf8)) })
        #expect(Array(bytes[(colr + 8)..<(colr + 14)]) == [0, 9, 0, 16, 0, 9], "colr \(Array(bytes[colr..<(colr + 15)]))")

        let sideData = try Self.frameSideData(out)
        let mastering = try #require(sideData.first { $0["side_data_type"] as? String == "Mastering display metadata" }, "\(sideData)")
        #expect(mastering["red_x"] as? String == "35400/50000" && mastering["green_y"] as? String == "39850/50000"
                && mastering["white_point_x"] as? String == "15635/50000", "\(mastering)")
        #expect(mastering["max_luminance"] as? String == "40000000/10000" && mastering["min_luminance"] as? String == "50/10000", "\(mastering)")
        let light = try #require(sideData.first { $0["side_data_type"] as? String == "Content light level metadata" }, "\(sideData)")
        #expect(light["max_content"] as? Int == 1200 && light["max_average"] as? Int == 300, "\(light)")

        // Distinct luma codes of the middle frame: ours, and ffmpeg's 8-bit round trip of the source.
        let ours = try Self.frames10(out, width: 1280, height: 72)
        #expect(ours.count == 10)
        let oursCodes = Set(ours[5].prefix(1280 * 72)).count
        let eightBit = dir.appendingPathComponent("eight-bit.mkv").path
        try Media.ffmpeg(["-i", source, "-vf", "format=yuv420p,format=yuv420p10le", "-c:v", "ffv1", eightBit])
        let eightBitCodes = Set(try Self.frames10(eightBit, width: 1280, height: 72)[5].prefix(1280 * 72)).count
        #expect(oursCodes > 600, "\(oursCodes) distinct 10-bit luma codes")
        #expect(eightBitCodes <= 220, "\(eightBitCodes) distinct codes through 8 bits")
        let psnr = try Self.psnr10(out, source)
        #expect(psnr >= 45, "PSNR \(psnr) dB against the source at 10 bits")
        print("HDR10 gradient: \(oursCodes) distinct luma codes (8-bit path \(eightBitCodes)), PSNR \(psnr) dB at 10 bits")
    }

    /// An SDR BT.709 source in a PQ output is placed with its white at 203 cd/m² (BT.2408):
    /// ST 2084's code for 203 cd/m² is 0.5807, 10-bit limited 573. Its black stays at code 64.
    @Test func sdrWhiteLandsAtTheHDRReferenceWhite() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("white.mp4").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=white:s=320x180:r=25:d=0.2,drawbox=x=160:y=0:w=160:h=180:c=black:t=fill",
                          "-vf", "setparams=colorspace=bt709:color_primaries=bt709:color_trc=bt709:range=tv,format=yuv420p",
                          "-c:v", "libx264", "-qp", "0", source])
        let (out, _) = try Fixtures.render(Self.composition(source, size: (320, 180), seconds: 0.2, colour: Self.hdr10), in: dir, name: "sdr-in-pq.mp4")
        // ST 2084's inverse EOTF, written out here from the standard.
        let (m1, m2, c1, c2, c3) = (2610.0 / 16384, 2523.0 / 4096 * 128, 3424.0 / 4096, 2413.0 / 4096 * 32, 2392.0 / 4096 * 32)
        let y = pow(203.0 / 10000, m1)
        let code = 64 + 876 * pow((c1 + c2 * y) / (1 + c3 * y), m2)
        let frame = try Self.frames10(out, width: 320, height: 180)[2]
        let white = (40..<140).flatMap { row in (20..<140).map { Double(frame[row * 320 + $0]) } }
        let black = (40..<140).flatMap { row in (180..<300).map { Double(frame[row * 320 + $0]) } }
        let whiteMean = white.reduce(0, +) / Double(white.count), blackMean = black.reduce(0, +) / Double(black.count)
        #expect(abs(whiteMean - code) <= 3, "SDR white at code \(whiteMean), ST 2084 gives \(code) for 203 cd/m²")
        #expect(abs(blackMean - 64) <= 2, "SDR black at code \(blackMean)")
        print("SDR in PQ: white \(whiteMean) (ST 2084: \(code)), black \(blackMean)")
    }

    // MARK: - HLG

    /// HLG in, HLG out: ≥ 42 dB against the source at 10 bits (ffmpeg's psnr), tagged
    /// arib-std-b67, with x265's alternative transfer characteristics SEI (payload 147) saying 18.
    @Test func hlgPassesThroughAtTenBits() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("hlg.mp4").path
        try Self.hlgClip(to: source)
        let (out, _) = try Fixtures.render(Self.composition(source, size: (640, 360), seconds: 0.8, colour: #""colorTransferFunction": "ITU_R_2100_HLG""#),
                                           in: dir, name: "hlg-out.mp4")
        let stream = try #require(Media.stream(try Media.probe(out), type: "video"))
        #expect(stream["pix_fmt"] as? String == "yuv420p10le" && stream["color_space"] as? String == "bt2020nc"
                && stream["color_primaries"] as? String == "bt2020" && stream["color_transfer"] as? String == "arib-std-b67", "\(stream)")
        let psnr = try Self.psnr10(out, source)
        #expect(psnr >= 42, "PSNR \(psnr) dB against the HLG source at 10 bits")
        // An SEI message: payload type 147 (alternative_transfer_characteristics), size 1, value 18.
        let bitstream = try Self.annexB(out)
        #expect((0..<(bitstream.count - 3)).contains { bitstream[$0] == 147 && bitstream[$0 + 1] == 1 && bitstream[$0 + 2] == 18 })
        print("HLG passthrough: PSNR \(psnr) dB at 10 bits")
    }

    /// The layer operations of HDR compositions: a half-size picture-in-picture over the full
    /// frame, fading out over the clip. Where the inset is, the frame is zimg's scaling of the
    /// source; elsewhere the full-size layer; and the fade mixes the two by its opacity.
    @Test func scaledAndFadingLayersAreCompositedAtSixteenBits() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("hlg.mp4").path
        try Self.hlgClip(to: source)
        let json = """
        {"formatVersion": 1, "assets": {"src": {"url": "\(source)"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "src", "at": 0, "sourceRange": {"start": 0, "duration": 0.8}}]},
                    {"id": 2, "mediaType": "video", "segments": [{"asset": "src", "at": 0, "sourceRange": {"start": 0, "duration": 0.8}}]}],
         "videoComposition": {"renderSize": {"width": 640, "height": 360}, "frameDuration": "1/25", "colorTransferFunction": "ITU_R_2100_HLG",
           "instructions": [{"timeRange": {"start": 0, "duration": 0.8}, "layerInstructions": [
             {"track": 2, "transform": {"a": 0.5, "b": 0, "c": 0, "d": 0.5, "tx": 320, "ty": 180},
              "opacityRamps": [{"from": 1, "to": 0, "timeRange": {"start": 0, "duration": 0.8}}]},
             {"track": 1, "transform": {"a": 1, "b": 0, "c": 0, "d": 1, "tx": 0, "ty": 0}}]}]},
         "export": {"fileType": "mp4", "video": {"codec": "hevc", "crf": 12, "x265Preset": "fast"}}}
        """
        let (out, _) = try Fixtures.render(json, in: dir, name: "pip.mp4")
        let ours = try Self.frames10(out, width: 640, height: 360)
        let full = try Self.frames10(source, width: 640, height: 360)
        // The reference inset: ffmpeg's bicubic scaling of the decoded source at 10 bits.
        let scaled = dir.appendingPathComponent("scaled.mkv").path
        try Media.ffmpeg(["-i", source, "-vf", "scale=320:180:flags=bicubic,format=yuv420p10le", "-c:v", "ffv1", scaled])
        let inset = try Self.frames10(scaled, width: 320, height: 180)
        #expect(ours.count == 20 && full.count >= 20 && inset.count >= 20)
        func lumaPSNR(_ a: [Double], _ b: [Double]) -> Double {
            let mse = zip(a, b).map { ($0 - $1) * ($0 - $1) }.reduce(0, +) / Double(a.count)
            return mse == 0 ? 99 : 10 * log10(1023 * 1023 / mse)
        }
        for k in [0, 10] {
            // Opacity at frame k's time: 1 − k/20.
            let opacity = 1 - Double(k) / 20
            var got: [Double] = [], want: [Double] = [], outside: [Double] = [], outsideWant: [Double] = []
            for row in 180..<360 {
                for col in 320..<640 {
                    got.append(Double(ours[k][row * 640 + col]))
                    let below = Double(full[k][row * 640 + col]), above = Double(inset[k][(row - 180) * 320 + col - 320])
                    want.append(below + (above - below) * opacity)
                }
            }
            for row in 0..<180 { for col in 0..<640 { outside.append(Double(ours[k][row * 640 + col])); outsideWant.append(Double(full[k][row * 640 + col])) } }
            let inside = lumaPSNR(got, want), rest = lumaPSNR(outside, outsideWant)
            #expect(inside >= 35, "frame \(k): inset at opacity \(opacity) PSNR \(inside) dB")
            #expect(rest >= 42, "frame \(k): the full-size layer PSNR \(rest) dB")
            print("HDR PiP frame \(k) opacity \(opacity): inset \(inside) dB, rest \(rest) dB")
        }
    }

    // MARK: - Chunks

    /// An HDR10 render in several chunks joins as cleanly as 8-bit chunks: ≥ 40 dB from the
    /// one-chunk render at 10 bits, and the joined file carries the metadata.
    @Test func tenBitChunksJoinLikeOneChunk() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("hlg.mp4").path
        try Self.hlgClip(to: source, seconds: 2)
        let export = #""export": {"fileType": "mp4", "video": {"codec": "hevc", "crf": 18, "x265Preset": "fast", "gopDuration": 0.4}}"#
        let json = Self.composition(source, size: (640, 360), seconds: 2, colour: Self.hdr10, export: export)
        let (single, plan) = try Fixtures.render(json, in: dir, name: "single.mp4", workers: 1, chunkSeconds: 100)
        let (chunked, _) = try Fixtures.render(json, in: dir, name: "chunked.mp4", workers: 2, chunkSeconds: Rational(2, 5))
        let chunks = LocalRender.chunks(for: plan, options: .init(workers: 2, chunkSeconds: Rational(2, 5)))
        #expect(chunks.count >= 4, "\(chunks)")
        let psnr = try Self.psnr10(chunked, single)
        #expect(psnr >= 40, "PSNR \(psnr) dB between the chunked and one-chunk renders")
        #expect(try Media.decodeErrors(chunked).isEmpty)
        let stream = try #require(Media.stream(try Media.probe(chunked), type: "video"))
        #expect(stream["pix_fmt"] as? String == "yuv420p10le" && stream["color_transfer"] as? String == "smpte2084")
        #expect(try Self.frameSideData(chunked).contains { $0["side_data_type"] as? String == "Mastering display metadata" })
        print("HDR10 chunks: \(chunks.count) chunks, PSNR \(psnr) dB from one chunk")
    }
}
