import Foundation
import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelKernels

/// The 16-bit fixed-point run of affine filter programs (`FixedAffine`) and the `Float` run
/// (`PointwiseProgram`'s loop) against the program's map worked out here in `Double`, pixel by
/// pixel: each pixel's RGB from its luma and its block's chroma, the map, clamp, luma per pixel,
/// chroma from the block's mean. Widths that are not multiples of the 16-pixel group (the
/// last group goes through a scratch copy), pictures with illegal Y'CbCr (so the clamps act),
/// maps too large for fixed point, which must fall back to `Float`, and a map followed by a
/// `gamma` (its curve by a table of every Q13 value).
/// Each in BT.601 and in BT.709: the kernels read and write a picture in its own matrix.
/// (The maps themselves are checked against numpy in `PointwiseFilterTests`.)
@Suite(.blocking) struct FixedAffineTests {
    /// Limited-range Y'CbCr ↔ 0…1 R'G'B' from a matrix's luma weights (Kr, Kb), as ITU-R
    /// BT.601 and BT.709 define it: the tests' own conversion, in `Double`.
    struct Matrix: CustomStringConvertible, Sendable {
        let matrix: YCbCrMatrix, kr: Double, kb: Double
        var kg: Double { 1 - kr - kb }
        var description: String { "\(matrix)" }
        static let bt601 = Matrix(matrix: .smpte170M, kr: 0.299, kb: 0.114)
        static let bt709 = Matrix(matrix: .bt709, kr: 0.2126, kb: 0.0722)
        static let both = [bt601, bt709]

        /// 0…1 RGB, unclamped, from code values.
        func rgb(y: Double, cb: Double, cr: Double) -> [Double] {
            let l = (y - 16) / 219, pb = (cb - 128) / 224, pr = (cr - 128) / 224
            let r = l + 2 * (1 - kr) * pr, b = l + 2 * (1 - kb) * pb
            return [r, (l - kr * r - kb * b) / kg, b]
        }

        func luma(_ c: [Double]) -> Int { Int((16 + 219 * (kr * c[0] + kg * c[1] + kb * c[2])).rounded()) }

        func chroma(_ c: [Double]) -> (cb: Int, cr: Int) {
            let l = kr * c[0] + kg * c[1] + kb * c[2]
            return (Int((128 + 224 * (c[2] - l) / (2 * (1 - kb))).rounded()), Int((128 + 224 * (c[0] - l) / (2 * (1 - kr))).rounded()))
        }
    }

    static func picture(width: Int, height: Int, seed: UInt32) -> YUVImage {
        let image = YUVImage(width: width, height: height)
        var state = seed &* 2_654_435_761 | 1
        func next() -> UInt8 { state ^= state << 13; state ^= state >> 17; state ^= state << 5; return UInt8(truncatingIfNeeded: state >> 7) }
        for plane in [image.y, image.u, image.v] {
            for r in 0..<plane.height { for x in 0..<plane.width { plane.row(r)[x] = next() } }
        }
        return image
    }

    static func copy(_ image: YUVImage) -> YUVImage {
        let c = YUVImage(width: image.width, height: image.height)
        c.copy(from: image)
        return c
    }

    /// The exact result, rounded, for every sample: (y, u, v) planes.
    static func reference(_ image: YUVImage, _ filters: [FilterDraw], _ k: Matrix = .bt601) -> [[Int]] {
        let m = filters.compactMap(ColorAffine.of).reduce(ColorAffine.identity) { $0.then($1) }
        // A last `gamma` (the one stage the fixed-point run takes after the map).
        var gamma = 1.0
        if case .gamma(let g) = filters.last { gamma = g }
        let w = image.width, h = image.height
        var y = [Int](repeating: 0, count: w * h), u = [Int](repeating: 0, count: w * h / 4), v = u
        for cy in 0..<h / 2 {
            for cx in 0..<w / 2 {
                let cb = Double(image.u.row(cy)[cx]), cr = Double(image.v.row(cy)[cx])
                var mean = [0.0, 0.0, 0.0]
                for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let px = 2 * cx + dx, py = 2 * cy + dy
                    let rgb = k.rgb(y: Double(image.y.row(py)[px]), cb: cb, cr: cr)
                    var out = [0.0, 0.0, 0.0]
                    for i in 0..<3 {
                        let s = m[i, 0] * rgb[0] + m[i, 1] * rgb[1] + m[i, 2] * rgb[2] + m[i, 3]
                        out[i] = pow(min(max(s, 0), 1), gamma)
                        mean[i] += out[i] / 4
                    }
                    y[py * w + px] = k.luma(out)
                }
                (u[cy * w / 2 + cx], v[cy * w / 2 + cx]) = k.chroma(mean)
            }
        }
        return [y, u, v]
    }

    /// Largest difference from `expected` and the share of samples that differ, over all planes.
    static func compare(_ image: YUVImage, _ expected: [[Int]]) -> (worst: Int, differing: Double) {
        var worst = 0, differing = 0, total = 0
        for (plane, want) in zip([image.y, image.u, image.v], expected) {
            for r in 0..<plane.height {
                for x in 0..<plane.width {
                    let d = abs(Int(plane.row(r)[x]) - want[r * plane.width + x])
                    worst = max(worst, d); differing += d > 0 ? 1 : 0; total += 1
                }
            }
        }
        return (worst, Double(differing) / Double(total))
    }

    static let programs: [[FilterDraw]] = [
        [.brightness(0.1)],
        [.brightness(-0.35), .contrast(1.6)],
        [.invert],
        [.hue(degrees: -140), .saturation(1.8)],
        [.brightness(0.1), .contrast(1.2), .saturation(1.3), .sepia(intensity: 1)],
        [.colorMatrix(matrix: [0.2, 0.9, 0.1, 0.05, 0.8, 0.1, -0.2, 0, 0.3, -0.4, 1.2, -0.1], intensity: 0.9)],
        [.contrast(1.9)],
        [.gamma(0.5)],
        [.brightness(0.1), .saturation(1.4), .gamma(2.2)],
    ]

    /// Whether `filters` fit fixed point in `matrix`: all do in BT.601; contrast 1.9 does not in
    /// BT.709, whose Cb weight in blue, 2(1 − Kb)/224, is 5 % larger than BT.601's (its
    /// 1.9-fold exceeds 16 bits), so it runs in `Float` there.
    static func fitsFixedPoint(_ filters: [FilterDraw], _ matrix: Matrix) -> Bool {
        !(matrix.matrix == .bt709 && filters == [.contrast(1.9)])
    }

    @Test(arguments: [(16, 2), (36, 6), (50, 4), (66, 10)], Matrix.both)
    func bothRunsMatchTheMapWorkedOutInDouble(_ size: (Int, Int), _ matrix: Matrix) throws {
        let (width, height) = size
        for (k, filters) in Self.programs.enumerated() {
            let source = Self.picture(width: width, height: height, seed: UInt32(k + width))
            let expected = Self.reference(source, filters, matrix)
            let program = try PointwiseProgram(filters, colour: KernelYCbCr(matrix.matrix)) { _ in throw FilterPipelineError("no LUT") }
            #expect((program.fixed != nil) == Self.fitsFixedPoint(filters, matrix), "\(matrix), \(filters): fixed point \(program.fixed != nil)")
            if let fixed = program.fixed {
                let a = Self.copy(source)
                fixed.apply(to: a)
                let (worst, differing) = Self.compare(a, expected)
                #expect(worst <= 1 && differing < 0.05, "fixed point, \(matrix), \(filters) at \(width)x\(height): worst \(worst), \(differing * 100) % differ")
            }
            var floating = program
            floating.fixed = nil
            let b = Self.copy(source)
            floating.apply(to: b)
            let (worstF, differingF) = Self.compare(b, expected)
            #expect(worstF <= 1 && differingF < 0.02, "Float, \(matrix), \(filters) at \(width)x\(height): worst \(worstF), \(differingF * 100) % differ")
        }
    }

    /// On a CPU with AVX2 (and AVX-512BW), whole 32-pixel (64-pixel) groups run in those
    /// kernels (`CReelAVX2`) and the rest of each row pair in Swift: the same bytes as the Swift
    /// kernel alone, for every program, at widths with and without a remainder, on random
    /// (often illegal) Y'CbCr. Each kernel the CPU has is checked.
    @Test(.enabled(if: VectorISA.detected.hasAVX2, "this CPU has no AVX2"),
          arguments: [(32, 2), (36, 6), (64, 4), (98, 10), (130, 6), (200, 4), (1920, 4)], Matrix.both)
    func theVectorKernelsWriteTheSwiftKernelsBytes(_ size: (Int, Int), _ matrix: Matrix) throws {
        let (width, height) = size
        for (k, filters) in Self.programs.enumerated() where Self.fitsFixedPoint(filters, matrix) {
            let source = Self.picture(width: width, height: height, seed: UInt32(7 * k + width))
            let program = try PointwiseProgram(filters, colour: KernelYCbCr(matrix.matrix)) { _ in throw FilterPipelineError("no LUT") }
            let fixed = try #require(program.fixed)
            let swift = Self.copy(source)
            fixed.apply(to: swift, isa: .baseline)
            let reference = Self.reference(source, filters, matrix)
            // A gamma below 1 is steep near black: the map's value, read in Q13 (one unit,
            // 1/8192, from the exact), goes through x^0.5, whose rise over the first two units
            // is √(2/8192)·219 ≈ 3.4 luma code values; the sampled curve adds its own error
            // there. So three code values from the exact power on this many random pixels
            // (both kernels alike: the bytes are compared below).
            var bound = 1
            if case .gamma = filters.last { bound = 3 }
            for isa in [VectorISA.avx2, .avx512] where isa <= VectorISA.detected {
                let vector = Self.copy(source)
                fixed.apply(to: vector, isa: isa)
                #expect(Self.compare(vector, reference).worst <= bound, "\(isa): \(matrix), \(filters) at \(width)x\(height) against the map")
                for (a, b) in zip([swift.y, swift.u, swift.v], [vector.y, vector.u, vector.v]) {
                    let differing = (0..<a.height).reduce(0) { n, r in n + (0..<a.width).filter { a.row(r)[$0] != b.row(r)[$0] }.count }
                    #expect(differing == 0, "\(isa): \(matrix), \(filters) at \(width)x\(height): \(differing) samples differ from the Swift kernel's")
                }
            }
        }
    }

    /// Maps whose terms do not fit 16 bits run in `Float`, still exactly as the map says.
    @Test func largeMapsFallBackToFloat() throws {
        for filters: [FilterDraw] in [[.exposure(3)], [.contrast(4)], [.colorMatrix(matrix: [4, 0, 0, -1.5, 0, 1, 0, 0, 0, 0, 1, 0], intensity: 1)]] {
            let program = try PointwiseProgram(filters) { _ in throw FilterPipelineError("no LUT") }
            #expect(program.fixed == nil, "\(filters) cannot be held in Q13")
            let source = Self.picture(width: 36, height: 6, seed: 9)
            let image = Self.copy(source)
            program.apply(to: image)
            let (worst, differing) = Self.compare(image, Self.reference(source, filters))
            #expect(worst <= 1 && differing < 0.05, "\(filters): worst \(worst), \(differing * 100) % differ")
        }
    }
}
