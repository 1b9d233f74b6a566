import Foundation
import ReelCore
import ReelThreadTesting
import Testing
@testable import ReelKernels

/// The affine filters' Y'CbCr path (`YCbCrAffine`): where a block does not clamp, it gives the
/// RGB path's luma and chroma to within one code value; where a block clamps, it leaves the
/// group to the RGB path. The RGB path itself is held to numpy's formulas in
/// `PointwiseFilterTests`.
@Suite(.blocking) struct YCbCrAffineTests {
    /// 256×64: smooth luma and chroma ramps (most blocks stay inside 0…1 under a mild filter),
    /// a band of pseudo-random pixels, and white and black bands that clamp under brightness,
    /// contrast and exposure.
    static func picture() -> YUVImage {
        let image = YUVImage(width: 256, height: 64)
        var seed: UInt32 = 12_345
        func next() -> UInt8 {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: seed >> 24)
        }
        for r in 0..<64 {
            for c in 0..<256 {
                let y: UInt8
                switch r {
                case 0..<40: y = UInt8(40 + (c * 150 / 255) + r)
                case 40..<48: y = 16 + next() % 220
                case 48..<56: y = 235
                default: y = 16
                }
                image.y.row(r)[c] = y
            }
        }
        for r in 0..<32 {
            for c in 0..<128 {
                let random = (20..<24).contains(r)
                image.u.row(r)[c] = random ? 16 + next() % 225 : UInt8(108 + (c * 40 / 127))
                image.v.row(r)[c] = random ? 16 + next() % 225 : UInt8(148 - r)
            }
        }
        return image
    }

    static let filters: [(String, [FilterDraw])] = [
        ("brightness", [.brightness(0.1)]),
        ("brightness −0.25", [.brightness(-0.25)]),
        ("contrast", [.contrast(1.3)]),
        ("saturation", [.saturation(1.5)]),
        ("exposure", [.exposure(0.5)]),
        ("hue", [.hue(degrees: 30)]),
        ("grayscale", [.grayscale]),
        ("invert", [.invert]),
        ("sepia", [.sepia(intensity: 1)]),
        ("colorMatrix", [.colorMatrix(matrix: [0.9, 0.1, 0.0, 0.02, 0.05, 0.85, 0.1, 0.0, 0.0, 0.2, 0.8, -0.02], intensity: 1)]),
        ("chain of four", [.brightness(0.1), .contrast(1.2), .saturation(1.3), .sepia(intensity: 1)]),
    ]

    @Test(arguments: filters.map(\.0))
    func unclampedBlocksMatchTheRGBPathAndClampedOnesTakeIt(_ name: String) throws {
        let filters = try #require(Self.filters.first { $0.0 == name }).1
        let program = PointwiseProgram(filters) { _ in fatalError("no LUT") }
        let direct = try #require(program.direct, "an affine run has a Y'CbCr path")
        let source = Self.picture()
        // The RGB path alone, group by group.
        let viaRGB = YUVImage(width: 256, height: 64)
        viaRGB.copy(from: source)
        RGBGroup.forEach(width: 256, height: 64) { x, cy, count in program.applyInRGB(viaRGB, x: x, cy: cy, count: count) }
        // The program as it runs, counting the groups the Y'CbCr path took.
        let applied = YUVImage(width: 256, height: 64)
        applied.copy(from: source)
        program.apply(to: applied)
        let probe = YUVImage(width: 256, height: 64)
        probe.copy(from: source)
        var direct_ = 0, total = 0
        RGBGroup.forEach(width: 256, height: 64) { x, cy, _ in
            total += 1
            if direct.applyIfUnclamped(probe, x: x, cy: cy) { direct_ += 1 }
        }
        #expect(direct_ > total / 4, "\(name): the Y'CbCr path took \(direct_) of \(total) groups")
        #expect(direct_ < total, "\(name): some groups clamp and take the RGB path")

        for (plane, width, height) in [(\YUVImage.y, 256, 64), (\.u, 128, 32), (\.v, 128, 32)] {
            var worst = 0
            for r in 0..<height {
                for c in 0..<width {
                    worst = max(worst, abs(Int(applied[keyPath: plane].row(r)[c]) - Int(viaRGB[keyPath: plane].row(r)[c])))
                }
            }
            #expect(worst <= 1, "\(name): differs from the RGB path by \(worst) code values")
        }
        // And the filter changed the picture (a path that wrote nothing would match an
        // identity program).
        var changed = 0
        for r in 0..<64 { for c in 0..<256 where applied.y.row(r)[c] != source.y.row(r)[c] || (r < 32 && c < 128 && applied.u.row(r)[c] != source.u.row(r)[c]) { changed += 1 } }
        #expect(changed > 256 * 64 / 4, "\(name): changed \(changed) pixels")
    }

    /// A block that the map would push outside 0…1 is left alone by the Y'CbCr path.
    @Test func aClampingBlockIsLeftToTheRGBPath() throws {
        let program = PointwiseProgram([.brightness(0.2)]) { _ in fatalError("no LUT") }
        let direct = try #require(program.direct)
        let image = YUVImage(width: 16, height: 2)
        image.fill(y: 120, u: 128, v: 128)
        image.y.row(1)[13] = 230  // one bright pixel in the second group's last block
        #expect(direct.applyIfUnclamped(image, x: 0, cy: 0))
        #expect(image.y.row(0)[0] == UInt8((120 + 0.2 * 219).rounded()))
        #expect(!direct.applyIfUnclamped(image, x: 8, cy: 0))
        #expect(image.y.row(1)[13] == 230 && image.y.row(0)[8] == 120, "nothing written")
    }

    /// A program with a gamma or LUT stage has no Y'CbCr path.
    @Test func onlyPurelyAffineProgramsHaveOne() {
        #expect(PointwiseProgram([.brightness(0.1), .gamma(2)]) { _ in fatalError() }.direct == nil)
        #expect(PointwiseProgram([.saturation(1.2), .hue(degrees: 10)]) { _ in fatalError() }.direct != nil)
    }
}
