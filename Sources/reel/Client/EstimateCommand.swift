import ArgumentParser
import Foundation
import ReelCore
import ReelProtocol

/// `reel estimate COMP.json [--agents N]`: a render's frames, agent time, wall time and cost,
/// predicted before anything renders from the farm's own history (`RenderEstimator`).
struct EstimateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "estimate",
        abstract: "Predict a composition's agent time, wall time and cost on the farm, from the jobs it finished.",
        discussion: """
            The composition is planned here, as reel submit does (its media must be readable), and the \
            coordinator predicts its agent-seconds from its recent finished jobs of the same encoder and \
            speed preset (else the same encoder, else any): agent time grows with frames × megapixels × \
            effect load (layers, their filters, overlays). Wall time assumes --agents render slots at work, \
            no more than the render has chunks; cost is at --cost-per-hour, else at what those jobs cost. \
            Render one job like it first (a calibration job): with no finished job the estimate says so.
            """)

    @Argument(help: "The composition JSON file, or an editor's timeline (.otio, .edl).") var composition: String
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup(title: "Timelines") var timeline: TimelineOptions
    @Option(help: "Render slots at work at once (agents × their --threads).") var agents: Int = 1
    @Option(help: "Target chunk length in seconds, as reel submit --chunk-seconds (default: the farm's usual 10).") var chunkSeconds: String?
    @Option(help: "The price an hour of one render slot (default: what the jobs it learns from cost).") var costPerHour: Double?
    @Flag(help: "Print the raw JSON estimate.") var json = false

    func validate() throws {
        guard (1...100_000).contains(agents) else { throw ValidationError("--agents must be 1…100000") }
        if let costPerHour, !(costPerHour >= 0 && costPerHour < 1e9) {
            throw ValidationError("--cost-per-hour must be a price an hour from 0 to 999999999, like 0.85")
        }
        if let chunkSeconds, Rational(parsing: chunkSeconds).map({ RenderLimits.problem(withChunkSeconds: $0) == nil }) != true {
            throw ValidationError("--chunk-seconds must be > 0 and ≤ 3600, like 10 or 5/2")
        }
    }

    func run() async throws {
        try await reportingErrorsAsync {
            let input = try CompositionInput.load(composition, timeline: timeline)
            let plan = try input.plan()
            let load = RenderLoad(plan: plan)
            guard load.work > 0 else { throw UserError("\(composition) renders no picture (sound only): there is no render to estimate") }
            let chunks = ChunkPlanner.plan(for: plan, targetChunkSeconds: chunkSeconds.flatMap(Rational.init(parsing:)) ?? Rational(10)).count
            let client = try await OperatorClient.connect(connection)
            let result: (estimate: RenderEstimate, raw: [UInt8])
            do {
                result = try await client.estimate(EstimateRequest(load: load, agents: agents, chunks: chunks, costPerHour: costPerHour))
            } catch {
                await client.close()
                throw error
            }
            await client.close()
            if json {
                FileHandle.standardOutput.write(Data(result.raw + [0x0A]))
            } else {
                print(Self.describe(result.estimate, load: load), terminator: "")
            }
        }
    }

    /// The estimate in a few lines.
    static func describe(_ e: RenderEstimate, load: RenderLoad) -> String {
        var text = "frames: \(e.frames) (\(load.width)×\(load.height), \(load.encoder)\(load.preset.isEmpty ? "" : " \(load.preset)"), "
            + "effect load \(String(format: "%.2f", load.effects)))\n"
        text += "agent time: \(ClientFormatting.clock(e.agentSeconds)) (\(String(format: "%.0f", e.agentSeconds)) agent-s)\n"
        text += "wall time: \(ClientFormatting.clock(e.wallSeconds)) on \(e.agents) slot\(e.agents == 1 ? "" : "s")\n"
        text += "cost: \(e.cost.map(ClientFormatting.money) ?? "- (no price: give --cost-per-hour, or price agents with reel agent --cost-per-hour)")\n"
        text += "from \(e.samples) finished job\(e.samples == 1 ? "" : "s") matching \(e.match), "
            + "\(String(format: "%.3g", e.secondsPerWork)) agent-s per frame·megapixel·layer\n"
        return text
    }
}
