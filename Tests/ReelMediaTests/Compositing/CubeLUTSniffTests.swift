import Testing
@testable import ReelMedia
import ReelThreadTesting

/// `.cube` LUTs told from other files by their first bytes, as assets stored under their
/// content hash (no name) must be.
@Suite(.blocking) struct CubeLUTSniffTests {
    @Test func aCubeFileIsRecognisedWhateverItsHeaderLinesAre() {
        let cube = "# made by a grading tool\n\nTITLE \"warm\"\nDOMAIN_MIN 0 0 0\nDOMAIN_MAX 1 1 1\nLUT_3D_SIZE 2\n0 0 0\n1 0 0\n"
        #expect(CubeLUTFile.sniff(Array(cube.utf8)))
        #expect(CubeLUTFile.sniff(Array("LUT_1D_SIZE 4\r\n0 0 0\r\n".utf8)))
    }

    @Test func otherFilesAreNot() {
        // An MP4's first box, an SRT, a WebVTT file, a table with no size keyword, and nothing.
        #expect(!CubeLUTFile.sniff([0, 0, 0, 0x20] + Array("ftypisom".utf8) + [0, 0, 2, 0]))
        #expect(!CubeLUTFile.sniff(Array("1\n00:00:01,000 --> 00:00:02,000\nLUT_3D_SIZE 2\n".utf8)))
        #expect(!CubeLUTFile.sniff(Array("WEBVTT\n\n00:01.000 --> 00:02.000\nhello\n".utf8)))
        #expect(!CubeLUTFile.sniff(Array("TITLE \"x\"\n0 0 0\nLUT_3D_SIZE 2\n".utf8)))
        #expect(!CubeLUTFile.sniff([]))
    }
}
