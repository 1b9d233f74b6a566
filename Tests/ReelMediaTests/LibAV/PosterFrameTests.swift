import Foundation
import Testing
import ReelThreadTesting
@testable import ReelKernels
@testable import ReelMedia

@Suite("Poster frames", .blocking)
struct PosterFrameTests {
    /// Left half red, right half blue (BT.601 limited range).
    static func redBlue(width: Int, height: Int) -> YUVImage {
        let image = YUVImage(width: width, height: height)
        image.fill(y: 41, u: 240, v: 110)
        for row in 0..<height { memset(image.y.row(row), 81, width / 2) }
        for row in 0..<image.u.height {
            memset(image.u.row(row), 90, image.u.width / 2)
            memset(image.v.row(row), 240, image.v.width / 2)
        }
        return image
    }

    @Test("a 1280x720 frame becomes a 320x180 JPEG that decodes to the same colours, left and right")
    func landscape() throws {
        let jpeg = try PosterFrame.jpeg(Self.redBlue(width: 1280, height: 720))
        #expect(jpeg.starts(with: [0xFF, 0xD8]), "a JPEG starts with SOI")
        #expect(jpeg.count < PosterFrame.maxBytes)
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("poster.jpg").path
        try Data(jpeg).write(to: URL(fileURLWithPath: path))
        let decoded = try StillImage.load(path: path)
        #expect(decoded.width == 320 && decoded.height == 180)
        // Away from the edge between the halves (JPEG blocks blur it).
        #expect(abs(Int(decoded.y.row(90)[60]) - 81) <= 6, "red's luma")
        #expect(abs(Int(decoded.v.row(45)[30]) - 240) <= 6, "red's Cr")
        #expect(abs(Int(decoded.y.row(90)[260]) - 41) <= 6, "blue's luma")
        #expect(abs(Int(decoded.u.row(45)[130]) - 240) <= 6, "blue's Cb")
    }

    @Test("a portrait frame keeps its aspect ratio at even sizes; a small one is not enlarged")
    func sizes() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for (width, height, expected) in [(360, 640, (320, 568)), (200, 113, (200, 112))] {
            let path = dir.appendingPathComponent("poster-\(width).jpg").path
            try Data(try PosterFrame.jpeg(Self.redBlue(width: width, height: height))).write(to: URL(fileURLWithPath: path))
            let decoded = try StillImage.load(path: path)
            #expect(decoded.width == expected.0 && decoded.height == expected.1, "\(width)x\(height)")
        }
    }
}
