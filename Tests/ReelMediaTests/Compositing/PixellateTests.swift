import Foundation
import ReelCore
import ReelThreadTesting
import Testing
@testable import ReelKernels

/// `pixellate`'s even-size path (chroma summed and written on the chroma planes) gives the
/// general path's bytes, with and without alpha, whether the picture's edges cut the last
/// blocks or not. The general path is held to a reference in `EffectFilterTests`.
@Suite(.blocking) struct PixellateTests {
    @Test(arguments: [(2, 64, 48), (4, 64, 48), (10, 70, 46), (16, 1920 / 8, 1080 / 8 + 1), (24, 50, 30)])
    func theEvenPathGivesTheGeneralPathsBytes(_ size: Int, _ width: Int, _ height: Int) {
        let h = height & ~1
        for alpha in [false, true] {
            let source = TestImages.random(width: width, height: h, seed: UInt64(size * 1000 + width), alpha: alpha)
            let even = TestImages.copy(source), general = TestImages.copy(source)
            var scratch: [Int] = []
            Pixellate.apply(to: even, size: size, scratch: &scratch)
            Pixellate.applyGeneral(to: general, size: size, scratch: &scratch)
            var planes = zip(TestImages.planes(even), TestImages.planes(general)).map { ($0, $1) }
            if alpha { planes.append((TestImages.bytes(even.a!), TestImages.bytes(general.a!))) }
            for (k, (a, b)) in planes.enumerated() {
                let differing = zip(a, b).filter { $0 != $1 }.count
                #expect(differing == 0, "size \(size), \(width)x\(h), alpha \(alpha), plane \(k): \(differing) bytes differ")
            }
            // And the picture is pixellated: the first block is one luma value.
            let y = TestImages.bytes(even.y)
            var firstBlock = Set<UInt8>()
            for r in 0..<min(size, h) { for c in 0..<min(size, width) { firstBlock.insert(y[r * width + c]) } }
            #expect(firstBlock.count == 1)
        }
    }
}
