import ReelCore
import ReelKernels
import Testing
import ReelThreadTesting
@testable import ReelMedia

/// Burned-in caption blocks: centred, wrapped, boxed, outlined, highlighted per character, and
/// shaped with the same fonts and fallback as text overlays.
@Suite(.blocking, .serialized) struct CaptionRasterizerTests {
    let rasterizer: TextRasterizer
    init() throws { rasterizer = try TextRasterizer() }

    func style(fontSize: Double = 40, background: RGBAColor = RGBAColor(r: 0, g: 0, b: 0, a: 0), outline: Double = 0,
               maxWidth: Double = 0.9) -> PlannedCaptionStyle {
        PlannedCaptionStyle(font: "sans-serif", fontSize: fontSize, color: .white, backgroundColor: background, outlineColor: RGBAColor(r: 255, g: 0, b: 0),
                            outlineWidth: outline, position: .bottom, margin: 20, maxWidth: maxWidth)
    }

    func render(_ text: String, lit: [Bool]? = nil, style: PlannedCaptionStyle, highlight: RGBAColor? = nil, maxWidth: Int = 1000) throws -> RGBAImage {
        try rasterizer.renderCaption(text, lit: lit ?? Array(repeating: false, count: text.unicodeScalars.count), style: style,
                                     highlight: highlight, scale: 1, maxWidth: maxWidth)
    }

    /// Columns and rows that hold any pixel with alpha ≥ `threshold` matching `test`.
    func extent(_ image: RGBAImage, threshold: UInt8 = 128, where test: (UInt8, UInt8, UInt8) -> Bool = { _, _, _ in true })
        -> (x: ClosedRange<Int>, y: ClosedRange<Int>)? {
        var xs: [Int] = [], ys: [Int] = []
        for y in 0..<image.height {
            for x in 0..<image.width {
                let k = (y * image.width + x) * 4
                if image.pixels[k + 3] >= threshold && test(image.pixels[k], image.pixels[k + 1], image.pixels[k + 2]) { xs.append(x); ys.append(y) }
            }
        }
        guard let x0 = xs.min(), let x1 = xs.max(), let y0 = ys.min(), let y1 = ys.max() else { return nil }
        return (x0...x1, y0...y1)
    }

    @Test func aLineIsCentredOnItsBoxAndTheBlockIsEven() throws {
        let image = try render("Centre me", style: style(background: RGBAColor(r: 0, g: 0, b: 0, a: 200)))
        #expect(image.width % 2 == 0 && image.height % 2 == 0)
        // The box fills the block; the text's ink is centred in it (within a couple of pixels of side bearing).
        let ink = try #require(extent(image) { r, _, _ in r > 128 })
        let left = ink.x.lowerBound, right = image.width - 1 - ink.x.upperBound
        #expect(abs(left - right) <= 3, "ink from \(ink.x) in a block \(image.width) wide")
        #expect(image.pixels[3] == 200 && image.pixels[(image.width * image.height - 1) * 4 + 3] == 200)
    }

    @Test func longCuesWrapToTheMaximumWidthAndEveryLineIsCentred() throws {
        let text = "A caption long enough that it has to wrap onto a second line"
        let wide = try render(text, style: style(), maxWidth: 2000)
        let narrow = try render(text, style: style(), maxWidth: 500)
        #expect(narrow.width <= 500 && narrow.height > wide.height * 3 / 2)
        // Each line's ink is centred: compare ink extents per band of rows.
        var bands: [(Int, Int)] = []
        var inBand = false
        for y in 0..<narrow.height {
            let row = (0..<narrow.width).filter { narrow.pixels[(y * narrow.width + $0) * 4 + 3] > 128 }
            if !row.isEmpty && !inBand { bands.append((y, y)); inBand = true }
            if !row.isEmpty { bands[bands.count - 1].1 = y } else { inBand = false }
        }
        #expect(bands.count >= 2)
        for band in bands where band.1 - band.0 > 10 {
            var lo = narrow.width, hi = 0
            for y in band.0...band.1 {
                for x in 0..<narrow.width where narrow.pixels[(y * narrow.width + x) * 4 + 3] > 128 { lo = min(lo, x); hi = max(hi, x) }
            }
            #expect(abs(lo - (narrow.width - 1 - hi)) <= 4, "band \(band): ink \(lo)…\(hi) of \(narrow.width)")
        }
    }

    @Test func highlightedCharactersTakeTheHighlightColour() throws {
        let yellow = RGBAColor(r: 255, g: 255, b: 0)
        let text = "OLD NEW"
        let lit = text.unicodeScalars.indices.map { text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: $0) < 4 }
        let image = try render(text, lit: lit, style: style(), highlight: yellow)
        let yellowInk = try #require(extent(image) { r, g, b in r > 200 && g > 200 && b < 80 })
        let whiteInk = try #require(extent(image) { r, g, b in r > 200 && g > 200 && b > 200 })
        // "OLD " is yellow, on the left; "NEW" white, on the right.
        #expect(yellowInk.x.upperBound < whiteInk.x.lowerBound)
        let none = try render(text, style: style(), highlight: yellow)
        #expect(extent(none) { r, g, b in r > 200 && g > 200 && b < 80 } == nil)
    }

    @Test func anOutlineSurroundsTheGlyphs() throws {
        let plain = try render("O", style: style(fontSize: 60))
        let outlined = try render("O", style: style(fontSize: 60, outline: 3))
        let red = try #require(extent(outlined) { r, g, b in r > 200 && g < 60 && b < 60 })
        let white = try #require(extent(outlined) { r, g, b in r > 200 && g > 200 && b > 200 })
        #expect(red.x.lowerBound < white.x.lowerBound && red.x.upperBound > white.x.upperBound)
        #expect(red.y.lowerBound < white.y.lowerBound && red.y.upperBound > white.y.upperBound)
        #expect(extent(plain) { r, g, b in r > 200 && g < 60 && b < 60 } == nil)
    }

    /// Chinese, Arabic and emoji come from the fonts that have them (no .notdef box), the emoji
    /// in colour — the fallback and shaping of text overlays.
    @Test func chineseArabicAndEmojiUseTheirFonts() throws {
        let text = "加点水印 مرحبا 🍎"
        let usage = try rasterizer.fontUsage(text: text, family: "sans-serif")
        #expect(usage.filter { $0.scalar != " " }.allSatisfy { $0.glyphIndex != 0 }, "\(usage)")
        #expect(Set(usage.filter { $0.scalar != " " }.map(\.file)).count >= 3)
        let image = try render(text, style: style())
        // Colour pixels (the emoji) exist, and the text spans most of the block.
        #expect(extent(image) { r, g, b in max(r, g, b) - min(r, g, b) > 80 } != nil)
        let ink = try #require(extent(image))
        #expect(ink.x.count > image.width / 2)
    }
}
