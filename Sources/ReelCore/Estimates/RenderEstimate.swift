/// One finished job of the farm's history (`RenderEstimator`'s input): its load, the agent
/// time its tasks took, and what that cost (nil: its agents had no price).
public struct RenderSample: Codable, Sendable, Hashable {
    public var load: RenderLoad
    public var agentSeconds: Double
    public var cost: Double?
    public init(load: RenderLoad, agentSeconds: Double, cost: Double? = nil) {
        self.load = load; self.agentSeconds = agentSeconds; self.cost = cost
    }
}

/// A render's predicted frames, agent time, wall time and cost (`reel estimate`).
public struct RenderEstimate: Codable, Sendable, Hashable {
    public var frames: Int
    public var agentSeconds: Double
    /// With `agents` render slots at work at once (no more than it has chunks).
    public var wallSeconds: Double
    public var agents: Int
    /// At the given price an hour per slot, else at the average price of the jobs it learnt
    /// from; nil when neither has one.
    public var cost: Double?
    /// Agent-seconds per unit of work (frame × megapixel × effect load) it applied.
    public var secondsPerWork: Double
    /// The jobs it learnt from, and how closely they match: `encoder and preset`, `encoder`, or `any`.
    public var samples: Int
    public var match: String

    public init(frames: Int, agentSeconds: Double, wallSeconds: Double, agents: Int, cost: Double?, secondsPerWork: Double,
                samples: Int, match: String) {
        self.frames = frames; self.agentSeconds = agentSeconds; self.wallSeconds = wallSeconds; self.agents = agents
        self.cost = cost; self.secondsPerWork = secondsPerWork; self.samples = samples; self.match = match
    }
}

/// Predicts a render from the farm's own history: agent time is proportional to its work
/// (`RenderLoad.work`: frames × megapixels × effect load) at the rate of the finished jobs most
/// like it: those of the same encoder and speed preset, else the same encoder, else any. The
/// rate is their total agent-seconds over their total work (a long job weighs more than a short
/// one), from the `maxSamples` most recent. Pure: the history comes in, the estimate goes out.
public enum RenderEstimator {
    public static let maxSamples = 20

    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// No finished job to learn from.
        case noHistory
        /// The render has nothing to encode.
        case noWork

        public var description: String {
            switch self {
            case .noHistory:
                "the farm has no finished job to learn from (jobs rendered by agents, with no chunk reused): render one like it first, then estimate again"
            case .noWork: "the composition renders no frame of picture: there is nothing to estimate"
            }
        }
    }

    /// - Parameters:
    ///   - history: finished jobs, most recent first.
    ///   - agents: render slots that will work at once (≥ 1).
    ///   - chunks: the render's chunks, when known: no more slots than that work at once.
    ///   - costPerHour: the price an hour of one slot; nil: the history's average price.
    public static func estimate(_ load: RenderLoad, history: [RenderSample], agents: Int, chunks: Int? = nil,
                                costPerHour: Double? = nil) -> Result<RenderEstimate, Failure> {
        guard load.work > 0 else { return .failure(.noWork) }
        let usable = history.filter { $0.load.work > 0 && $0.agentSeconds > 0 }
        let levels: [(String, (RenderSample) -> Bool)] = [
            ("encoder and preset", { $0.load.encoder == load.encoder && $0.load.preset == load.preset }),
            ("encoder", { $0.load.encoder == load.encoder }),
            ("any", { _ in true }),
        ]
        guard let found = levels.lazy.map({ level in (level.0, Array(usable.filter(level.1).prefix(maxSamples))) })
            .first(where: { !$0.1.isEmpty }) else { return .failure(.noHistory) }
        let (match, chosen) = found
        let rate = chosen.reduce(0) { $0 + $1.agentSeconds } / chosen.reduce(0) { $0 + $1.load.work }
        let agentSeconds = rate * load.work
        let slots = max(1, min(agents, chunks ?? agents))
        var price = costPerHour.map { $0 / 3600 }
        if price == nil {
            let priced = chosen.filter { $0.cost != nil }
            let seconds = priced.reduce(0) { $0 + $1.agentSeconds }
            if seconds > 0 { price = priced.reduce(0) { $0 + ($1.cost ?? 0) } / seconds }
        }
        return .success(RenderEstimate(frames: load.frames, agentSeconds: agentSeconds, wallSeconds: agentSeconds / Double(slots),
                                       agents: slots, cost: price.map { $0 * agentSeconds }, secondsPerWork: rate,
                                       samples: chosen.count, match: match))
    }
}
