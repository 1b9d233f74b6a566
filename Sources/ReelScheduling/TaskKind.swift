/// What a task does, and every scheduling trait that follows from it, in one place.
///
/// A job's tasks are its render tasks (video chunks, the audio track), which agents claim in
/// `claimRank` order, and the one task that ends the job (`finalise`), claimable only once every
/// render task is done; its result is the job's output.
///
/// Adding a kind (an agent-run finalise, an HLS rendition, …): add the case and answer each
/// trait below (the compiler finds every `switch`); a numbered migration adds its name to the
/// `tasks.kind` CHECK and its rank to the `tasks_claim_order` index expression, which
/// `TaskKindSchemaTests` compare with `claimRank` and `Statements.claimRank`. The wire carries
/// the raw value (`TASK kind=`, proto/PROTOCOL.md), so a kind agents run is also documented there.
public enum TaskKind: String, Hashable, Sendable, Codable, CaseIterable, Comparable {
    case audio
    case videoChunk = "video_chunk"
    case finalise

    /// Position in the claim order within a job (lower first).
    public var claimRank: Int {
        switch self {
        case .audio: 0
        case .videoChunk: 1
        case .finalise: 2
        }
    }

    /// The task that ends its job: claimable only once every render task of the job is done,
    /// and completing it completes the job (its result is the output). Not counted among the
    /// job's render tasks (progress, reuse by content key, damaged-result re-renders).
    public var completesJob: Bool {
        switch self {
        case .audio, .videoChunk: false
        case .finalise: true
        }
    }

    /// Whether its frames count in a job's progress (`frames_total`, `frames_done`).
    public var countsFrames: Bool {
        switch self {
        case .videoChunk: true
        case .audio, .finalise: false
        }
    }

    /// What an agent must have to take a task of this kind (`AgentEncoders`): for render tasks
    /// the encoder (libavcodec's name), given its job's video encoder (nil for jobs planned
    /// before jobs recorded it: any agent may take them); for a finalise task
    /// `finaliseCapability`, which only agents that said `CAPS … finalise=1` have (the
    /// coordinator's own finaliser claims with no capability list, so it may take any).
    public func encoder(videoEncoder: String?) -> String? {
        switch self {
        case .videoChunk: videoEncoder
        case .audio: "aac"
        case .finalise: Self.finaliseCapability
        }
    }

    /// The pseudo-encoder an agent that runs finalise tasks has in its capability set (never a
    /// libavcodec name).
    public static let finaliseCapability = "reel:finalise"

    /// "chunk 3", "audio", "finalise": how messages name a task.
    public func label(ordinal: Int) -> String {
        switch self {
        case .videoChunk: "chunk \(ordinal)"
        case .audio: "audio"
        case .finalise: "finalise"
        }
    }

    /// The kinds every render agent claims (`CLAIM`). Finalise tasks go to agents that can run
    /// them only when the coordinator stores in an object store; else its finaliser runs them.
    public static var renderKinds: Set<TaskKind> { Set(allCases.filter { !$0.completesJob }) }

    public static func < (l: TaskKind, r: TaskKind) -> Bool { l.claimRank < r.claimRank }
}
