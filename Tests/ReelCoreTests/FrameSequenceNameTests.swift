import Testing
@testable import ReelCore
import ReelThreadTesting

/// A PNG sequence's output name (`DIR/frame-%05d.png`) and its files, numbered from 1.
@Suite(.blocking) struct FrameSequenceNameTests {
    @Test func numberFieldsAreReplacedByTheFrameNumberFromOne() throws {
        let name = try #require(FrameSequenceName("out/frames/frame-%05d.png"))
        #expect(name.directory == "out/frames" && name.prefix == "frame-" && name.suffix == ".png" && name.digits == 5)
        #expect(name.fileName(number: 1) == "frame-00001.png")
        #expect(name.path(number: 100) == "out/frames/frame-00100.png")
        #expect(name.fileName(number: 123_456) == "frame-123456.png", "never cut")
        let plain = try #require(FrameSequenceName("%d.png"))
        #expect(plain.directory == "." && plain.path(number: 7) == "./7.png")
        #expect(FrameSequenceName("/f%03d.png")?.path(number: 2) == "/f002.png")
    }

    @Test(arguments: ["frame.png", "frame-%s.png", "a%d-%d.png", "frame-%%d.png", "frame-%5d.png", "frame-%00d.png", "%d", "frame-%0d.png"])
    func namesWithoutExactlyOneNumberFieldAreRefused(_ path: String) {
        #expect(FrameSequenceName(path) == nil, "\(path)")
    }

    @Test func theOutputNameDecidesAPNGSequenceAndMustHoldANumberField() throws {
        #expect(try OutputContainer.fileType(forOutput: "dir/frame-%05d.png", export: ExportOptions()).get() == .png)
        guard case .failure(let error) = OutputContainer.fileType(forOutput: "dir/frame.png", export: ExportOptions()) else {
            Issue.record("a .png name without a number field was accepted"); return
        }
        #expect(error.message == "the output name frame.png ends in .png, a PNG sequence, whose name needs one frame number field "
                + "(%d, or %05d for five digits): name it like DIR/frame-%05d.png")
        // A PNG sequence is PNG pictures whatever the preset; an explicit other codec is refused by validation.
        #expect(try OutputContainer.fileType(forOutput: "f%d.png", export: ExportOptions(preset: .prores4444)).get() == .png)
    }

    @Test func pngSequencesAreRGBAByDefault() {
        let png = ExportSettings(resolving: ExportOptions(preset: .prores4444, fileType: .png), frameDuration: Rational(1, 25))
        #expect(png.video.codec == "png" && png.video.writesAlpha && png.fileType == .png && png.video.bitRate == nil)
        let rgb = ExportSettings(resolving: ExportOptions(fileType: .png, video: VideoExportOverrides(alpha: false)), frameDuration: Rational(1, 25))
        #expect(rgb.video.codec == "png" && rgb.video.alpha == nil)
    }
}
