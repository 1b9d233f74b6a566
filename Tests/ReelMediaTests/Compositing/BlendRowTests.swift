import Testing
import ReelThreadTesting
@testable import ReelKernels

/// `BlendKernels.blendRow` with an alpha plane skips 16-pixel spans of alpha 0 and copies
/// spans of alpha 255 at full opacity: the result must be the per-pixel blend's everywhere,
/// on rows mixing such spans with partial ones, at odd lengths and offsets.
@Suite(.blocking) struct BlendRowTests {
    @Test(arguments: [255, 200, 1])
    func spansGiveThePerPixelBlend(_ opacity: Int) {
        let count = 16 * 9 + 7
        var alpha = [UInt8](repeating: 0, count: count + 3)
        for x in alpha.indices {
            switch (x / 16) % 4 {
            case 0: alpha[x] = 255
            case 1: alpha[x] = 0
            case 2: alpha[x] = UInt8(truncatingIfNeeded: x * 37)
            default: alpha[x] = x % 16 == 5 ? 254 : 255   // one pixel short of opaque
            }
        }
        let src = (0..<count + 3).map { UInt8(truncatingIfNeeded: $0 * 11 + 3) }
        let dst = (0..<count + 3).map { UInt8(truncatingIfNeeded: 250 - $0 * 7) }
        for offset in [0, 3] {
            var out = dst
            src.withUnsafeBufferPointer { s in
                alpha.withUnsafeBufferPointer { a in
                    out.withUnsafeMutableBufferPointer { d in
                        BlendKernels.blendRow(s.baseAddress! + offset, alpha: a.baseAddress! + offset, d.baseAddress! + offset,
                                              count: count, opacity: opacity)
                    }
                }
            }
            for x in 0..<count {
                let i = x + offset
                let a = BlendKernels.div255(Int(alpha[i]) * opacity)
                let want = UInt8(BlendKernels.div255(Int(src[i]) * a + Int(dst[i]) * (255 - a)))
                #expect(out[i] == want, "opacity \(opacity), offset \(offset), pixel \(x): \(out[i]) ≠ \(want)")
            }
            #expect(out[..<offset] == dst[..<offset] && out[(count + offset)...] == dst[(count + offset)...])
        }
    }
}
