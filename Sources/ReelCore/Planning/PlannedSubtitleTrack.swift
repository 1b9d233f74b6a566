/// A subtitle track ready to be written: its cues on the composition timeline, and how the
/// container labels it. The finaliser writes it whole (subtitles are never cut into chunks),
/// so a cue that spans a chunk boundary comes out once, with its exact times.
///
/// Invariants: cues are sorted by start, lie inside `[0, duration)` of the plan, and
/// `start < end` for each.
public struct PlannedSubtitleTrack: Codable, Sendable, Hashable {
    public var id: Int
    public var language: LanguageTag
    public var title: String?
    public var isDefault: Bool
    public var cues: [SubtitleCue]

    public init(id: Int, language: LanguageTag, title: String?, isDefault: Bool, cues: [SubtitleCue]) {
        self.id = id; self.language = language; self.title = title; self.isDefault = isDefault; self.cues = cues
    }
}
