import Testing
@testable import ReelCore
import ReelThreadTesting

/// `OutputName`, the one parser of output names, and `OutputContainer` reading through it:
/// a path that names a directory is an error that says so (`-o ..` and `-o .` used to trap).
@Suite(.blocking) struct OutputNameTests {
    @Test(arguments: [
        ("out.mp4", "out.mp4", "out", "mp4"),
        ("renders/Final.Cut.MOV", "Final.Cut.MOV", "Final.Cut", "mov"),
        ("/abs/path/clip.webm", "clip.webm", "clip", "webm"),
        ("../up.m4a", "up.m4a", "up", "m4a"),
        ("noextension", "noextension", "noextension", ""),
        ("out.", "out.", "out", ""),
        ("...", "...", "..", ""),
        (".hidden", ".hidden", "", "hidden"),
        ("dir.d/frame-%05d.png", "frame-%05d.png", "frame-%05d", "png"),
    ])
    func aFileNameSplitsAtItsLastDot(path: String, fileName: String, stem: String, fileExtension: String) throws {
        let name = try OutputName.parse(path).get()
        #expect(name.path == path)
        #expect(name.fileName == fileName)
        #expect(name.stem == stem)
        #expect(name.fileExtension == fileExtension)
    }

    @Test(arguments: [
        ("..", "../out.mp4"), (".", "out.mp4"), ("./", "out.mp4"), ("renders/", "renders/out.mp4"), ("/", "/out.mp4"),
        ("renders/..", "renders/../out.mp4"), ("renders/.", "renders/./out.mp4"), ("/tmp/../", "/tmp/../out.mp4"),
    ])
    func aPathThatNamesADirectoryIsRefusedWithAFileNameToGive(path: String, suggested: String) {
        let expected = "the output name \(path) is a directory, not a file name: give a file name such as \(suggested)"
        guard case .failure(let problem) = OutputName.parse(path) else { Issue.record("\(path) was parsed as a file name"); return }
        #expect(problem.message == expected)
        // The container lookup reads names through the same parser, whatever the export says.
        guard case .failure(let written) = OutputContainer.fileType(forOutput: path, written: .mov) else {
            Issue.record("\(path) was given a container"); return
        }
        #expect(written.message == expected)
        guard case .failure(let exported) = OutputContainer.fileType(forOutput: path, export: ExportOptions()) else {
            Issue.record("\(path) was given a container"); return
        }
        #expect(exported.message == expected)
    }

    @Test func theSuggestionFollowsTheCallersKindOfFile() {
        guard case .failure(let problem) = OutputName.parse("..", example: "thumb.png") else { Issue.record("accepted"); return }
        #expect(problem.message == "the output name .. is a directory, not a file name: give a file name such as ../thumb.png")
        #expect(OutputNameError.directory("renders").message
                == "the output name renders is a directory, not a file name: give a file name such as renders/out.mp4")
    }

    @Test func anEmptyPathIsRefused() {
        guard case .failure(let problem) = OutputName.parse("") else { Issue.record("accepted"); return }
        #expect(problem.message == "the output name is empty: give a file name such as out.mp4")
    }

    /// `out.` has no extension: it is not read as `.out`, and `...` (an empty split) no longer traps.
    @Test func aNameEndingInADotHasNoExtension() {
        let known = ".mp4, .m4v, .mov, .m4a, .wav, .webm, .m3u8, .png"
        guard case .failure(let dotted) = OutputContainer.fileType(forOutput: "renders/out.", written: nil) else { Issue.record("accepted"); return }
        #expect(dotted.message == "the output name out. ends in a dot with no extension after it; Reel writes \(known)")
        guard case .failure(let dots) = OutputContainer.fileType(forOutput: "...", written: nil) else { Issue.record("accepted"); return }
        #expect(dots.message == "the output name ... ends in a dot with no extension after it; Reel writes \(known)")
    }

    /// The codec-mismatch message offers the same stem under the right extension.
    @Test func theCodecMismatchSuggestsTheStemWithTheRightExtension() {
        guard case .failure(let problem) = OutputContainer.fileType(forOutput: "cuts/my.clip.mp4", export: ExportOptions(preset: .prores422)) else {
            Issue.record("ProRes in MP4 was accepted"); return
        }
        #expect(problem.message.contains("(for example my.clip.mov)"), "\(problem.message)")
    }
}
