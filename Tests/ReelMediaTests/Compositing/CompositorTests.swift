import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelKernels
@testable import ReelMedia

/// The fast compositor against the Double reference (`ReferenceCompositor`), plus the
/// exactness properties the renderer relies on.
@Suite(.blocking) struct CompositorTests {
    /// Draws with both implementations and checks every plane's PSNR.
    func expectMatchesReference(source: YUVImage, dest: YUVImage, transform: AffineTransform, opacity: Double = 1,
                                crop: Rect? = nil, minPSNR: Double = 45, sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = ReferenceCompositor.draw(source, transform: transform, opacity: opacity, crop: crop, onto: dest)
        Compositor.draw(source, transform: transform, opacity: opacity, crop: crop, onto: dest)
        let actual = TestImages.planes(dest)
        for (k, name) in ["Y", "U", "V"].enumerated() {
            let p = TestImages.psnr(actual[k], expected[k])
            #expect(p >= minPSNR, "plane \(name): PSNR \(p) dB < \(minPSNR)", sourceLocation: sourceLocation)
        }
    }

    @Test func opacityBlendOfTwoRandomImages() {
        let top = TestImages.random(width: 160, height: 120, seed: 1)
        let bottom = TestImages.random(width: 160, height: 120, seed: 2)
        let before = TestImages.planes(bottom)
        expectMatchesReference(source: top, dest: bottom, transform: .identity, opacity: 0.3)
        // Not a no-op, and a true mix: every pixel lies between the two inputs (±1 rounding).
        let src = TestImages.planes(top), out = TestImages.planes(bottom)
        #expect(out[0] != before[0])
        for k in out[0].indices {
            let lo = min(src[0][k], before[0][k]), hi = max(src[0][k], before[0][k])
            if out[0][k] + 1 < lo || out[0][k] > hi &+ 1 { Issue.record("pixel \(k) out of range"); break }
        }
    }

    @Test func downscale1920To640() {
        let source = TestImages.random(width: 1920, height: 1080, seed: 3)
        let dest = TestImages.random(width: 640, height: 360, seed: 4)
        expectMatchesReference(source: source, dest: dest, transform: .scale(1.0 / 3, 1.0 / 3))
    }

    @Test func upscale160To480() {
        let source = TestImages.random(width: 160, height: 120, seed: 5)
        let dest = TestImages.random(width: 480, height: 360, seed: 6)
        expectMatchesReference(source: source, dest: dest, transform: .scale(3, 3))
    }

    @Test(arguments: [0.5, 0.8])
    func scaledAndOffsetWithOpacity(opacity: Double) {
        let source = TestImages.random(width: 100, height: 70, seed: 7)
        let dest = TestImages.random(width: 160, height: 120, seed: 8)
        let t = AffineTransform.scale(1.37, 0.71).concatenating(.translation(-13.3, 20.6))
        expectMatchesReference(source: source, dest: dest, transform: t, opacity: opacity)
    }

    @Test func rotation90IsAnExactPermutation() {
        let w = 64, h = 40
        let source = TestImages.random(width: w, height: h, seed: 9)
        let dest = TestImages.random(width: h, height: w, seed: 10)
        let t = AffineTransform.rotation(.pi / 2).concatenating(.translation(Double(h), 0))
        expectMatchesReference(source: TestImages.copy(source), dest: TestImages.copy(dest), transform: t)
        Compositor.draw(source, transform: t, opacity: 1, crop: nil, onto: dest)
        // x' = -y + h, y' = x: dest (X, Y) shows source (Y, h-1-X).
        var mismatches = 0
        for yy in 1..<(w - 1) {
            for xx in 1..<(h - 1) where dest.y.row(yy)[xx] != source.y.row(h - 1 - xx)[yy] { mismatches += 1 }
        }
        #expect(mismatches == 0)
        for yy in 1..<(w / 2 - 1) {
            for xx in 1..<(h / 2 - 1) where dest.u.row(yy)[xx] != source.u.row(h / 2 - 1 - xx)[yy] { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }

    @Test(arguments: [1.0, 2.0, 3.0])
    func quarterTurnsMatchReference(quarters: Double) {
        let source = TestImages.random(width: 60, height: 44, seed: 11)
        let dest = TestImages.random(width: 120, height: 120, seed: 12)
        let t = AffineTransform.rotation(quarters * .pi / 2).concatenating(.scale(1.3, 1.3)).concatenating(.translation(60, 60))
        expectMatchesReference(source: source, dest: dest, transform: t, opacity: 0.9)
    }

    @Test func generalAffine() {
        let source = TestImages.random(width: 160, height: 120, seed: 13)
        let dest = TestImages.random(width: 200, height: 160, seed: 14)
        let t = AffineTransform.rotation(17 * .pi / 180).concatenating(.scale(0.8, 0.8)).concatenating(.translation(40.3, 12.7))
        expectMatchesReference(source: source, dest: dest, transform: t)
    }

    @Test func cropLimitsTheDrawnPart() {
        let source = TestImages.random(width: 160, height: 120, seed: 15)
        let dest = TestImages.random(width: 160, height: 120, seed: 16)
        let before = TestImages.planes(dest)
        let crop = Rect(x: 30.5, y: 20, width: 80, height: 60.25)
        let t = AffineTransform.scale(1.2, 1.2).concatenating(.translation(-20, -10))
        expectMatchesReference(source: source, dest: dest, transform: t, crop: crop)
        // Outside the transformed crop (plus the 1-pixel ramp) the dest is untouched.
        let after = TestImages.planes(dest)
        let box = t.boundingBox(of: crop)
        for yy in 0..<120 {
            for xx in 0..<160 {
                let inside = Double(xx) + 1 > box.x - 1 && Double(xx) < box.maxX + 1 && Double(yy) + 1 > box.y - 1 && Double(yy) < box.maxY + 1
                if !inside && after[0][yy * 160 + xx] != before[0][yy * 160 + xx] { Issue.record("touched (\(xx),\(yy))"); return }
            }
        }
    }

    @Test(arguments: [AffineTransform.translation(12, 8), .translation(10.25, 7.5),
                      AffineTransform.rotation(0.3).concatenating(.translation(30, -5))])
    func alphaSourceWithTransparentHole(transform: AffineTransform) {
        // RGBA: opaque colour field with a transparent disc and a soft alpha ramp on the right.
        let w = 90, h = 70
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        for y in 0..<h {
            for x in 0..<w {
                let k = 4 * (y * w + x)
                rgba[k] = UInt8(x * 255 / w); rgba[k + 1] = UInt8(y * 255 / h); rgba[k + 2] = 200
                let dx = Double(x - 35), dy = Double(y - 35)
                rgba[k + 3] = dx * dx + dy * dy < 400 ? 0 : (x > 70 ? UInt8((90 - x) * 12) : 255)
            }
        }
        let source = RGBAImage(width: w, height: h, pixels: rgba).yuvImage(.bt601)
        let dest = TestImages.random(width: 120, height: 100, seed: 17)
        let before = TestImages.planes(dest)
        expectMatchesReference(source: source, dest: dest, transform: transform, opacity: 0.85)
        // The hole shows the background unchanged.
        let centre = transform.apply(Point(x: 35, y: 35))
        let cx = Int(centre.x), cy = Int(centre.y)
        #expect(TestImages.bytes(dest.y)[cy * 120 + cx] == before[0][cy * 120 + cx])
    }

    @Test func drawingFullyOutsideIsANoOp() {
        let source = TestImages.random(width: 64, height: 48, seed: 18, alpha: true)
        let dest = TestImages.random(width: 80, height: 60, seed: 19)
        let before = TestImages.planes(dest)
        for t in [AffineTransform.translation(81, 0), .translation(-65, 10), .translation(0, 61),
                  AffineTransform.rotation(0.5).concatenating(.translation(300, 300)), .scale(0.5, 0.5).concatenating(.translation(-33, -30))] {
            Compositor.draw(source, transform: t, opacity: 1, crop: nil, onto: dest)
            let unchanged = TestImages.planes(dest) == before
            #expect(unchanged, "\(t)")
        }
    }

    @Test func opacityZeroIsANoOp() {
        let source = TestImages.random(width: 64, height: 48, seed: 20)
        let dest = TestImages.random(width: 64, height: 48, seed: 21)
        let before = TestImages.planes(dest)
        Compositor.draw(source, transform: .rotation(0.2), opacity: 0, crop: nil, onto: dest)
        Compositor.draw(source, transform: .identity, opacity: 0, crop: nil, onto: dest)
        Compositor.draw(source, transform: .identity, opacity: 0.001, crop: nil, onto: dest)   // rounds to 0/255
        let unchanged = TestImages.planes(dest) == before
        #expect(unchanged)
    }

    @Test(arguments: [(64, 48), (63, 47)])
    func opaqueIdentityAtFullOpacityIsAnExactCopy(size: (Int, Int)) {
        let source = TestImages.random(width: size.0, height: size.1, seed: 22)
        let dest = TestImages.random(width: size.0, height: size.1, seed: 23)
        Compositor.draw(source, transform: .identity, opacity: 1, crop: nil, onto: dest)
        let identical = TestImages.planes(dest) == TestImages.planes(source)
        #expect(identical)
    }

    @Test func integerTranslationCopiesTheOverlap() {
        let source = TestImages.random(width: 40, height: 30, seed: 24)
        let dest = TestImages.random(width: 64, height: 48, seed: 25)
        Compositor.draw(source, transform: .translation(30, -6), opacity: 1, crop: nil, onto: dest)
        for yy in 0..<24 {
            for xx in 30..<64 where dest.y.row(yy)[xx] != source.y.row(yy + 6)[xx - 30] {
                Issue.record("(\(xx),\(yy))"); return
            }
        }
        for yy in 0..<12 {
            for xx in 15..<32 where dest.u.row(yy)[xx] != source.u.row(yy + 3)[xx - 15] {
                Issue.record("chroma (\(xx),\(yy))"); return
            }
        }
    }

    @Test func fastPathsAgreeWithTheGeneralPath() {
        // A transform that is integer-translation up to 1e-12 must not change the picture.
        let source = TestImages.random(width: 50, height: 40, seed: 26, alpha: true)
        let a = TestImages.random(width: 64, height: 48, seed: 27), b = TestImages.copy(a)
        Compositor.draw(source, transform: .translation(6, 4), opacity: 0.7, crop: nil, onto: a)
        Compositor.draw(source, transform: AffineTransform(a: 1 + 1e-12, b: 0, c: 0, d: 1, tx: 6, ty: 4), opacity: 0.7, crop: nil, onto: b)
        #expect(TestImages.psnr(TestImages.bytes(a.y), TestImages.bytes(b.y)) > 50)
        #expect(TestImages.psnr(TestImages.bytes(a.u), TestImages.bytes(b.u)) > 45)
    }

    /// Red in limited range: Y' 81 (BT.601) or 63 (BT.709: the HD colour bars' code values,
    /// SMPTE RP 219), Cr 240 with either.
    @Test(arguments: [(YCbCrMatrix.smpte170M, 81), (.bt709, 63)])
    func fillUsesTheMatrixInLimitedRange(matrix: YCbCrMatrix, luma: Int) {
        let image = YUVImage(width: 10, height: 6)
        Compositor.fill(image, color: RGBAColor(r: 255, g: 0, b: 0), conversion: ColorConversion(matrix: matrix))
        #expect(TestImages.bytes(image.y).allSatisfy { abs(Int($0) - luma) <= 1 })
        #expect(TestImages.bytes(image.v).allSatisfy { (239...241).contains($0) })
    }
}
