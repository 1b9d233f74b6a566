import CFFmpeg

/// A file's own tags (container metadata: `comment`, `title`, `encoder`, …).
public enum ContainerTags {
    public static func read(path: String) throws -> [String: String] {
        let input = try InputFile(try MediaSources.local.location(of: path), findStreamInfo: false)
        var tags: [String: String] = [:]
        var entry: UnsafeMutablePointer<AVDictionaryEntry>? = nil
        while let next = av_dict_get(input.context.pointee.metadata, "", entry, AV_DICT_IGNORE_SUFFIX) {
            tags[String(cString: next.pointee.key)] = String(cString: next.pointee.value)
            entry = next
        }
        return tags
    }
}
