import Foundation
import ReelCore

/// Reads `.cube` LUT assets: from a local file, or through the byte ranges an agent reads a
/// coordinator-held asset with. The parsing rules are `CubeLUT.parse`'s.
public enum CubeLUTFile {
    /// Largest `.cube` file read: a 129³ table written with 8 decimals is about 60 MB.
    public static let maximumBytes: Int64 = 128 << 20

    /// Whether an asset URL names a `.cube` LUT (by its extension, case-insensitively).
    public static func isLUT(_ url: String) -> Bool {
        url.lowercased().hasSuffix(".cube")
    }

    /// Whether a file's first bytes (`head`, a few KiB) look like a `.cube` LUT: text with no
    /// NUL whose keyword lines, before any table row, include `LUT_1D_SIZE` or `LUT_3D_SIZE`.
    /// How an asset stored under its content hash (the farm's storage), which has no name, is
    /// told from media.
    public static func sniff(_ head: [UInt8]) -> Bool {
        guard !head.contains(0) else { return false }
        let lines = String(decoding: head, as: UTF8.self).split(whereSeparator: \.isNewline).dropLast(head.count >= 4096 ? 1 : 0)
        for line in lines {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty || text.hasPrefix("#") { continue }
            if text.hasPrefix("LUT_1D_SIZE") || text.hasPrefix("LUT_3D_SIZE") { return true }
            // A keyword line starts with a capital letter; a table row (or anything else) ends the header.
            guard text.first.map({ $0.isUppercase && $0.isASCII }) == true else { return false }
        }
        return false
    }

    public struct LoadError: Error, CustomStringConvertible {
        public var description: String
    }

    public static func load(_ location: MediaLocation) throws -> CubeLUT {
        let bytes: [UInt8]
        switch location {
        case .file(let path):
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
                throw LoadError(description: "cannot read \(path): \((error as NSError).localizedDescription)")
            }
            guard Int64(data.count) <= maximumBytes else { throw LoadError(description: "the file is larger than \(maximumBytes >> 20) MB") }
            bytes = [UInt8](data)
        case .byteRanges(let source, let name):
            guard source.size <= maximumBytes else { throw LoadError(description: "\(name) is larger than \(maximumBytes >> 20) MB") }
            var buffer = [UInt8](repeating: 0, count: Int(source.size))
            var offset = 0
            while offset < buffer.count {
                let n = try buffer.withUnsafeMutableBytes { raw in
                    try source.read(offset: Int64(offset), count: raw.count - offset, into: raw.baseAddress! + offset)
                }
                guard n > 0 else { throw LoadError(description: "\(name) ended after \(offset) of \(buffer.count) bytes") }
                offset += n
            }
            bytes = buffer
        }
        do {
            return try CubeLUT.parse(bytes)
        } catch {
            throw LoadError(description: error.description)
        }
    }
}
