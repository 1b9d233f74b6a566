import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelKernels
@testable import ReelMedia

/// Frames with an alpha plane (outputs that write alpha): Porter-Duff source-over on the
/// coverage, checked against formulas written here in Double and against `ReferenceCompositor`.
@Suite(.blocking) struct AlphaCompositingTests {
    /// BT.601 limited range, the textbook coefficients (not Reel's fixed-point tables).
    static func yuv(_ r: Double, _ g: Double, _ b: Double) -> (y: Double, u: Double, v: Double) {
        (16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255,
         128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255,
         128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255)
    }

    /// Porter-Duff over on straight colours (0…255) and alphas (0…1): (colour, alpha).
    static func over(_ s: [Double], _ sa: Double, _ d: [Double], _ da: Double) -> (colour: [Double], alpha: Double) {
        let a = sa + da * (1 - sa)
        return (zip(s, d).map { ($0 * sa + $1 * da * (1 - sa)) / a }, a)
    }

    static func solid(width: Int, height: Int, r: UInt8, g: UInt8, b: UInt8, a: UInt8) -> YUVImage {
        RGBAImage(width: width, height: height, pixels: Array((0..<width * height).map { _ in [r, g, b, a] }.joined())).yuvImage(.bt601)
    }

    @Test func aTransparentBackgroundWithoutAlphaIsDrawnOverBlack() {
        let frame = YUVImage(width: 16, height: 16)
        Compositor.fill(frame, color: RGBAColor(r: 255, g: 0, b: 0, a: 0x80), conversion: .bt601)
        // Red at 128/255 over black: (128.5, 0, 0) in RGB.
        let e = Self.yuv(255 * 128 / 255, 0, 0)
        #expect(abs(Double(frame.y.row(3)[5]) - e.y) <= 0.6 && abs(Double(frame.u.row(2)[2]) - e.u) <= 0.6
                && abs(Double(frame.v.row(2)[2]) - e.v) <= 0.6, "\(frame.y.row(3)[5]) \(frame.u.row(2)[2]) \(frame.v.row(2)[2]) vs \(e)")
        // Opaque colours are what they always were.
        let opaque = YUVImage(width: 16, height: 16)
        Compositor.fill(opaque, color: RGBAColor(r: 16, g: 32, b: 64), conversion: .bt601)
        let c = ColorConversion.bt601.yuv(RGBAColor(r: 16, g: 32, b: 64))
        #expect(opaque.y.row(0)[0] == c.y && opaque.u.row(0)[0] == c.u && opaque.v.row(0)[0] == c.v)
        let withAlpha = YUVImage(width: 16, height: 16, hasAlpha: true)
        Compositor.fill(withAlpha, color: RGBAColor(r: 255, g: 0, b: 0, a: 0x80), conversion: .bt601)
        #expect(withAlpha.a!.row(7)[9] == 0x80)
    }

    /// A half-transparent orange layer over a 25 % blue background: the straight colour and the
    /// alpha of Porter-Duff over, on the integer path and on a resampled (scaled) draw.
    @Test(arguments: [false, true])
    func halfTransparentLayerOverTransparentBackgroundIsPorterDuffOver(scaled: Bool) {
        let frame = YUVImage(width: 64, height: 48, hasAlpha: true)
        Compositor.fill(frame, color: RGBAColor(r: 0, g: 0, b: 255, a: 0x40), conversion: .bt601)
        let layer = Self.solid(width: 32, height: 24, r: 255, g: 128, b: 0, a: 128)
        let t: AffineTransform = scaled ? AffineTransform.scale(1.37, 1.21).concatenating(.translation(8.3, 6.6)) : .translation(8, 6)
        Compositor.draw(layer, transform: t, opacity: 1, crop: nil, onto: frame)
        Compositor.unpremultiply(frame)
        let (colour, alpha) = Self.over([255, 128, 0], 128.0 / 255, [0, 0, 255], 0x40 / 255.0)
        let e = Self.yuv(colour[0], colour[1], colour[2])
        // Inside the layer (away from its antialiased edges) and outside it.
        for (x, y) in [(20, 14), (30, 20), (16, 12)] {
            #expect(abs(Double(frame.a!.row(y)[x]) - alpha * 255) <= 1, "alpha at \(x),\(y): \(frame.a!.row(y)[x]) vs \(alpha * 255)")
            #expect(abs(Double(frame.y.row(y)[x]) - e.y) <= 2, "Y at \(x),\(y): \(frame.y.row(y)[x]) vs \(e.y)")
            #expect(abs(Double(frame.u.row(y / 2)[x / 2]) - e.u) <= 2, "U at \(x),\(y): \(frame.u.row(y / 2)[x / 2]) vs \(e.u)")
            #expect(abs(Double(frame.v.row(y / 2)[x / 2]) - e.v) <= 2, "V at \(x),\(y): \(frame.v.row(y / 2)[x / 2]) vs \(e.v)")
        }
        let blue = Self.yuv(0, 0, 255)
        #expect(frame.a!.row(46)[62] == 0x40)
        #expect(abs(Double(frame.y.row(46)[62]) - blue.y) <= 2 && abs(Double(frame.u.row(23)[31]) - blue.u) <= 2, "background keeps its colour")
    }

    /// The alpha plane after a draw is the Double reference compositor's result for a source
    /// of value 255 onto a dest holding the alpha: antialiased edges included.
    @Test(arguments: [
        AffineTransform.translation(5, 3),
        AffineTransform.scale(1.37, 0.71).concatenating(.translation(-13.3, 20.6)),
        AffineTransform.rotation(0.3).concatenating(.translation(30, -5)),
    ])
    func coverageMatchesTheReferenceCompositor(transform: AffineTransform) {
        let source = TestImages.random(width: 100, height: 70, seed: 21, alpha: true)
        let frame = YUVImage(width: 160, height: 120, hasAlpha: true)
        Compositor.fill(frame, color: RGBAColor(r: 10, g: 200, b: 30, a: 0x30), conversion: .bt601)
        // The reference's view: colour 255 with the source's alpha, onto a plane holding the dest alpha.
        let white = YUVImage(width: source.width, height: source.height, hasAlpha: true)
        white.fill(y: 255, u: 255, v: 255)
        for r in 0..<source.height { white.a!.row(r).update(from: source.a!.row(r), count: source.width) }
        let before = YUVImage(width: 160, height: 120)
        before.fill(y: 0x30, u: 0, v: 0)
        let expected = ReferenceCompositor.draw(white, transform: transform, opacity: 0.8, crop: nil, onto: before)[0]
        Compositor.draw(source, transform: transform, opacity: 0.8, crop: nil, onto: frame)
        let actual = TestImages.bytes(frame.a!)
        #expect(actual != [UInt8](repeating: 0x30, count: actual.count), "the draw changed no alpha")
        let p = TestImages.psnr(actual, expected)
        #expect(p >= 45, "alpha PSNR \(p) dB")
    }

    /// Without an alpha plane nothing changes: the same draw gives the same bytes as on a frame
    /// with one (the colour is premultiplied over black either way before `unpremultiply`).
    @Test func colourPlanesDoNotDependOnTheAlphaPlane() {
        let source = TestImages.random(width: 100, height: 70, seed: 22, alpha: true)
        let t = AffineTransform.scale(1.1, 0.9).concatenating(.translation(3.5, 7.25))
        let opaque = YUVImage(width: 120, height: 90), transparent = YUVImage(width: 120, height: 90, hasAlpha: true)
        Compositor.fill(opaque, color: RGBAColor(r: 0, g: 0, b: 0), conversion: .bt601)
        Compositor.fill(transparent, color: RGBAColor(r: 0, g: 0, b: 0, a: 0), conversion: .bt601)
        Compositor.draw(source, transform: t, opacity: 0.7, crop: nil, onto: opaque)
        Compositor.draw(source, transform: t, opacity: 0.7, crop: nil, onto: transparent)
        #expect(TestImages.planes(opaque) == TestImages.planes(transparent))
    }

    /// A blend-mode layer adds its alpha to the frame's coverage by source-over too.
    @Test func blendModeLayersAccumulateCoverage() {
        let frame = YUVImage(width: 32, height: 32, hasAlpha: true)
        Compositor.fill(frame, color: RGBAColor(r: 0, g: 0, b: 0, a: 0), conversion: .bt601)
        let layer = Self.solid(width: 32, height: 32, r: 200, g: 100, b: 50, a: 102)
        Compositor.blend(layer, onto: frame, mode: .multiply, opacity: 0.5)
        // 102/255 × 0.5 = 0.2 over 0.
        #expect(abs(Int(frame.a!.row(10)[10]) - 51) <= 1, "\(frame.a!.row(10)[10])")
    }
}
