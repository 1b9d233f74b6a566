import Foundation
import Testing
import ReelCore
import ReelMedia
import ReelThreadTesting

/// VP9 with alpha in WebM, through the chunked path `reel render` uses. The logo
/// and veil of `AlphaRenderTests` over a transparent background, at 30 fps (WebM's millisecond
/// times round every frame time but one in three, which the finaliser must put back on the
/// grid). The reference is libvpx's own decoder (`-c:v libvpx-vp9`; FFmpeg's native VP9 decoder
/// ignores the alpha), decoding to `yuva420p`.
@Suite(.blocking) struct VP9AlphaRenderTests {
    static let width = AlphaRenderTests.width, height = AlphaRenderTests.height, frames = 120

    static func composition(export: String) -> String {
        AlphaRenderTests.composition(export: export).replacingOccurrences(of: #""frameDuration": "1/25""#, with: #""frameDuration": "1/30""#)
    }

    /// Every frame as libvpx decodes it: (luma plane, alpha plane).
    static func planes(_ path: String) throws -> [(y: [UInt8], a: [UInt8])] {
        let r = try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-c:v", "libvpx-vp9", "-i", path,
                                         "-f", "rawvideo", "-pix_fmt", "yuva420p", "-"])
        let luma = width * height, chroma = (width / 2) * (height / 2), size = 2 * luma + 2 * chroma
        let bytes = [UInt8](r.stdout)
        return stride(from: 0, to: bytes.count - size + 1, by: size).map {
            (Array(bytes[$0..<$0 + luma]), Array(bytes[$0 + luma + 2 * chroma..<$0 + size]))
        }
    }

    @Test func vp9InWebMKeepsTheAlphaOfALogoOverATransparentBackgroundAcrossChunks() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try AlphaRenderTests.images(in: dir)
        // No `alpha` key: the transparent background makes it the default.
        let json = Self.composition(export: #"{"fileType": "webm", "video": {"vp9Speed": 8}}"#)
        let (chunked, plan) = try Fixtures.render(json, in: dir, name: "chunked.webm", workers: 2, chunkSeconds: 2)
        #expect(plan.export.video.writesAlpha && plan.chunkFileType == .webm)
        #expect(LocalRender.chunks(for: plan, options: .init(workers: 2, chunkSeconds: 2)).count == 2)
        let (whole, _) = try Fixtures.render(json, in: dir, name: "whole.webm", workers: 1, chunkSeconds: 10)

        let stream = try #require(Media.stream(try Media.probe(chunked), type: "video"))
        let tags = stream["tags"] as? [String: Any]
        #expect(stream["codec_name"] as? String == "vp9" && tags?["alpha_mode"] as? String == "1", "\(stream)")
        // Every frame, on the 30 fps grid, after the millisecond-rounded chunk times.
        // ffprobe lists each packet's side data (the alpha) on lines of its own: first fields only.
        let probed = try Media.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time", "-of", "csv=p=0", chunked])
        let pts = String(decoding: probed.stdout, as: UTF8.self).split(separator: "\n")
            .compactMap { $0.split(separator: ",").first.flatMap { Double($0) } }.sorted()
        #expect(pts.count == Self.frames)
        #expect(zip(pts, 0...).allSatisfy { abs($0 - Double($1) / 30) < 0.001 }, "\(pts.prefix(8))")

        let frames = try Self.planes(chunked), reference = try Self.planes(whole)
        try #require(frames.count == Self.frames && reference.count == Self.frames)
        // Lossy: the chunked and one-chunk encodes agree to PSNR ≥ 40 dB in both planes at
        // the join (frames 59 and 60) and everywhere else.
        for k in 0..<Self.frames {
            let alpha = Media.psnr(frames[k].a, reference[k].a), luma = Media.psnr(frames[k].y, reference[k].y)
            #expect(alpha >= 40 && luma >= 40, "frame \(k): alpha PSNR \(alpha) dB, luma \(luma) dB against the one-chunk render")
        }

        // Frame 0 (disc centre (71.5, 71.5), veil over [80, 144)²), and frame 60 just after the join.
        for k in [0, 59, 60] {
            let a = frames[k].a, x0 = 40.0 * Double(k) / 30, dx = Int(x0)   // 40 px a second
            var away: [Int] = [], discNotOpaque = 0, veil: [Int] = []
            for y in 0..<Self.height {
                for x in 0..<Self.width {
                    let value = Int(a[y * Self.width + x])
                    // 8 px about the logo's frame and the veil: VP9's blocks blur alpha edges.
                    let nearLogo = x >= 32 + dx && x < 112 + dx && y >= 32 && y < 112
                    let nearVeil = x >= 72 && x < 152 && y >= 72 && y < 152
                    if !nearLogo && !nearVeil { away.append(value) }
                    // 6 px inside the disc's edge (radius 24).
                    let onDisc = hypot(Double(x) + 0.5 - 71.5 - x0, Double(y) + 0.5 - 71.5) < 18
                    if onDisc && !(x >= 76 && x < 148 && y >= 76 && y < 148) && value < 250 { discNotOpaque += 1 }
                    if x >= 124 && x < 140 && y >= 124 && y < 140 { veil.append(value) }
                }
            }
            // VP9 is lossy: away from the logo and the veil the alpha is 0 but for quantisation
            // noise of at most 2/255 in under 1 % of the pixels (measured: 1/255 in one 8×8 block or four).
            let notZero = away.filter { $0 != 0 }.count
            #expect(away.allSatisfy { $0 <= 2 } && notZero * 100 < away.count,
                    "frame \(k): \(notZero) of \(away.count) pixels away from the logo and veil are not transparent, the most \(away.max() ?? 0)")
            #expect(discNotOpaque == 0, "frame \(k): \(discNotOpaque) pixels of the disc have alpha below 250")
            // The veil alone (its bottom-right corner, away from the disc): alpha 128.
            #expect(veil.allSatisfy { abs($0 - 128) <= 3 }, "frame \(k): veil alpha \(Set(veil).sorted())")
        }
    }

    @Test func vp9OverAnOpaqueBackgroundStaysPlainUnlessAlphaIsAskedFor() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try AlphaRenderTests.images(in: dir)
        let opaque = Self.composition(export: #"{"fileType": "webm", "video": {"vp9Speed": 8}}"#)
            .replacingOccurrences(of: "#00000000", with: "#102030")
        let (plain, plan) = try Fixtures.render(opaque, in: dir, name: "plain.webm")
        #expect(!plan.export.video.writesAlpha && plan.chunkFileType == .mp4)
        let stream = try #require(Media.stream(try Media.probe(plain), type: "video"))
        #expect((stream["tags"] as? [String: Any])?["alpha_mode"] == nil, "\(stream)")

        // Asked for: the alpha is written, opaque everywhere over an opaque background.
        let asked = Self.composition(export: #"{"fileType": "webm", "video": {"vp9Speed": 8, "alpha": true}}"#)
            .replacingOccurrences(of: "#00000000", with: "#102030")
        let (withAlpha, alphaPlan) = try Fixtures.render(asked, in: dir, name: "alpha.webm")
        #expect(alphaPlan.export.video.writesAlpha)
        let frames = try Self.planes(withAlpha)
        #expect(frames.count == Self.frames)
        #expect(frames.allSatisfy { $0.a.allSatisfy { $0 >= 250 } }, "an opaque background gives an opaque alpha")
    }
}
