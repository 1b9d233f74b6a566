/// One audio stream of the output (`export.audioOutputs[i]`): its own mix of `tracks`, with
/// their `audioMix` parameters and the limiter, tagged with `language` and `title`. The first
/// output is the default stream.
public struct AudioOutput: Codable, Sendable, Hashable {
    public var language: LanguageTag
    public var title: String?
    /// Audio track ids, as written (validated: audio tracks, at least one, none twice).
    public var tracks: [Int]

    public init(language: LanguageTag, title: String? = nil, tracks: [Int]) {
        self.language = language; self.title = title; self.tracks = tracks
    }

    /// How figures name this output: its language tag and title, `en "English"`.
    public var label: String { language.tag + (title.map { " \"\($0)\"" } ?? "") }
}

extension RenderPlan {
    /// The plan of each audio stream's mix, in stream order: this plan itself when
    /// `export.audioOutputs` is absent (one mix of every audio track), else one plan per output
    /// whose audio tracks are the output's (in composition order) and which has no outputs of
    /// its own. A ducked track dips only under the tracks of its own output: a voice that is not
    /// in the mix does not duck the music under it.
    public var audioMixPlans: [RenderPlan] {
        guard let outputs = export.audioOutputs else { return [self] }
        return outputs.map { output in
            let members = Set(output.tracks)
            var plan = self
            plan.export.audioOutputs = nil
            plan.audioTracks = audioTracks.filter { members.contains($0.id) }.map { track in
                var track = track
                if var duck = track.duck {
                    duck.under = duck.under.filter(members.contains)
                    track.duck = duck.under.isEmpty ? nil : duck
                }
                return track
            }
            return plan
        }
    }

    /// How many audio streams the output has: 0 without audio tracks, else one per
    /// `export.audioOutputs` entry (one when it is absent).
    public var audioStreamCount: Int {
        audioTracks.isEmpty ? 0 : export.audioOutputs?.count ?? 1
    }
}
