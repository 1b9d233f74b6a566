import CFFmpeg

/// A file's own tags (container metadata: `comment`, `title`, `encoder`, …).
///
/// Ogg has no file-level tags: its muxer writes the file's tags into the first stream's comment
/// header, and its demuxer gives them back as that stream's. For an Ogg file (no file-level
/// tags, one stream or more) the first stream's tags are read instead.
public enum ContainerTags {
    public static func read(path: String) throws -> [String: String] {
        let input = try InputFile(try MediaSources.local.location(of: path), findStreamInfo: false)
        var tags = dictionary(input.context.pointee.metadata)
        if tags.isEmpty, input.streamCount > 0, String(cString: input.context.pointee.iformat.pointee.name) == "ogg" {
            tags = dictionary(input.stream(0).pointee.metadata)
        }
        return tags
    }

    private static func dictionary(_ metadata: OpaquePointer?) -> [String: String] {
        var tags: [String: String] = [:]
        var entry: UnsafeMutablePointer<AVDictionaryEntry>? = nil
        while let next = av_dict_get(metadata, "", entry, AV_DICT_IGNORE_SUFFIX) {
            tags[String(cString: next.pointee.key)] = String(cString: next.pointee.value)
            entry = next
        }
        return tags
    }
}
