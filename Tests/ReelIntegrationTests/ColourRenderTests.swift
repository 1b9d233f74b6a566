import Foundation
import Testing
import ReelCore
import ReelMedia
import ReelThreadTesting

/// Colour that survives (docs/colour.md): sources read as they are tagged, outputs tagged and
/// converted as the composition says, HDR tone-mapped into SDR. Every reference is ffmpeg's
/// own decode or filter chain (zscale, tonemap), or numpy for BT.2390; sources are generated
/// here with ffmpeg.
@Suite(.blocking) struct ColourRenderTests {
    // MARK: - Sources

    /// SMPTE bars tagged as `tags` (ffmpeg's names: matrix, primaries, transfer), `size`, one second.
    static func bars(_ pattern: String, size: String, tags: (String, String, String), to path: String) throws {
        try Media.ffmpeg(["-f", "lavfi", "-i", "\(pattern)=s=\(size):r=25:d=1",
                          "-vf", "setparams=colorspace=\(tags.0):color_primaries=\(tags.1):color_trc=\(tags.2):range=tv,format=yuv420p",
                          "-c:v", "libx264", "-crf", "8", "-g", "25", path])
    }

    /// 10-bit HEVC HDR bars: BT.709 bars taken to BT.2020 and `transfer` (smpte2084 or
    /// arib-std-b67) by zscale, with mastering metadata peaking at 1000 cd/m². `agamma=0`:
    /// zscale's exact transfer functions — by default it approximates HLG's OOTF per channel,
    /// where BT.2100 applies it to the luminance (see `zscaleToLinear`).
    static func hdrBars(transfer: String, to path: String) throws {
        try Media.ffmpeg(["-f", "lavfi", "-i", "smptehdbars=s=1280x720:r=25:d=0.4",
                          "-vf", "zscale=t=\(transfer == "smpte2084" ? "smpte2084" : "arib-std-b67"):p=bt2020:m=bt2020nc:r=tv:tin=bt709:pin=bt709:min=bt709:npl=1000:agamma=0,format=yuv420p10le",
                          "-c:v", "libx265", "-x265-params",
                          "log-level=error:colorprim=bt2020:transfer=\(transfer):colormatrix=bt2020nc:"
                          + "master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400",
                          "-tag:v", "hvc1", path])
    }

    // MARK: - Measurements

    /// Frame `index` as ffmpeg decodes it to RGB24, honouring the stream's colour tags.
    static func rgb(_ path: String, index: Int = 0) throws -> [UInt8] {
        [UInt8](try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-vf",
                                         "select=eq(n\\,\(index)),scale=in_color_matrix=auto:in_range=auto,format=rgb24",
                                         "-frames:v", "1", "-f", "rawvideo", "-"]).stdout)
    }

    /// The PSNR of the `width`×`height` region at the top left of two packed RGB pictures
    /// (`strideA`, `strideB` pixels a row).
    static func psnr(_ a: [UInt8], strideA: Int, _ b: [UInt8], strideB: Int, width: Int, height: Int) -> Double {
        var sum = 0.0
        for y in 0..<height {
            for x in 0..<(width * 3) {
                let d = Double(a[y * strideA * 3 + x]) - Double(b[y * strideB * 3 + x])
                sum += d * d
            }
        }
        let mse = sum / Double(width * height * 3)
        return mse == 0 ? 99 : 10 * log10(255 * 255 / mse)
    }

    /// The mean colour of each of the seven top bars (SMPTE and SMPTE HD patterns share them
    /// in the middle of their height), away from their edges.
    static func barMeans(_ rgb: [UInt8], stride: Int, width: Int, height: Int, left: Int = 0) -> [[Double]] {
        let barWidth = Double(width) / 7
        return (0..<7).map { bar in
            let x0 = left + Int(Double(bar) * barWidth + barWidth * 0.25), x1 = left + Int(Double(bar) * barWidth + barWidth * 0.75)
            var sums = [0.0, 0.0, 0.0], n = 0.0
            for y in (height / 8)..<(height / 2) {
                for x in x0..<x1 { for c in 0..<3 { sums[c] += Double(rgb[(y * stride + x) * 3 + c]) }; n += 1 }
            }
            return sums.map { $0 / n }
        }
    }

    static func render(_ json: String, in dir: URL, name: String) throws -> (path: String, plan: RenderPlan) {
        try Fixtures.render(json, in: dir, name: name)
    }

    // MARK: - SDR sources into an HD BT.709 output

    /// An HD BT.709 clip and an SD BT.601 clip (smptebars, SMPTE C primaries) drawn 1:1 into a
    /// 1280×720 output without colour keys: ffmpeg's decode of the output matches its decode of
    /// each source, and each bar's mean colour is within 2 code values.
    @Test(arguments: [
        ("smptehdbars", "1280x720", ("bt709", "bt709", "bt709"), "mp4"),
        ("smptebars", "720x480", ("smpte170m", "smpte170m", "smpte170m"), "mov"),
        ("smptebars", "640x480", ("unknown", "unknown", "unknown"), "mp4"),
    ])
    func sdrSourcesKeepTheirColoursInABT709Output(pattern: String, size: String, tags: (String, String, String), container: String) throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("source.\(container)").path
        if tags.0 == "unknown" {
            try Media.ffmpeg(["-f", "lavfi", "-i", "\(pattern)=s=\(size):r=25:d=1", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-crf", "8", source])
        } else {
            try Self.bars(pattern, size: size, tags: tags, to: source)
        }
        let parts = size.split(separator: "x").map { Int($0)! }
        let (w, h) = (parts[0], parts[1])
        let json = """
        {"formatVersion": 1, "assets": {"bars": {"url": "\(source)"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "bars", "at": 0, "sourceRange": {"start": 0, "duration": 1}}]}],
         "videoComposition": {"renderSize": {"width": 1280, "height": 720}, "frameDuration": "1/25",
           "instructions": [{"timeRange": {"start": 0, "duration": 1},
             "layerInstructions": [{"track": 1, "transform": {"a": 1, "b": 0, "c": 0, "d": 1, "tx": 0, "ty": 0}}]}]},
         "export": {"preset": "highest", "fileType": "\(container)"}}
        """
        let (out, plan) = try Self.render(json, in: dir, name: "out.\(container)")
        #expect(plan.colour.space == .bt709)
        let stream = try #require(Media.stream(try Media.probe(out), type: "video"))
        #expect(stream["color_space"] as? String == "bt709" && stream["color_primaries"] as? String == "bt709"
                && stream["color_transfer"] as? String == "bt709" && stream["color_range"] as? String == "tv", "\(stream)")
        let ours = try Self.rgb(out, index: 12), theirs = try Self.rgb(source, index: 12)
        let psnr = Self.psnr(ours, strideA: 1280, theirs, strideB: w, width: w, height: h)
        #expect(psnr >= 40, "PSNR \(psnr) dB")
        let a = Self.barMeans(ours, stride: 1280, width: w, height: h), b = Self.barMeans(theirs, stride: w, width: w, height: h)
        let worst = zip(a, b).flatMap { zip($0, $1).map { abs($0 - $1) } }.max()!
        #expect(worst <= 2, "bar means \(a) vs \(b)")
        print("colour \(pattern) \(tags.0) \(container): PSNR \(psnr) dB, worst bar delta \(worst)")
    }

    // MARK: - Output tags

    /// The container carries the tags too: `colr` (nclx in MP4, nclc in QuickTime), the
    /// Matroska Colour element in WebM, and ProRes's frame headers (which ffmpeg's decoder
    /// reports); and a BT.601 output is converted, not just tagged.
    @Test(arguments: [("mp4", "h264", "nclx"), ("mov", "hevc", "nclc"), ("webm", "vp9", ""), ("mov", "prores", "nclc")])
    func outputsAreTaggedAsTheCompositionSays(container: String, codec: String, colr: String) throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("source.mp4").path
        try Self.bars("smptehdbars", size: "1280x720", tags: ("bt709", "bt709", "bt709"), to: source)
        let json = """
        {"formatVersion": 1, "assets": {"bars": {"url": "\(source)"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "bars", "at": 0, "sourceRange": {"start": 0, "duration": 0.4}}]}],
         "videoComposition": {"colorPrimaries": "SMPTE_C", "colorTransferFunction": "ITU_R_709_2", "colorYCbCrMatrix": "ITU_R_601_4"},
         "export": {"fileType": "\(container)", "video": {"codec": "\(codec)"}}}
        """
        let (out, _) = try Self.render(json, in: dir, name: "out.\(container)")
        let stream = try #require(Media.stream(try Media.probe(out), type: "video"))
        #expect(stream["color_space"] as? String == "smpte170m" && stream["color_primaries"] as? String == "smpte170m"
                && stream["color_transfer"] as? String == "bt709" && stream["color_range"] as? String == "tv", "\(stream)")
        if !colr.isEmpty {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
            let box = Array("colr\(colr)".utf8)
            #expect((0..<(bytes.count - box.count)).contains { bytes[$0..<($0 + box.count)].elementsEqual(box) }, "a colr \(colr) box")
        }
        let ours = try Self.rgb(out, index: 5), theirs = try Self.rgb(source, index: 5)
        let a = Self.barMeans(ours, stride: 1280, width: 1280, height: 720), b = Self.barMeans(theirs, stride: 1280, width: 1280, height: 720)
        let worst = zip(a, b).flatMap { zip($0, $1).map { abs($0 - $1) } }.max()!
        #expect(worst <= 3, "bar means \(a) vs \(b)")
    }

    // MARK: - Tone mapping

    /// The step of the oracle that takes a source to linear light. `agamma=0` makes zscale
    /// apply BT.2100's HLG OOTF (on the scene luminance, system gamma 1.2 at 1000 cd/m²), as
    /// Reel does; zscale's default (`agamma=1`) approximates it channel by channel, which
    /// leaves greys alone but not saturated colours (bars encoded one way and decoded the
    /// other lose up to a third of a component's level). For PQ the option changes nothing
    /// but a table lookup's rounding.
    static let zscaleToLinear = "zscale=t=linear:npl=100:agamma=0"

    /// The oracle: ffmpeg's zscale + tonemap chain, frame 0 as yuv420p.
    static func tonemapOracle(_ source: String, curve: String) throws -> [UInt8] {
        [UInt8](try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", source, "-frames:v", "1", "-vf",
                                         "\(zscaleToLinear),format=gbrpf32le,zscale=p=bt709,tonemap=\(curve),zscale=t=bt709:m=bt709:r=tv,format=yuv420p",
                                         "-f", "rawvideo", "-"]).stdout)
    }

    /// BT.2390 by numpy (Tests/References/tonemap_reference.py), from ffmpeg's R'G'B' of the
    /// source (its matrix undone, the transfer kept): numpy takes it to linear light (ST 2084's
    /// or BT.2100 HLG's EOTF) and to BT.709 primaries itself, then tone-maps; back to BT.709
    /// Y'CbCr through zscale.
    static func bt2390Reference(_ source: String, transfer: String, in dir: URL) throws -> [UInt8] {
        let signal = dir.appendingPathComponent("signal.raw").path, mapped = dir.appendingPathComponent("mapped.raw").path
        try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", source, "-frames:v", "1", "-vf",
                                 "zscale,format=gbrpf32le", "-f", "rawvideo", signal])
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("References/tonemap_reference.py").path
        try Media.run("env", ["python3", script, "--size", "1280x720", "--peak", "10", "--desat", "2", "--luma", "0.2627,0.678,0.0593",
                              "--input-transfer", transfer == "smpte2084" ? "pq" : "hlg", "--input-primaries", "bt2020",
                              "--input", signal, "--output", mapped])
        return [UInt8](try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "rawvideo", "-pix_fmt", "gbrpf32le", "-s", "1280x720",
                                                "-color_trc", "linear", "-color_primaries", "bt709", "-i", mapped, "-vf",
                                                "zscale=tin=linear:pin=bt709:t=bt709:p=bt709:m=bt709:r=tv,format=yuv420p",
                                                "-f", "rawvideo", "-"]).stdout)
    }

    static func yuvPSNR(_ a: [UInt8], _ b: [UInt8]) -> Double {
        precondition(a.count == b.count && !a.isEmpty, "frames of one size")
        var sum = 0.0
        for i in a.indices { let d = Double(a[i]) - Double(b[i]); sum += d * d }
        let mse = sum / Double(a.count)
        return mse == 0 ? 99 : 10 * log10(255 * 255 / mse)
    }

    /// HLG and PQ sources (HEVC Main 10, mastering metadata at 1000 cd/m²) in an SDR composition
    /// match ffmpeg's zscale + tonemap chain (hable, mobius, reinhard), and numpy's BT.2390.
    @Test(arguments: ["smpte2084", "arib-std-b67"], ["hable", "mobius", "reinhard", "bt2390"])
    func hdrSourcesAreToneMappedLikeTheReference(transfer: String, curve: String) throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent(transfer == "smpte2084" ? "pq.mov" : "hlg.mp4").path
        try Self.hdrBars(transfer: transfer, to: source)
        let json = """
        {"formatVersion": 1, "assets": {"hdr": {"url": "\(source)"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "hdr", "at": 0, "sourceRange": {"start": 0, "duration": 0.4}}]}],
         "videoComposition": {"toneMapping": "\(curve)"},
         "export": {"preset": "highest", "video": {"crf": 10}}}
        """
        let (out, plan) = try Self.render(json, in: dir, name: "out.mp4")
        #expect(plan.colour.toneMapping.curve.rawValue == curve)
        let stream = try #require(Media.stream(try Media.probe(out), type: "video"))
        #expect(stream["color_transfer"] as? String == "bt709" && stream["color_primaries"] as? String == "bt709", "\(stream)")
        let ours = [UInt8](try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", out, "-frames:v", "1",
                                                    "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"]).stdout)
        let reference = curve == "bt2390" ? try Self.bt2390Reference(source, transfer: transfer, in: dir)
            : try Self.tonemapOracle(source, curve: curve)
        let psnr = Self.yuvPSNR(ours, reference)
        #expect(psnr >= 38, "\(transfer) \(curve): PSNR \(psnr) dB")
        print("tonemap \(transfer) \(curve): PSNR \(psnr) dB")
    }
}
