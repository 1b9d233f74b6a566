import Foundation
import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelKernels
@testable import ReelMedia

/// Every pointwise filter and every blend mode against its formula computed independently in
/// numpy (`Tests/References/filter_reference.py`) on the frames ffmpeg decodes from the same
/// sources: PSNR ≥ 38 dB on every plane, on three test patterns.
@Suite(.blocking) struct PointwiseFilterTests {
    static let patterns = ["testsrc2", "smptebars", "gradients=seed=7:speed=0.05"]
    static let minimumPSNR = 38.0

    /// The filters of docs/composition.md's pointwise table, each at a value that changes
    /// the picture a lot, plus a chain of four.
    static let cases: [String] = [
        #"[{"type": "brightness", "brightness": 0.25}]"#,
        #"[{"type": "brightness", "brightness": -0.3}]"#,
        #"[{"type": "contrast", "contrast": 1.8}]"#,
        #"[{"type": "contrast", "contrast": 0.4}]"#,
        #"[{"type": "saturation", "saturation": 1.8}]"#,
        #"[{"type": "saturation", "saturation": 0.3}]"#,
        #"[{"type": "gamma", "gamma": 0.5}]"#,
        #"[{"type": "gamma", "gamma": 2.2}]"#,
        #"[{"type": "exposure", "exposure": 0.7}]"#,
        #"[{"type": "hue", "degrees": 75}]"#,
        #"[{"type": "hue", "degrees": -140}]"#,
        #"[{"type": "grayscale"}]"#,
        #"[{"type": "invert"}]"#,
        #"[{"type": "sepia"}]"#,
        #"[{"type": "sepia", "intensity": 0.5}]"#,
        #"[{"type": "colorMatrix", "matrix": [[0.2, 0.9, 0.1, 0.05], [0.8, 0.1, -0.2, 0], [0.3, -0.4, 1.2, -0.1]], "intensity": 0.9}]"#,
        #"[{"type": "brightness", "brightness": 0.1}, {"type": "contrast", "contrast": 1.2}, {"type": "saturation", "saturation": 1.3}, {"type": "sepia"}]"#,
        #"[{"type": "invert"}, {"type": "gamma", "gamma": 1.8}, {"type": "hue", "degrees": 30}, {"type": "brightness", "brightness": -0.1}]"#,
    ]

    @Test(arguments: cases)
    func pointwiseFilterMatchesItsFormula(_ filters: String) throws {
        let dir = try TestMedia.tempDirectory()
        for (p, pattern) in Self.patterns.enumerated() {
            let clip = try FilterReference.clip(pattern, in: dir, name: "src\(p).mp4")
            let source = try FilterReference.raw(clip, in: dir, name: "src\(p).yuv")
            let reel = try FilterReference.render(
                FilterReference.composition(clips: [clip], layers: [#"{"track": 1, "filters": \#(filters)}"#]), in: dir, name: "reel\(p)")
            let reference = dir.appendingPathComponent("ref\(p).yuv").path
            try FilterReference.python(["filters", "--size", "320x240", "--input", source, "--filters", filters, "--output", reference]
                                       + FilterReference.matrices)
            let psnr = try FilterReference.psnr(reel, reference)
            for plane in ["y", "u", "v"] {
                let value = try #require(psnr[plane])
                #expect(value >= Self.minimumPSNR, "\(filters) on \(pattern), plane \(plane): PSNR \(value) dB")
            }
            // Not the identity: the filter changed the picture (a broken pipeline that drops
            // the filters would otherwise pass wherever the formula barely changes it).
            let unchanged = try FilterReference.psnr(reel, source)
            #expect((unchanged["y"] ?? 999) < 40 || (unchanged["u"] ?? 999) < 40, "\(filters) on \(pattern) left the picture as it was")
        }
    }

    /// `videoComposition.filters` applies to the composited picture: a half-size layer over a
    /// grey background, inverted as a whole.
    @Test func pictureFiltersApplyToTheWholeComposite() throws {
        let dir = try TestMedia.tempDirectory()
        let clip = try FilterReference.clip("testsrc2", in: dir, name: "src.mp4")
        let filters = #"[{"type": "invert"}, {"type": "saturation", "saturation": 0.5}]"#
        let plain = try FilterReference.render(FilterReference.composition(clips: [clip], layers: [#"{"track": 1}"#]), in: dir, name: "plain")
        let filtered = try FilterReference.render(
            FilterReference.composition(clips: [clip], layers: [#"{"track": 1}"#], pictureFilters: filters), in: dir, name: "filtered")
        let reference = dir.appendingPathComponent("ref.yuv").path
        try FilterReference.python(["filters", "--size", "320x240", "--input", plain, "--filters", filters, "--output", reference]
                                   + FilterReference.outputMatrices)
        let psnr = try FilterReference.psnr(filtered, reference)
        for plane in ["y", "u", "v"] {
            #expect(try #require(psnr[plane]) >= Self.minimumPSNR, "plane \(plane): \(psnr)")
        }
    }

    static let blendModes = BlendMode.allCases.filter { $0 != .normal }.map(\.rawValue) + ["normal"]

    /// A blend mode at opacity 0.7 of testsrc2 over smptebars (and of gradients over testsrc2):
    /// W3C's `B(Cb, Cs)` in 0…1 RGB, then source-over. Colour dodge and burn jump between their
    /// extremes where a backdrop channel is 0 (1) under a source of 1 (0), as the bars' and
    /// testsrc2's primaries are: read in BT.709 at 8 bits, such a channel lands within 2·10⁻⁴ of
    /// it, on either side, so the rounding decides; the reference marks those pixels
    /// (`--unsettled`) and they are not compared (at most a quarter of the samples).
    @Test(arguments: blendModes)
    func blendModeMatchesW3CFormula(_ mode: String) throws {
        let dir = try TestMedia.tempDirectory()
        for (k, (top, bottom)) in [("testsrc2", "smptebars"), ("gradients=seed=3:speed=0.05", "testsrc2")].enumerated() {
            let topClip = try FilterReference.clip(top, in: dir, name: "top\(k).mp4")
            let bottomClip = try FilterReference.clip(bottom, in: dir, name: "bottom\(k).mp4")
            let reel = try FilterReference.render(FilterReference.composition(
                clips: [topClip, bottomClip],
                layers: [#"{"track": 1, "blendMode": "\#(mode)", "opacity": 0.7}"#, #"{"track": 2}"#]), in: dir, name: "reel\(k)")
            let reference = dir.appendingPathComponent("ref\(k).yuv").path
            let unsettled = dir.appendingPathComponent("unsettled\(k).yuv").path
            try FilterReference.python(["blend", "--size", "320x240", "--mode", mode, "--opacity", "0.7",
                                        "--bottom", try FilterReference.raw(bottomClip, in: dir, name: "b\(k).yuv"),
                                        "--top", try FilterReference.raw(topClip, in: dir, name: "t\(k).yuv"), "--output", reference,
                                        "--unsettled", unsettled]
                                       + FilterReference.matrices)
            let psnr = try FilterReference.psnr(reel, reference, skip: unsettled)
            for plane in ["y", "u", "v"] {
                let value = try #require(psnr[plane])
                #expect(value >= Self.minimumPSNR, "\(mode), \(top) over \(bottom), plane \(plane): PSNR \(value) dB")
            }
            let compared = try #require(psnr["compared"])
            #expect(compared >= (mode == "colorDodge" || mode == "colorBurn" ? 0.75 : 1), "\(mode): \(compared * 100) % of samples compared")
        }
    }
}
