import Foundation
import Testing
@testable import ReelCore
import ReelThreadTesting

/// docs/interchange.md's dissolve example is what the importer writes for the timeline it describes.
@Suite(.blocking) struct InterchangeDocumentationTests {
    @Test func theDissolveExampleIsTheImportersOutput() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/interchange.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let marker = "then B (frames 24–72) becomes:\n\n```json\n"
        let start = try #require(text.range(of: marker)).upperBound
        let end = try #require(text.range(of: "\n```", range: start..<text.endIndex)).lowerBound
        let documented = try JSONParser.parse(String(text[start..<end]))
        let otio = OTIO.timeline([OTIO.track("V1", [
            OTIO.clip("A", "a.mp4", start: 0, duration: 48), OTIO.dissolve(in: 6, out: 6), OTIO.clip("B", "b.mp4", start: 24, duration: 48),
        ])])
        let lookup = MediaLookup(timelineDirectory: "/cut", exists: { ["/cut/a.mp4", "/cut/b.mp4"].contains($0) })
        let imported = try TimelineImport.read(Array(otio.utf8), format: .otio, options: .init(lookup: lookup)).get()
        #expect(imported.composition == documented)
    }
}
