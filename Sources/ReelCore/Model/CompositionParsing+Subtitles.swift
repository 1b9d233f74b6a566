/// The subtitle parts of the schema (docs/composition.md, "Subtitle tracks").
extension CompositionDecoding {
    var subtitleTrackKeys: [String] { ["language", "title", "default"] }

    /// A subtitle track's `language` (required), `title` and `default`; these keys on any other
    /// track are errors.
    func subtitleTrackOptions(_ o: JSONObject, mediaType: MediaType?, at path: String) -> SubtitleTrackOptions? {
        let r = reader
        guard mediaType == .subtitle else {
            if mediaType != nil {
                for key in subtitleTrackKeys where o.contains(key: key) {
                    r.report(JSONFieldReader.child(path, key), "only for subtitle tracks (\"mediaType\": \"subtitle\")")
                }
            }
            return nil
        }
        let language = r.required(o, "language", at: path, r.string)
        let title = r.optional(o, "title", at: path, r.string)
        let isDefault = r.optional(o, "default", at: path, r.bool)
        guard let language else { return nil }
        return SubtitleTrackOptions(language: language, title: title, isDefault: isDefault ?? false)
    }
}

/// `videoComposition.captions` (docs/composition.md, "Captions").
extension CompositionDecoding {
    func caption(_ value: JSONValue, at path: String) -> Caption? {
        let r = reader
        guard let o = r.object(value, at: path, keys: ["asset", "style", "highlight"]) else { return nil }
        let asset = r.required(o, "asset", at: path, r.string)
        let style = r.optional(o, "style", at: path, captionStyle)
        let highlight = r.optional(o, "highlight", at: path, r.color)
        guard let asset else { return nil }
        return Caption(asset: asset, style: style ?? CaptionStyle(), highlight: highlight)
    }

    func captionStyle(_ value: JSONValue, at path: String) -> CaptionStyle? {
        let r = reader
        let keys = ["font", "fontSize", "color", "backgroundColor", "outlineColor", "outlineWidth", "position", "margin", "maxWidth"]
        guard let o = r.object(value, at: path, keys: keys) else { return nil }
        return CaptionStyle(font: r.optional(o, "font", at: path, r.string),
                            fontSize: r.optional(o, "fontSize", at: path, r.double),
                            color: r.optional(o, "color", at: path, r.color),
                            backgroundColor: r.optional(o, "backgroundColor", at: path, r.color),
                            outlineColor: r.optional(o, "outlineColor", at: path, r.color),
                            outlineWidth: r.optional(o, "outlineWidth", at: path, r.double),
                            position: r.optional(o, "position", at: path) { r.choice($0, at: $1, CaptionPosition.self) },
                            margin: r.optional(o, "margin", at: path, r.double),
                            maxWidth: r.optional(o, "maxWidth", at: path, r.double))
    }
}
