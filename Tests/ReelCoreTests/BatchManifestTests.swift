import Testing
@testable import ReelCore
import ReelThreadTesting

/// `manifest.json` / `manifest.csv`, and which rows a batch run again need not render.
@Suite("Batch manifest and resuming", .blocking)
struct BatchManifestTests {
    static let hashA = String(repeating: "a", count: 64), hashB = String(repeating: "b", count: 64)

    static let manifest = BatchManifest(template: "card.json", templateSHA256: String(repeating: "0", count: 64), rows: "rows.csv",
                                        output: "out/{{id}}.mp4", entries: [
        .init(row: 1, line: 2, valuesSHA256: hashA, output: "out/a.mp4", status: .done, durationSeconds: 2, bytes: 12_345,
              agentSeconds: 1.25, reusedChunks: 1, chunks: 3, job: 7),
        .init(row: 2, line: 3, valuesSHA256: hashB, output: "out/b, \"quoted\".mp4", status: .failed, job: 8,
              error: "assets.photo.url: no such file (/data/missing.jpg) (from {{photo}}); and, \"more\"\non a line"),
        .init(row: 3, line: 5, output: "out/c.mp4", status: .invalid, error: "column ink: must be a colour"),
        .init(row: 4, line: 6, valuesSHA256: hashA, output: "out/d.mp4", status: .pending),
    ])

    @Test func theJSONReadsBackTheSame() throws {
        let text = Self.manifest.json
        #expect(try BatchManifest.parse(Array(text.utf8)).get() == Self.manifest)
        // One entry a line, and each line of the document JSON on its own.
        let lines = text.split(separator: "\n")
        #expect(lines.count == 13, "\(text)")
        #expect(lines.contains { $0.hasPrefix(#"    {"row": 1, "line": 2, "valuesSHA256": "aaaa"#) && $0.contains(#""status": "done", "durationSeconds": 2, "bytes": 12345, "agentSeconds": 1.25, "reusedChunks": 1"#) })
        #expect(lines.contains { $0.contains(#"{"row": 3, "line": 5, "valuesSHA256": null, "output": "out/c.mp4", "status": "invalid""#) })
    }

    @Test func theCSVHasTheSameTable() throws {
        let records = try CSV.records(Self.manifest.csv).get()
        #expect(records.first?.fields == BatchManifest.csvColumns)
        #expect(records.count == 5)
        #expect(records[1].fields == ["1", "2", Self.hashA, "out/a.mp4", "done", "2", "12345", "1.25", "1", "3", "7", ""])
        #expect(records[2].fields[3] == "out/b, \"quoted\".mp4" && records[2].fields[4] == "failed")
        #expect(records[2].fields[11] == Self.manifest.entries[1].error)
        #expect(records[4].fields == ["4", "6", Self.hashA, "out/d.mp4", "pending", "", "", "", "", "", "", ""])
        #expect(Self.manifest.csv.hasSuffix("\r\n"))
    }

    @Test(arguments: [(2.0, "2"), (0.125, "0.125"), (1.0 / 3, "0.333333"), (12.3456789, "12.345679"), (0, "0"), (-1.5, "-1.5"), (0.0000001, "0")])
    func secondsAreDecimalsWithoutExponents(_ value: Double, _ text: String) {
        #expect(BatchManifest.decimal(value, places: 6) == text)
    }

    @Test func whatIsNotAManifestIsRefused() {
        #expect(throws: BatchManifest.ReadError.self) { try BatchManifest.parse(Array("not json".utf8)).get() }
        #expect(throws: BatchManifest.ReadError.self) { try BatchManifest.parse(Array(#"{"formatVersion": 2}"#.utf8)).get() }
        #expect(throws: BatchManifest.ReadError.self) {
            try BatchManifest.parse(Array(Self.manifest.json.replacing(#""status": "done""#, with: #""status": "finished""#).utf8)).get()
        }
    }

    // MARK: - Resuming

    static func resume(_ previous: BatchManifest? = manifest, template: String = String(repeating: "0", count: 64)) -> BatchResume {
        BatchResume(previous: previous, templateSHA256: template)
    }

    @Test func aDoneRowWithTheSameValuesAndItsFileInPlaceIsNotRenderedAgain() throws {
        let kept = try #require(Self.resume().finished(row: 9, line: 12, output: "out/a.mp4", valuesSHA256: Self.hashA) { $0 == "out/a.mp4" ? 12_345 : nil })
        #expect(kept.status == .done && kept.job == 7 && kept.bytes == 12_345 && kept.agentSeconds == 1.25)
        #expect(kept.row == 9 && kept.line == 12, "renumbered as the row is now")
    }

    @Test func everyOtherRowRendersAgain() {
        let resume = Self.resume()
        // Its values changed.
        #expect(resume.finished(row: 1, line: 2, output: "out/a.mp4", valuesSHA256: Self.hashB) { _ in 12_345 } == nil)
        // Its output was deleted, or is not the file written.
        #expect(resume.finished(row: 1, line: 2, output: "out/a.mp4", valuesSHA256: Self.hashA) { _ in nil } == nil)
        #expect(resume.finished(row: 1, line: 2, output: "out/a.mp4", valuesSHA256: Self.hashA) { _ in 100 } == nil)
        // It failed, or never finished.
        #expect(resume.finished(row: 2, line: 3, output: "out/b, \"quoted\".mp4", valuesSHA256: Self.hashB) { _ in 0 } == nil)
        #expect(resume.finished(row: 4, line: 6, output: "out/d.mp4", valuesSHA256: Self.hashA) { _ in 0 } == nil)
        // It is a new row.
        #expect(resume.finished(row: 5, line: 7, output: "out/e.mp4", valuesSHA256: Self.hashA) { _ in 12_345 } == nil)
        // There is no manifest, or one of another template.
        #expect(Self.resume(nil).finished(row: 1, line: 2, output: "out/a.mp4", valuesSHA256: Self.hashA) { _ in 12_345 } == nil)
        let changed = Self.resume(template: String(repeating: "1", count: 64))
        #expect(changed.templateChanged && !Self.resume().templateChanged && !Self.resume(nil).templateChanged)
        #expect(changed.finished(row: 1, line: 2, output: "out/a.mp4", valuesSHA256: Self.hashA) { _ in 12_345 } == nil)
    }
}
