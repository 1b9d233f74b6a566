import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelKernels
@testable import ReelMedia

@Suite(.blocking) struct ColorConversionTests {
    /// The published limited-range code values of 100 % colours: BT.601's, and BT.709's (the
    /// HD colour bars of SMPTE RP 219); BT.2020's red from its luma weights.
    @Test(arguments: [
        (YCbCrMatrix.smpte170M, RGBAColor.white, (235, 128, 128)),
        (.smpte170M, RGBAColor.black, (16, 128, 128)),
        (.smpte170M, RGBAColor(r: 255, g: 0, b: 0), (81, 90, 240)),
        (.smpte170M, RGBAColor(r: 0, g: 255, b: 0), (145, 54, 34)),
        (.smpte170M, RGBAColor(r: 0, g: 0, b: 255), (41, 240, 110)),
        (.bt709, RGBAColor.white, (235, 128, 128)),
        (.bt709, RGBAColor(r: 255, g: 0, b: 0), (63, 102, 240)),
        (.bt709, RGBAColor(r: 0, g: 255, b: 0), (173, 42, 26)),
        (.bt709, RGBAColor(r: 0, g: 0, b: 255), (32, 240, 118)),
        (.bt2020NCL, RGBAColor(r: 255, g: 0, b: 0), (74, 97, 240)),
    ])
    func knownValues(matrix: YCbCrMatrix, color: RGBAColor, expected: (Int, Int, Int)) {
        let c = ColorConversion(matrix: matrix).yuv(color)
        #expect(abs(Int(c.y) - expected.0) <= 1 && abs(Int(c.u) - expected.1) <= 1 && abs(Int(c.v) - expected.2) <= 1,
                "\(color) → \(c)")
    }

    /// RGB → YUV image → RGB over a grid of colours, each filling a 2×2 block so chroma
    /// subsampling is lossless; the only error left is quantisation.
    @Test(arguments: [YCbCrMatrix.smpte170M, .bt709, .bt2020NCL])
    func roundTripOnAColourGrid(matrix: YCbCrMatrix) {
        let conversion = ColorConversion(matrix: matrix)
        let levels = Array(stride(from: 0, through: 255, by: 17))
        let colours = levels.flatMap { r in levels.flatMap { g in levels.map { b in (r, g, b) } } }
        let blocksPerRow = 64
        let w = blocksPerRow * 2, h = ((colours.count + blocksPerRow - 1) / blocksPerRow) * 2
        var rgba = [UInt8](repeating: 255, count: w * h * 4)
        for (n, c) in colours.enumerated() {
            let bx = (n % blocksPerRow) * 2, by = (n / blocksPerRow) * 2
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let k = 4 * ((by + dy) * w + bx + dx)
                rgba[k] = UInt8(c.0); rgba[k + 1] = UInt8(c.1); rgba[k + 2] = UInt8(c.2); rgba[k + 3] = UInt8((n * 7) & 255)
            }
        }
        let image = RGBAImage(width: w, height: h, pixels: rgba).yuvImage(conversion)
        let back = conversion.rgba(image)
        var worst = 0
        for n in colours.indices {
            let k = 4 * ((n / blocksPerRow) * 2 * w + (n % blocksPerRow) * 2)
            for ch in 0..<3 { worst = max(worst, abs(Int(back[k + ch]) - Int(rgba[k + ch]))) }
            #expect(back[k + 3] == rgba[k + 3])
        }
        #expect(worst <= 2, "worst channel error \(worst)")
    }

    /// BT.470BG and SMPTE 170M are two names of BT.601's numbers.
    @Test func bothNamesOfBT601AreOneConversion() {
        #expect(ColorConversion.bt601 == ColorConversion(matrix: .bt470BG))
    }
}
