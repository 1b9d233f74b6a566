import Foundation
import ReelCore
import ReelThreadTesting
import Testing
@testable import reel

/// `reel batch`'s manifest files: replaced whole, after each row, unless rows finish faster
/// than the files are written; then a little later, and always before the batch ends.
@Suite(.blocking) struct ManifestFilesTests {
    static func files(spacing: Int) throws -> ManifestFiles {
        let dir = try Media.tempDirectory()
        let entries = (1...3).map { BatchManifest.Entry(row: $0, line: $0 + 1, output: "out/\($0).mp4", status: .pending) }
        return ManifestFiles(directory: dir.path, manifest: BatchManifest(template: "t.json", templateSHA256: String(repeating: "0", count: 64),
                                                                         rows: "rows.csv", output: "out/{{row}}.mp4", entries: entries),
                             writeSpacing: spacing)
    }

    /// The statuses in `manifest.json` on disk now.
    static func onDisk(_ files: ManifestFiles) throws -> [BatchManifest.Status] {
        try BatchManifest.parse(Array(try Data(contentsOf: URL(fileURLWithPath: files.jsonPath)))).get().entries.map(\.status)
    }

    static func done(_ row: Int) -> BatchManifest.Entry {
        BatchManifest.Entry(row: row, line: row + 1, valuesSHA256: String(repeating: "a", count: 64), output: "out/\(row).mp4", status: .done,
                            durationSeconds: 2, bytes: 100, agentSeconds: 1, reusedChunks: 0, chunks: 2, job: Int64(row))
    }

    @Test func eachRowIsWrittenAsItFinishes() async throws {
        let files = try Self.files(spacing: 0)
        try await files.write()
        #expect(try Self.onDisk(files) == [.pending, .pending, .pending])
        try await files.record(Self.done(2), at: 1)
        #expect(try Self.onDisk(files) == [.pending, .done, .pending])
        let csv = try String(contentsOfFile: files.csvPath, encoding: .utf8)
        #expect(csv.split(separator: "\r\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false)[4] } == ["pending", "done", "pending"])
    }

    @Test func rowsFinishingFasterThanTheFilesAreWrittenAreWrittenTogether() async throws {
        // A spacing no test waits out: what is recorded after the first write waits for `finish`.
        let slow = try Self.files(spacing: 1_000_000_000)
        try await slow.write()
        try await slow.record(Self.done(1), at: 0)
        try await slow.record(Self.done(3), at: 2)
        #expect(try Self.onDisk(slow) == [.pending, .pending, .pending])
        try await slow.finish()
        #expect(try Self.onDisk(slow) == [.done, .pending, .done])

        // A short spacing: the timer writes what waits, without another row finishing.
        let quick = try Self.files(spacing: 2)
        try await quick.write()
        try await quick.record(Self.done(1), at: 0)
        try await quick.record(Self.done(2), at: 1)
        let deadline = Date().addingTimeInterval(30)
        while try Self.onDisk(quick) != [.done, .done, .pending], Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(try Self.onDisk(quick) == [.done, .done, .pending])
    }
}
