import Foundation
import Testing
import ReelThreadTesting
import ReelCore
@testable import ReelKernels
@testable import ReelMedia

@Suite("Poster frames", .blocking)
struct PosterFrameTests {
    /// Left half red, right half blue, in limited-range Y'CbCr of `matrix`: the published code
    /// values of BT.601 and of BT.709 (SMPTE RP 219's HD bars).
    static func redBlue(width: Int, height: Int, matrix: YCbCrMatrix = .smpte170M) -> YUVImage {
        let (red, blue): ((UInt8, UInt8, UInt8), (UInt8, UInt8, UInt8)) = matrix == .bt709 ? ((63, 102, 240), (32, 240, 118)) : ((81, 90, 240), (41, 240, 110))
        let image = YUVImage(width: width, height: height)
        image.fill(y: blue.0, u: blue.1, v: blue.2)
        for row in 0..<height { memset(image.y.row(row), Int32(red.0), width / 2) }
        for row in 0..<image.u.height {
            memset(image.u.row(row), Int32(red.1), image.u.width / 2)
            memset(image.v.row(row), Int32(red.2), image.v.width / 2)
        }
        return image
    }

    /// ffmpeg decodes the JPEG (JFIF: BT.601, full range) to red and blue whichever matrix the
    /// frame was in.
    @Test("a 1280x720 frame becomes a 320x180 JPEG that decodes to the same colours, left and right",
          arguments: [YCbCrMatrix.smpte170M, .bt709])
    func landscape(matrix: YCbCrMatrix) throws {
        let jpeg = try PosterFrame.jpeg(Self.redBlue(width: 1280, height: 720, matrix: matrix), matrix: matrix)
        #expect(jpeg.starts(with: [0xFF, 0xD8]), "a JPEG starts with SOI")
        #expect(jpeg.count < PosterFrame.maxBytes)
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("poster.jpg").path
        try Data(jpeg).write(to: URL(fileURLWithPath: path))
        let decoded = try TestMedia.decodeFrameRGB(path, index: 0)
        #expect(decoded.width == 320 && decoded.height == 180)
        // Away from the edge between the halves (JPEG blocks blur it).
        func pixel(_ x: Int, _ y: Int) -> [Int] { (0..<3).map { Int(decoded.pixels[3 * (y * 320 + x) + $0]) } }
        for (name, at, expected) in [("red", pixel(60, 90), [255, 0, 0]), ("blue", pixel(260, 90), [0, 0, 255])] {
            #expect(zip(at, expected).allSatisfy { abs($0 - $1) <= 8 }, "\(name): \(at)")
        }
    }

    @Test("a portrait frame keeps its aspect ratio at even sizes; a small one is not enlarged")
    func sizes() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for (width, height, expected) in [(360, 640, (320, 568)), (200, 113, (200, 112))] {
            let path = dir.appendingPathComponent("poster-\(width).jpg").path
            try Data(try PosterFrame.jpeg(Self.redBlue(width: width, height: height), matrix: .smpte170M)).write(to: URL(fileURLWithPath: path))
            let decoded = try StillImage.load(path: path)
            #expect(decoded.width == expected.0 && decoded.height == expected.1, "\(width)x\(height)")
        }
    }
}
