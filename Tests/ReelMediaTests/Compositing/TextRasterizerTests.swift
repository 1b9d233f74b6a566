import CFreeType
import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelKernels
@testable import ReelMedia

/// Text overlays: coverage lands inside the box, wraps, falls back to fonts that have the
/// characters (checked with FreeType directly), and never spills outside.
@Suite(.blocking, .serialized) struct TextRasterizerTests {
    let rasterizer: TextRasterizer
    init() throws { rasterizer = try TextRasterizer() }

    /// Alpha values, row-major.
    func alpha(_ image: RGBAImage) -> [UInt8] { Swift.stride(from: 3, to: image.pixels.count, by: 4).map { image.pixels[$0] } }

    /// Rows with any coverage, grouped into consecutive bands.
    func coveredBands(_ image: RGBAImage) -> [ClosedRange<Int>] {
        let a = alpha(image)
        var bands: [ClosedRange<Int>] = []
        for y in 0..<image.height where a[(y * image.width)..<((y + 1) * image.width)].contains(where: { $0 > 0 }) {
            if let last = bands.last, last.upperBound == y - 1 { bands[bands.count - 1] = last.lowerBound...y } else { bands.append(y...y) }
        }
        return bands
    }

    @Test func helloRendersInsideTheBox() throws {
        let image = try rasterizer.render(text: "Hello", family: "sans-serif", pixelSize: 24,
                                          color: RGBAColor(r: 255, g: 200, b: 0, a: 255), width: 120, height: 40)
        #expect(image.width == 120 && image.height == 40 && image.pixels.count == 120 * 40 * 4)
        let a = alpha(image)
        let covered = a.indices.filter { a[$0] > 0 }
        #expect(covered.count > 100)
        #expect(a.contains(255))
        // Left-aligned at the top: coverage starts near x = 0 and stays within the text's extent.
        let xs = covered.map { $0 % 120 }
        #expect(xs.min()! <= 4)
        #expect(xs.max()! < 100)
        // Colour is the requested colour everywhere (straight alpha).
        #expect(image.pixels[0] == 255 && image.pixels[1] == 200 && image.pixels[2] == 0)
    }

    @Test func colourAlphaScalesCoverage() throws {
        let opaque = try rasterizer.render(text: "H", family: "sans-serif", pixelSize: 30, color: .white, width: 40, height: 40)
        let half = try rasterizer.render(text: "H", family: "sans-serif", pixelSize: 30,
                                         color: RGBAColor(r: 255, g: 255, b: 255, a: 128), width: 40, height: 40)
        #expect(alpha(opaque).max() == 255)
        #expect(alpha(half).max() == 128)
    }

    @Test func longSentenceWraps() throws {
        let text = "The quick brown fox jumps over the lazy dog and keeps running"
        let image = try rasterizer.render(text: text, family: "DejaVu Serif", pixelSize: 20, color: .white, width: 200, height: 200)
        #expect(coveredBands(image).count >= 2)
        // Nothing drawn beyond the right edge is possible by construction; check words were not
        // cut: the narrow box keeps every band's coverage inside 200 px with a margin of spaces.
        let single = try rasterizer.render(text: "fox", family: "DejaVu Serif", pixelSize: 20, color: .white, width: 200, height: 200)
        #expect(coveredBands(single).count == 1)
    }

    @Test func explicitNewlinesStartNewLines() throws {
        let image = try rasterizer.render(text: "A\nB\nC", family: "sans-serif", pixelSize: 16, color: .white, width: 200, height: 100)
        #expect(coveredBands(image).count == 3)
    }

    @Test func chineseCaptionUsesFontsThatHaveTheGlyphs() throws {
        let caption = "加点水印看看效果"
        let usage = try rasterizer.fontUsage(text: caption, family: "sans-serif")
        #expect(usage.count == 8)
        for entry in usage {
            #expect(entry.glyphIndex != 0, "U+\(String(entry.scalar.value, radix: 16)) served by \(entry.file) as .notdef")
            // Independently of the rasterizer: open that file with FreeType and ask its cmap.
            var library: FT_Library?
            #expect(FT_Init_FreeType(&library) == 0)
            defer { FT_Done_FreeType(library) }
            var face: FT_Face?
            #expect(FT_New_Face(library, entry.file, 0, &face) == 0)
            defer { if let face { FT_Done_Face(face) } }
            if let face { #expect(FT_Get_Char_Index(face, FT_ULong(entry.scalar.value)) != 0) }
        }
        // A Latin family falls back too.
        for entry in try rasterizer.fontUsage(text: caption, family: "DejaVu Serif") { #expect(entry.glyphIndex != 0) }

        let rendered = try rasterizer.render(text: caption, family: "sans-serif", pixelSize: 30, color: .white, width: 600, height: 40)
        let boxes = try rasterizer.render(text: "□□□□□□□□", family: "sans-serif", pixelSize: 30, color: .white, width: 600, height: 40)
        let a = alpha(rendered)
        #expect(a.filter { $0 > 0 }.count > 500)
        #expect(a != alpha(boxes))
        // Ideographs are dense: far more coverage than eight outline boxes.
        #expect(a.reduce(0) { $0 + Int($1) } > alpha(boxes).reduce(0) { $0 + Int($1) })
        // Eight glyphs of ~30 px advance in one line.
        let xs = a.indices.filter { a[$0] > 0 }.map { $0 % 600 }
        #expect(xs.max()! > 200 && xs.max()! < 260)
    }

    @Test func chineseWrapsBetweenIdeographs() throws {
        let image = try rasterizer.render(text: "加点水印看看效果", family: "sans-serif", pixelSize: 30, color: .white, width: 100, height: 200)
        #expect(coveredBands(image).count >= 3)
    }

    @Test(arguments: [(12, 30), (60, 12), (300, 20), (300, 70)])
    func clippedTextNeverWritesOutsideTheBox(size: (Int, Int)) throws {
        let text = "Clipped text WWWWWWWWWWWWWWWWWWWWW 加点水印\nmore lines\nand more"
        let (w, h) = size
        let clipped = try rasterizer.render(text: text, family: "sans-serif", pixelSize: 40, color: .white, width: w, height: h)
        #expect(clipped.pixels.count == w * h * 4)
        // The same layout in a taller box: the clipped render is exactly its top h rows, so
        // clipping removed lines without moving or bleeding anything.
        let tall = try rasterizer.render(text: text, family: "sans-serif", pixelSize: 40, color: .white, width: w, height: 400)
        let top = Array(tall.pixels[0..<(w * h * 4)])
        let sameAsTop = clipped.pixels == top
        #expect(sameAsTop)
        #expect(alpha(clipped).contains { $0 > 0 })
        // The tall render has lines below the clipped box, i.e. something really was clipped.
        #expect(alpha(tall)[(w * h)...].contains { $0 > 0 })
    }

    @Test func wordsWiderThanTheBoxBreakAnywhere() throws {
        let lines = TextLayout.lines("abcdefghij", maxWidth: 3) { _ in 64 }
        #expect(lines.map(\.count) == [3, 3, 3, 1])
        let words = TextLayout.lines("ab cd ef", maxWidth: 5) { _ in 64 }
        #expect(words.map { String(String.UnicodeScalarView($0.map(\.scalar))) } == ["ab cd", "ef"])
        let cjk = TextLayout.lines("加点水印", maxWidth: 2) { _ in 64 }
        #expect(cjk.map(\.count) == [2, 2])
    }
}
