/// What a subtitle track (`"mediaType": "subtitle"`) says besides its segments: the keys
/// `language` (BCP 47, required), `title` and `default`, as written (the validator checks the
/// language tag). Parsing requires `language`.
public struct SubtitleTrackOptions: Hashable, Sendable, Codable {
    /// A BCP 47 tag such as `en` or `pt-BR`.
    public var language: String
    /// Shown by players in their subtitle menu.
    public var title: String?
    /// Whether players show this track without being asked.
    public var isDefault: Bool

    public init(language: String, title: String? = nil, isDefault: Bool = false) {
        self.language = language; self.title = title; self.isDefault = isDefault
    }
}
