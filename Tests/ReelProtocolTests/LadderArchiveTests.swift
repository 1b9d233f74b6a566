import Foundation
import Testing
import ReelThreadTesting
@testable import ReelProtocol

/// The ladder archive of proto/PROTOCOL.md §4.6, checked against GNU tar (an independent
/// ustar reader and writer): tar lists and extracts what Reel writes, Reel reads what tar
/// writes in ustar format, and the same files always make the same bytes.
@Suite("Ladder archive", .blocking)
struct LadderArchiveTests {
    static func scratch() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("reel-archive-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Runs a program, returning its standard output; a non-zero exit fails the test.
    @discardableResult
    static func run(_ arguments: [String], in directory: URL) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        return String(decoding: data, as: UTF8.self)
    }

    /// Files of sizes around the 512-byte block, including an empty one, with distinct bytes.
    static func files(in dir: URL) throws -> [(name: String, path: String, bytes: [UInt8])] {
        let sizes: [(String, Int)] = [("1920x1080.mp4", 1537), ("640x360.mp4", 512), ("empty.mp4", 0), ("a/seg-00001.m4s", 511)]
        return try sizes.enumerated().map { index, entry in
            let bytes = (0..<entry.1).map { UInt8(truncatingIfNeeded: $0 * 7 + index * 31) }
            let url = dir.appendingPathComponent("src").appendingPathComponent(entry.0)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
            return (entry.0, url.path, bytes)
        }
    }

    @Test("tar lists and extracts Reel's archive, members in order, with every byte")
    func tarReadsReel() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let files = try Self.files(in: dir)
        let archive = dir.appendingPathComponent("chunk.tar").path
        try LadderArchive.write(files.map { ($0.name, $0.path) }, to: archive)
        let size = try FileManager.default.attributesOfItem(atPath: archive)[.size] as! Int
        #expect(size % 512 == 0)
        let listed = try Self.run(["tar", "-tf", archive], in: dir).split(separator: "\n").map(String.init)
        #expect(listed == files.map(\.name))
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try Self.run(["tar", "-xf", archive, "-C", out.path], in: dir)
        for file in files {
            #expect([UInt8](try Data(contentsOf: out.appendingPathComponent(file.name))) == file.bytes, "\(file.name)")
        }
        // Reel's own reader agrees on names, sizes and bytes.
        let members = try LadderArchive.members(of: archive)
        #expect(members.map(\.name) == files.map(\.name))
        #expect(members.map(\.size) == files.map { Int64($0.bytes.count) })
        for (member, file) in zip(members, files) {
            let copy = dir.appendingPathComponent("copy").path
            try LadderArchive.extract(member, from: archive, to: copy)
            #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: copy))) == file.bytes)
        }
    }

    @Test("the same files make the same bytes (results are stored and reused by content)")
    func deterministic() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let files = try Self.files(in: dir)
        let first = dir.appendingPathComponent("1.tar").path, second = dir.appendingPathComponent("2.tar").path
        try LadderArchive.write(files.map { ($0.name, $0.path) }, to: first)
        // A later modification time and another order on disk change nothing.
        for file in files { utimes(file.path, nil) }
        try LadderArchive.write(files.map { ($0.name, $0.path) }, to: second)
        #expect(try Data(contentsOf: URL(fileURLWithPath: first)) == Data(contentsOf: URL(fileURLWithPath: second)))
    }

    @Test("Reel reads a ustar archive GNU tar wrote, and installs an HLS folder from one")
    func reelReadsTar() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("folder")
        try FileManager.default.createDirectory(at: source.appendingPathComponent("640x360"), withIntermediateDirectories: true)
        try Data("#EXTM3U\nmaster\n".utf8).write(to: source.appendingPathComponent("master.m3u8"))
        try Data("<MPD/>".utf8).write(to: source.appendingPathComponent("manifest.mpd"))
        try Data(repeating: 7, count: 1000).write(to: source.appendingPathComponent("640x360/seg-00001.m4s"))
        let archive = dir.appendingPathComponent("output.tar").path
        // Files only, as Reel writes: tar's own folder entries are a type Reel refuses.
        try Self.run(["tar", "--format=ustar", "--no-recursion", "-cf", archive, "-C", source.path,
                      "640x360/seg-00001.m4s", "manifest.mpd", "master.m3u8"], in: dir)
        #expect(try LadderArchive.members(of: archive).map(\.name) == ["640x360/seg-00001.m4s", "manifest.mpd", "master.m3u8"])
        let target = dir.appendingPathComponent("delivery")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        try LadderArchive.installFolder(archive: archive, masterPath: target.appendingPathComponent("stream.m3u8").path)
        #expect(try String(contentsOf: target.appendingPathComponent("stream.m3u8"), encoding: .utf8) == "#EXTM3U\nmaster\n")
        #expect(try Data(contentsOf: target.appendingPathComponent("640x360/seg-00001.m4s")) == Data(repeating: 7, count: 1000))
        #expect(try FileManager.default.contentsOfDirectory(atPath: target.path).sorted() == ["640x360", "manifest.mpd", "stream.m3u8"])
    }

    @Test("a damaged header, a cut archive and unsafe names are refused with what is wrong")
    func refusals() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let files = try Self.files(in: dir)
        let archive = dir.appendingPathComponent("chunk.tar").path
        try LadderArchive.write(files.map { ($0.name, $0.path) }, to: archive)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: archive)))
        bytes[0] ^= 1   // the first member's name, under its checksum
        let damaged = dir.appendingPathComponent("damaged.tar").path
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        #expect { try LadderArchive.members(of: damaged) } throws: { "\($0)".contains("checksum") }
        bytes[0] ^= 1
        let cut = dir.appendingPathComponent("cut.tar").path
        try Data(bytes.prefix(512 + 100)).write(to: URL(fileURLWithPath: cut))
        #expect { try LadderArchive.members(of: cut) } throws: { "\($0)".contains("archive ends first") }
        for name in ["../x.mp4", "/etc/passwd", "a//b", "./a"] {
            #expect(!LadderArchive.isSafe(name))
            #expect(throws: LadderArchive.Failure.self) { try LadderArchive.header(name: name, size: 1) }
        }
    }
}
