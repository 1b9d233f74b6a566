import Foundation
import ReelCore

/// Recognises and reads subtitle assets (SubRip, WebVTT) for validation: by the name's
/// extension, or by content for files stored without their name (the farm stores sources
/// under their content hash). Parsing is the pure core's (`SubtitleParser`).
enum SubtitleProbe {
    /// Larger files are refused: a feature film's subtitles are a few hundred kilobytes.
    static let maximumBytes = 16 << 20

    /// The resolution of `url` if it is a subtitle file, nil if it is not one (media files are
    /// probed by libav). `url` is a local regular file, or an http(s) URL.
    static func resolve(_ url: String, isRemote: Bool) -> AssetResolution? {
        let named = SubtitleParser.format(forFileName: URL(fileURLWithPath: url).lastPathComponent)
        if isRemote {
            return named.map { _ in .unavailable(reason: "subtitle files must be local files; download it and give its path (\(url))") }
        }
        guard let handle = FileHandle(forReadingAtPath: url) else { return nil }
        defer { try? handle.close() }
        let format: SubtitleDocument.Format
        if let named {
            format = named
        } else {
            guard let head = try? handle.read(upToCount: 4096), let sniffed = SubtitleParser.sniff([UInt8](head)) else { return nil }
            format = sniffed
            try? handle.seek(toOffset: 0)
        }
        guard let data = try? handle.read(upToCount: maximumBytes + 1) else {
            return .unavailable(reason: "file is not readable (\(url))")
        }
        guard data.count <= maximumBytes else {
            return .unavailable(reason: "subtitle file is larger than \(maximumBytes >> 20) MiB (\(url))")
        }
        return parse([UInt8](data), format: format, url: url)
    }

    /// The resolution of `url` read through byte ranges (a source in an object store, whose
    /// stored name is its hash): recognised by name or by its first 4 KiB, then read whole
    /// (subtitle files are small), nil if it is not a subtitle file.
    static func resolve(_ url: String, source: any ByteRangeSource) -> AssetResolution? {
        let head: [UInt8]
        do { head = try readAll(source, upTo: 4096) } catch { return nil }
        guard let format = SubtitleParser.format(forFileName: URL(fileURLWithPath: url).lastPathComponent) ?? SubtitleParser.sniff(head) else {
            return nil
        }
        guard source.size <= Int64(maximumBytes) else {
            return .unavailable(reason: "subtitle file is larger than \(maximumBytes >> 20) MiB (\(url))")
        }
        do {
            return parse(try readAll(source, upTo: Int(source.size)), format: format, url: url)
        } catch {
            return .unavailable(reason: "file is not readable (\(url): \(error))")
        }
    }

    /// The first `limit` bytes of `source` (all of it when shorter).
    static func readAll(_ source: any ByteRangeSource, upTo limit: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Int(min(Int64(limit), source.size)))
        var offset = 0
        while offset < bytes.count {
            let n = try bytes.withUnsafeMutableBytes { raw in
                try source.read(offset: Int64(offset), count: raw.count - offset, into: raw.baseAddress! + offset)
            }
            guard n > 0 else { break }
            offset += n
        }
        return Array(bytes.prefix(offset))
    }

    private static func parse(_ data: [UInt8], format: SubtitleDocument.Format, url: String) -> AssetResolution {
        let name = URL(fileURLWithPath: url).lastPathComponent
        switch SubtitleParser.parse(data, format: format) {
        case .success(let document):
            return .described(url: url, AssetDescription(kind: .subtitle, duration: nil, video: nil, audio: nil, subtitles: document))
        case .failure(let error):
            return .malformed(reasons: error.problems.map { "\(name) \($0)" })
        }
    }
}
