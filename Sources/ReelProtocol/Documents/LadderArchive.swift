import Foundation

/// The archive that carries several files as one result or one output (proto/PROTOCOL.md §4.6,
/// "HLS ladders"): a POSIX ustar archive (IEEE 1003.1 `pax`'s `ustar` format, which `tar -x`
/// reads), written deterministically — members in the order given, mode 0644, uid and gid 0, no
/// user or group names, modification time 0, regular files only, ending with two zero blocks.
/// The same files in the same order therefore always make the same bytes, so a ladder chunk's
/// result is stored and reused by content like any other.
///
/// - A ladder video chunk's result holds one member per rendition, `<name>.mp4` (a fragmented
///   MP4), in the ladder's order.
/// - An HLS job's output (`OUTPUT`) holds the output folder: `master.m3u8`, `manifest.mpd` and
///   one folder per rendition (`<name>/init.mp4`, `<name>/seg-00001.m4s`, …, `<name>/index.m3u8`).
///
/// Files are streamed from and to disk, so archives of any size cost a block of memory.
public enum LadderArchive {
    /// One file of an archive: its name (relative, `/`-separated) and where its bytes are.
    public struct Member: Hashable, Sendable {
        public var name: String
        /// Byte offset of the file's data in the archive.
        public var offset: Int64
        public var size: Int64
        public init(name: String, offset: Int64, size: Int64) { self.name = name; self.offset = offset; self.size = size }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    static let block = 512

    /// The master playlist's name in an HLS job's output archive; a client writes it under the
    /// name it was asked for (`-o DIR/NAME.m3u8`).
    public static let masterPlaylistName = "master.m3u8"

    /// The 512-byte ustar header of a regular file. Names up to 100 bytes go in `name`; longer
    /// ones (up to 255) are split at a `/` into `prefix` and `name`.
    public static func header(name: String, size: Int64) throws -> [UInt8] {
        let bytes = Array(name.utf8)
        guard isSafe(name) else { throw Failure("archive member name \"\(name)\" is not a relative path of plain names") }
        var prefix: [UInt8] = [], short = bytes
        if bytes.count > 100 {
            guard let slash = bytes.indices.reversed().first(where: { bytes[$0] == UInt8(ascii: "/") && $0 <= 155 && bytes.count - $0 - 1 <= 100 }) else {
                throw Failure("archive member name \"\(name)\" is too long for ustar (at most 100 bytes after a folder of at most 155)")
            }
            prefix = Array(bytes[..<slash]); short = Array(bytes[(slash + 1)...])
        }
        var header = [UInt8](repeating: 0, count: block)
        func put(_ field: [UInt8], at offset: Int) { for (i, b) in field.enumerated() { header[offset + i] = b } }
        func octal(_ value: Int64, width: Int) -> [UInt8] {
            let digits = String(value, radix: 8)
            return Array((String(repeating: "0", count: max(0, width - 1 - digits.count)) + digits).utf8) + [0]
        }
        guard size >= 0, size < 0o77777777777 else { throw Failure("archive member \(name) of \(size) bytes is too large for ustar") }
        put(short, at: 0)
        put(octal(0o644, width: 8), at: 100)        // mode
        put(octal(0, width: 8), at: 108)            // uid
        put(octal(0, width: 8), at: 116)            // gid
        put(octal(size, width: 12), at: 124)        // size
        put(octal(0, width: 12), at: 136)           // mtime
        put(Array("        ".utf8), at: 148)        // checksum, counted as spaces
        header[156] = UInt8(ascii: "0")             // regular file
        put(Array("ustar".utf8) + [0], at: 257)     // magic
        put(Array("00".utf8), at: 263)              // version
        put(prefix, at: 345)
        let sum = header.reduce(0) { $0 + Int64($1) }
        put(octal(sum, width: 7) + [UInt8(ascii: " ")], at: 148)
        return header
    }

    /// Zero bytes that pad `size` bytes of data to a whole block.
    static func padding(_ size: Int64) -> Int { Int((Int64(block) - size % Int64(block)) % Int64(block)) }

    /// A name is safe when it is relative and made of plain names (no `.`, `..` or empty parts).
    public static func isSafe(_ name: String) -> Bool {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        return !parts.isEmpty && parts.allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." && !$0.contains("\0") }
    }

    /// Writes an archive of `files` (member name, path of its bytes on disk), in order, to `path`.
    public static func write(_ files: [(name: String, path: String)], to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw Failure("cannot create \(path)") }
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? out.close() }
        for file in files {
            let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: file.path))
            defer { try? input.close() }
            let size = Int64(try input.seekToEnd())
            try input.seek(toOffset: 0)
            try out.write(contentsOf: try header(name: file.name, size: size))
            var copied: Int64 = 0
            while copied < size {
                guard let data = try input.read(upToCount: 1 << 20), !data.isEmpty else {
                    throw Failure("\(file.path) ended after \(copied) of \(size) bytes while it was archived")
                }
                try out.write(contentsOf: data)
                copied += Int64(data.count)
            }
            try out.write(contentsOf: [UInt8](repeating: 0, count: padding(size)))
        }
        try out.write(contentsOf: [UInt8](repeating: 0, count: 2 * block))
        try out.synchronize()
    }

    /// Whether the file at `path` starts with a ustar header (a ladder chunk's result, not an
    /// MP4): its first block carries the `ustar` magic. No member is read or checked.
    public static func isArchive(_ path: String) -> Bool {
        guard let input = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? input.close() }
        guard let data = try? input.read(upToCount: block), data.count == block else { return false }
        return data[257..<262].elementsEqual("ustar".utf8)
    }

    /// The members of the archive at `path`, checking every header's checksum, magic and type
    /// and that the data lies within the file.
    public static func members(of path: String) throws -> [Member] {
        let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? input.close() }
        let length = Int64(try input.seekToEnd())
        var offset: Int64 = 0
        var members: [Member] = []
        while true {
            try input.seek(toOffset: UInt64(offset))
            guard let data = try input.read(upToCount: block), data.count == block else {
                throw Failure("\(path): the archive ends at byte \(offset) without its end blocks")
            }
            let header = [UInt8](data)
            if header.allSatisfy({ $0 == 0 }) { return members }
            let member = try parse(header, at: offset, in: path)
            guard member.offset + member.size <= length else {
                throw Failure("\(path): member \(member.name) claims \(member.size) bytes but the archive ends first")
            }
            members.append(member)
            offset = member.offset + member.size + Int64(padding(member.size))
        }
    }

    static func parse(_ header: [UInt8], at offset: Int64, in path: String) throws -> Member {
        func text(_ range: Range<Int>) -> String {
            String(decoding: header[range].prefix { $0 != 0 }, as: UTF8.self)
        }
        func octal(_ range: Range<Int>) throws -> Int64 {
            let digits = text(range).trimmingCharacters(in: .whitespaces)
            guard let value = Int64(digits, radix: 8) else { throw Failure("\(path): header at byte \(offset) has a bad number \"\(digits)\"") }
            return value
        }
        guard text(257..<263) == "ustar" else { throw Failure("\(path): the header at byte \(offset) is not a ustar header") }
        var sum: Int64 = 0
        for (i, b) in header.enumerated() { sum += (148..<156).contains(i) ? 32 : Int64(b) }
        guard try octal(148..<156) == sum else { throw Failure("\(path): the header at byte \(offset) fails its checksum") }
        guard header[156] == UInt8(ascii: "0") || header[156] == 0 else {
            throw Failure("\(path): member at byte \(offset) is not a regular file (type \(Character(UnicodeScalar(header[156]))))")
        }
        let prefix = text(345..<500), name = prefix.isEmpty ? text(0..<100) : prefix + "/" + text(0..<100)
        guard isSafe(name) else { throw Failure("\(path): member name \"\(name)\" is not a relative path of plain names") }
        return Member(name: name, offset: offset + Int64(block), size: try octal(124..<136))
    }

    /// Copies `member`'s bytes out of the archive at `archive` into a new file at `path`.
    public static func extract(_ member: Member, from archive: String, to path: String) throws {
        let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: archive))
        defer { try? input.close() }
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw Failure("cannot create \(path)") }
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? out.close() }
        try input.seek(toOffset: UInt64(member.offset))
        var left = member.size
        while left > 0 {
            guard let data = try input.read(upToCount: Int(min(left, 1 << 20))), !data.isEmpty else {
                throw Failure("\(archive): member \(member.name) is cut short")
            }
            try out.write(contentsOf: data)
            left -= Int64(data.count)
        }
    }

    /// Extracts every member under `directory` (folders made as needed). Names were checked
    /// safe when read, so nothing lands outside `directory`.
    public static func extractAll(from archive: String, into directory: String) throws -> [Member] {
        let members = try members(of: archive)
        let root = URL(fileURLWithPath: directory)
        for member in members {
            let destination = root.appendingPathComponent(member.name)
            try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
            try extract(member, from: archive, to: destination.path)
        }
        return members
    }

    /// Puts an HLS output archive in place as a folder, whole or not at all as far as a player
    /// can tell: unpacked into a hidden folder beside `masterPath`, then each rendition's folder
    /// and `manifest.mpd` moved into place (replacing what had those names), and the master
    /// playlist last, as `masterPath`'s file name. A failure before the last step leaves no
    /// master playlist from this archive.
    public static func installFolder(archive: String, masterPath: String) throws {
        let master = URL(fileURLWithPath: masterPath)
        let folder = master.deletingLastPathComponent()
        let work = folder.appendingPathComponent(".\(master.lastPathComponent).reel-partial-\(getpid())")
        try? FileManager.default.removeItem(at: work)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let members = try extractAll(from: archive, into: work.path)
        guard members.contains(where: { $0.name == masterPlaylistName }) else {
            throw Failure("\(archive) holds no \(masterPlaylistName): it is not an HLS output")
        }
        let top = Set(members.map { String($0.name.split(separator: "/")[0]) }).subtracting([masterPlaylistName]).sorted()
        for name in top + [masterPlaylistName] {
            let destination = name == masterPlaylistName ? master : folder.appendingPathComponent(name)
            try? FileManager.default.removeItem(at: destination)
            try FileManager.default.moveItem(at: work.appendingPathComponent(name), to: destination)
        }
    }

    /// Every regular file under `directory`, as (relative name, path), folders first visited in
    /// name order, so the same folder always makes the same archive.
    public static func files(under directory: String) throws -> [(name: String, path: String)] {
        var found: [(name: String, path: String)] = []
        func walk(_ relative: String) throws {
            let here = relative.isEmpty ? directory : directory + "/" + relative
            for entry in try FileManager.default.contentsOfDirectory(atPath: here).sorted() {
                let name = relative.isEmpty ? entry : relative + "/" + entry
                var isDirectory: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: directory + "/" + name, isDirectory: &isDirectory)
                if isDirectory.boolValue { try walk(name) } else { found.append((name, directory + "/" + name)) }
            }
        }
        try walk("")
        return found
    }
}
