import Foundation
import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelKernels

/// The blend modes' 16-bit fixed-point loop (`FixedBlend`) and `Float` loop (`BlendModeKernel`)
/// against W3C's formulas worked out here in `Double`, pixel by pixel: both pictures to 0…1 RGB
/// (clamped), B(Cb, Cs), source-over by alpha × opacity, luma per pixel, chroma from each
/// block's mean. Widths that are not multiples of the 16-pixel group, a layer with an alpha
/// plane and one without, and pictures with illegal Y'CbCr so the clamps act; in BT.601 and
/// BT.709 (the kernels read and write a picture in its own matrix).
/// (The formulas are checked against numpy on rendered clips in `PointwiseFilterTests`.)
@Suite(.blocking) struct FixedBlendTests {
    static func rgb(_ image: YUVImage, _ x: Int, _ y: Int, _ k: FixedAffineTests.Matrix) -> [Double] {
        k.rgb(y: Double(image.y.row(y)[x]), cb: Double(image.u.row(y / 2)[x / 2]), cr: Double(image.v.row(y / 2)[x / 2]))
    }

    static func formula(_ mode: BlendMode, _ cb: Double, _ cs: Double) -> Double {
        func hardLight(_ cb: Double, _ cs: Double) -> Double {
            cs <= 0.5 ? cb * 2 * cs : cb + (2 * cs - 1) - cb * (2 * cs - 1)
        }
        switch mode {
        case .normal: return cs
        case .multiply: return cb * cs
        case .screen: return cb + cs - cb * cs
        case .overlay: return hardLight(cs, cb)
        case .darken: return min(cb, cs)
        case .lighten: return max(cb, cs)
        case .colorDodge: return cb == 0 ? 0 : cs == 1 ? 1 : min(1, cb / (1 - cs))
        case .colorBurn: return cb == 1 ? 1 : cs == 0 ? 0 : 1 - min(1, (1 - cb) / cs)
        case .hardLight: return hardLight(cb, cs)
        case .softLight:
            let d = cb <= 0.25 ? ((16 * cb - 12) * cb + 4) * cb : cb.squareRoot()
            return cs <= 0.5 ? cb - (1 - 2 * cs) * cb * (1 - cb) : cb + (2 * cs - 1) * (d - cb)
        case .difference: return abs(cb - cs)
        case .exclusion: return cb + cs - 2 * cb * cs
        case .add: return min(1, cb + cs)
        }
    }

    /// The exact result, rounded, for every sample (y, u, v planes); and for each block whether
    /// a channel of it lies within `margin` of 0 or 1 before clamping, where colour dodge and
    /// burn jump between their extremes on any rounding of the input (not compared for those).
    static func reference(_ layer: YUVImage, _ frame: YUVImage, _ mode: BlendMode, opacity: Double,
                          _ k: FixedAffineTests.Matrix) -> (planes: [[Int]], edgy: [Bool]) {
        let w = frame.width, h = frame.height, margin = 3e-4
        var y = [Int](repeating: 0, count: w * h), u = [Int](repeating: 0, count: w * h / 4), v = u
        var edgy = [Bool](repeating: false, count: w * h / 4)
        for cy in 0..<h / 2 {
            for cx in 0..<w / 2 {
                var mean = [0.0, 0.0, 0.0]
                for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let px = 2 * cx + dx, py = 2 * cy + dy
                    let s = rgb(layer, px, py, k), b = rgb(frame, px, py, k)
                    if (s + b).contains(where: { abs($0) < margin || abs($0 - 1) < margin }) { edgy[cy * w / 2 + cx] = true }
                    let alpha = (layer.a.map { Double($0.row(py)[px]) } ?? 255) / 255 * opacity
                    var out = [0.0, 0.0, 0.0]
                    for c in 0..<3 {
                        let cs = min(max(s[c], 0), 1), cb = min(max(b[c], 0), 1)
                        out[c] = cb + (formula(mode, cb, cs) - cb) * alpha
                        mean[c] += out[c] / 4
                    }
                    y[py * w + px] = k.luma(out)
                }
                (u[cy * w / 2 + cx], v[cy * w / 2 + cx]) = k.chroma(mean)
            }
        }
        return ([y, u, v], edgy)
    }

    /// Largest difference and share of differing samples, skipping the blocks `skip` marks.
    static func compare(_ image: YUVImage, _ expected: [[Int]], skip: [Bool]) -> (worst: Int, differing: Double) {
        var worst = 0, differing = 0, total = 0
        for (k, (plane, want)) in zip([image.y, image.u, image.v], expected).enumerated() {
            for r in 0..<plane.height {
                for x in 0..<plane.width {
                    let block = k == 0 ? (r / 2) * (image.width / 2) + x / 2 : r * plane.width + x
                    if skip[block] { continue }
                    let d = abs(Int(plane.row(r)[x]) - want[r * plane.width + x])
                    worst = max(worst, d); differing += d > 0 ? 1 : 0; total += 1
                }
            }
        }
        return (worst, Double(differing) / Double(max(total, 1)))
    }

    @Test(arguments: [(36, 6, true), (50, 4, false), (64, 8, true)], FixedAffineTests.Matrix.both)
    func bothLoopsMatchTheW3CFormulas(_ shape: (Int, Int, Bool), _ matrix: FixedAffineTests.Matrix) {
        let (width, height, withAlpha) = shape
        for (k, mode) in BlendMode.allCases.enumerated() {
            for opacity in [0.7, 1.0] {
                let frame = FixedAffineTests.picture(width: width, height: height, seed: UInt32(3 * k + 1))
                let top = FixedAffineTests.picture(width: width, height: height, seed: UInt32(3 * k + 2))
                let layer = YUVImage(width: width, height: height, hasAlpha: withAlpha)
                for (d, s) in [(layer.y, top.y), (layer.u, top.u), (layer.v, top.v)] {
                    for r in 0..<s.height { d.row(r).update(from: s.row(r), count: s.width) }
                }
                if let a = layer.a {
                    for r in 0..<height { for x in 0..<width { a.row(r)[x] = UInt8(truncatingIfNeeded: (x * 37 + r * 11) % 300) } }
                }
                let (expected, edgy) = Self.reference(layer, frame, mode, opacity: opacity, matrix)
                let skip = mode == .colorDodge || mode == .colorBurn ? edgy : edgy.map { _ in false }
                #expect(skip.filter { $0 }.count * 5 < skip.count, "\(mode): too few blocks compared")
                for fixed in [true, false] {
                    let out = FixedAffineTests.copy(frame)
                    BlendModeKernel.blend(layer, onto: out, mode: mode, opacity: opacity, colour: KernelYCbCr(matrix.matrix), fixedPoint: fixed)
                    let (worst, differing) = Self.compare(out, expected, skip: skip)
                    #expect(worst <= 1 && differing < 0.05,
                            "\(fixed ? "fixed point" : "Float"), \(matrix), \(mode) at \(opacity), \(width)x\(height): worst \(worst), \(differing * 100) % differ")
                }
            }
        }
    }

    /// The AVX2 and AVX-512BW kernels (`CReelAVX2`) write the Swift kernel's bytes: every mode,
    /// with and without an alpha plane, at three opacities, on widths with and without a
    /// remainder past their 32- or 64-pixel steps (and one narrower than a step), on random
    /// pictures with illegal Y'CbCr (so the clamps act and channels sit at exactly 0 and 1,
    /// where dodge, burn and soft light branch). Skipped where the CPU has neither.
    @Test(.enabled(if: VectorISA.detected.hasAVX2, "this CPU has no AVX2"), arguments: [(36, 4), (64, 6), (96, 4), (130, 6), (200, 2)],
          FixedAffineTests.Matrix.both)
    func theVectorKernelsWriteTheSwiftKernelsBytes(_ size: (Int, Int), _ matrix: FixedAffineTests.Matrix) {
        let (width, height) = size
        let colour = KernelYCbCr(matrix.matrix)
        for (k, mode) in BlendMode.allCases.enumerated() {
            for withAlpha in [true, false] {
                let frame = FixedAffineTests.picture(width: width, height: height, seed: UInt32(5 * k + width))
                let top = FixedAffineTests.picture(width: width, height: height, seed: UInt32(5 * k + width + 1))
                let layer = YUVImage(width: width, height: height, hasAlpha: withAlpha)
                for (d, s) in [(layer.y, top.y), (layer.u, top.u), (layer.v, top.v)] {
                    for r in 0..<s.height { d.row(r).update(from: s.row(r), count: s.width) }
                }
                if let a = layer.a {
                    for r in 0..<height { for x in 0..<width { a.row(r)[x] = UInt8(truncatingIfNeeded: (x * 53 + r * 29) % 290) } }
                }
                for opacity in [0.35, 0.8, 1.0] {
                    let swift = FixedAffineTests.copy(frame)
                    FixedBlend.blend(layer, onto: swift, mode: mode, opacity: opacity, colour: colour, isa: .baseline)
                    for isa in [VectorISA.avx2, .avx512] where isa <= VectorISA.detected {
                        let vector = FixedAffineTests.copy(frame)
                        FixedBlend.blend(layer, onto: vector, mode: mode, opacity: opacity, colour: colour, isa: isa)
                        for (a, b) in zip([swift.y, swift.u, swift.v], [vector.y, vector.u, vector.v]) {
                            let differing = (0..<a.height).reduce(0) { n, r in n + (0..<a.width).filter { a.row(r)[$0] != b.row(r)[$0] }.count }
                            #expect(differing == 0, "\(isa): \(matrix), \(mode), alpha \(withAlpha), opacity \(opacity), \(width)x\(height): \(differing) samples differ from the Swift kernel's")
                        }
                    }
                }
            }
        }
    }
}
