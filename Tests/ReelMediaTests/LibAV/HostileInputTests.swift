import Foundation
import Glibc
import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelMedia

/// Files that would hang or trap whoever opens them. `reel validate` must answer for
/// a FIFO (reading one never ends) and must not wait forever on a file that does not open.
@Suite(.blocking) struct HostileInputTests {
    @Test func aFIFOIsRefusedWithoutBeingOpened() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("clip.mp4").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // Nothing ever writes to the FIFO: opening it for reading would block this test forever.
        guard case .unavailable(let reason) = CompositionLoader.probe(fifo) else {
            Issue.record("a FIFO was probed as media"); return
        }
        #expect(reason.hasPrefix("is not a regular file (a FIFO, device or socket)"))
        #expect(throws: MediaError.self) { try MediaProbe.describe(path: fifo) }
        #expect(throws: MediaError.self) { try MediaProbe.describe(path: "/dev/zero") }
    }

    /// The deadline is wired into libav's interrupt callback: with no time at all, even a
    /// good file is given up on (and says so) instead of being read.
    @Test func openingGivesUpAtItsDeadline() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Fixtures.numberedClip(in: dir, rate: "25", frames: 5)
        do {
            _ = try InputFile(path: path, openTimeout: .zero)
            Issue.record("a file opened after its deadline")
        } catch let error as MediaError {
            #expect("\(error)".contains("did not open in time"), "\(error)")
        }
        #expect(try InputFile(path: path).streamCount == 1, "with the normal deadline it opens")
    }

    /// A file named .png that is not an image is refused at validation with a plain reason.
    @Test func anOverlayImageThatIsNotAnImageIsRefusedLocally() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fake = dir.appendingPathComponent("logo.png")
        try Data("this is not a picture\n".utf8).write(to: fake)
        let resolution = CompositionLoader.probe(fake.path)
        var problem: String?
        switch resolution {
        case .unavailable(let reason): problem = reason
        case .described(_, let description): problem = description.usabilityProblem
        case .malformed(let reasons): problem = reasons.first
        }
        #expect(problem?.contains("not an image Reel can decode") == true || problem?.hasPrefix("not a media file") == true, "\(String(describing: problem))")
    }
}
