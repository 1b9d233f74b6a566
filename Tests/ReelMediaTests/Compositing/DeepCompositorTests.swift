import Testing
import ReelThreadTesting
@testable import ReelKernels

/// The 16-bit compositor of HDR renders, against the mix written out here in Double.
@Suite(.blocking) struct DeepCompositorTests {
    static func frame(_ y: UInt16, _ c: UInt16) -> DeepYUVImage {
        let image = DeepYUVImage(width: 8, height: 6)
        image.fill(y: y, u: c, v: c)
        return image
    }

    @Test func aFourFourFourLayerAtOddCoordinatesMixesLumaAndAveragesChromaByCoverage() {
        let frame = Self.frame(4096, 32768)
        let layer = DeepYUVImage(width: 3, height: 3, subsampled: false)
        layer.fill(y: 60160, u: 20000, v: 50000)
        // Distinct chroma per pixel, so the block means are checked, not a constant.
        for row in 0..<3 { for col in 0..<3 { layer.u.row(row)[col] = UInt16(20000 + 1000 * (row * 3 + col)) } }
        DeepCompositor.draw(layer, x: 1, y: 1, opacity: 0.25, onto: frame)
        for row in 0..<6 {
            for col in 0..<8 {
                let inside = (1...3).contains(row) && (1...3).contains(col)
                let want = inside ? (4096 + (60160.0 - 4096) * 0.25).rounded() : 4096
                #expect(Double(frame.y.row(row)[col]) == want, "Y at \(col),\(row)")
            }
        }
        // Block (0,0) holds layer pixel (0,0) only: 1 of 4 pixels, opacity 0.25 · 1/4.
        #expect(Double(frame.u.row(0)[0]) == (32768 + (20000.0 - 32768) * 0.0625).rounded())
        // Block (1,1) holds layer pixels (1,1), (2,1), (1,2), (2,2): mean 20000 + 1000·(4+5+7+8)/4, all covered.
        #expect(Double(frame.u.row(1)[1]) == (32768 + (26000.0 - 32768) * 0.25).rounded())
        // Block (1,0) holds (1,0), (2,0): half covered.
        #expect(Double(frame.u.row(0)[1]) == (32768 + (21500.0 - 32768) * 0.125).rounded())
        // Outside the layer nothing moves.
        #expect(frame.u.row(2)[3] == 32768 && frame.v.row(2)[3] == 32768)
    }

    @Test func aFourTwoZeroLayerOnTheGridIsCopiedAtFullOpacityAndClippedToTheFrame() {
        let frame = Self.frame(4096, 32768)
        let layer = DeepYUVImage(width: 6, height: 4)
        layer.fill(y: 30000, u: 40000, v: 25000)
        DeepCompositor.draw(layer, x: 4, y: 4, opacity: 1, onto: frame)
        #expect(frame.y.row(5)[7] == 30000 && frame.y.row(3)[7] == 4096 && frame.y.row(5)[3] == 4096)
        #expect(frame.u.row(2)[2] == 40000 && frame.v.row(2)[3] == 25000 && frame.u.row(1)[2] == 32768)
        DeepCompositor.draw(layer, x: -2, y: 0, opacity: 0.5, onto: frame)
        #expect(Double(frame.y.row(0)[0]) == (4096 + (30000.0 - 4096) * 0.5).rounded() && frame.y.row(0)[4] == 4096)
        #expect(Double(frame.v.row(0)[1]) == (32768 + (25000.0 - 32768) * 0.5).rounded())
    }
}
