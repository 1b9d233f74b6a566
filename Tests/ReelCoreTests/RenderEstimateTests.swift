import Testing
@testable import ReelCore
import ReelThreadTesting

/// `reel estimate`'s model (docs/farm.md, "Estimates"): a render's load from its plan, and its
/// agent time, wall time and cost from the farm's finished jobs.
@Suite("Render estimates", .blocking)
struct RenderEstimateTests {
    static func load(_ encoder: String = "libx264", preset: String = "medium", _ width: Int = 1280, _ height: Int = 720,
                     frames: Int = 300, effects: Double = 1) -> RenderLoad {
        RenderLoad(encoder: encoder, preset: preset, width: width, height: height, frames: frames, effects: effects)
    }

    @Test func aPlansLoadCountsItsFramesSizeEncoderAndLayersWithTheirFilters() throws {
        let plain = RenderLoad(plan: try AnimatedFilterTests.plan(layer: "[]"))
        let plan = try AnimatedFilterTests.plan(layer: #"[{"type": "brightness", "brightness": 0.1}]"#,
                                                picture: #"[{"type": "saturation", "saturation": 0.5}]"#)
        let filtered = RenderLoad(plan: plan)
        #expect(plain.encoder == "libx264" && plain.preset == plan.export.video.x264Preset && !plain.preset.isEmpty)
        #expect(plain.frames == 250 && filtered.frames == 250)
        #expect(filtered.width == plan.outputSize.width && filtered.height == plan.outputSize.height)
        #expect(plain.effects == 1, "one layer")
        #expect(filtered.effects == 3, "the layer, its filter and the picture's filter")
        #expect(filtered.work == 3 * plain.work)
    }

    @Test func agentTimeScalesWithFramesPixelsAndEffectsAtTheCalibrationsRate() throws {
        // Calibration: 300 frames of 720p (0.9216 Mpx) in 60 agent-s.
        let history = [RenderSample(load: Self.load(), agentSeconds: 60)]
        // 600 frames of 1080p (2.0736 Mpx) with two layers: 4.5 × 2 the work.
        let estimate = try RenderEstimator.estimate(Self.load("libx264", preset: "medium", 1920, 1080, frames: 600, effects: 2), history: history, agents: 4).get()
        #expect(abs(estimate.agentSeconds - 540) < 1e-9, "\(estimate)")
        #expect(estimate.frames == 600 && estimate.samples == 1 && estimate.match == "encoder and preset")
        #expect(abs(estimate.wallSeconds - 135) < 1e-9 && estimate.agents == 4)
        #expect(estimate.cost == nil, "no price anywhere")
    }

    @Test func theMostAlikeJobsAreUsedLongOnesWeighingMore() throws {
        let history = [
            RenderSample(load: Self.load("libx265", preset: "medium"), agentSeconds: 300),   // 5× slower per work
            RenderSample(load: Self.load(preset: "slow"), agentSeconds: 120),
            RenderSample(load: Self.load(frames: 100), agentSeconds: 10),                      // 0.1 s a frame
            RenderSample(load: Self.load(frames: 900), agentSeconds: 270),                     // 0.3 s a frame
        ]
        let same = try RenderEstimator.estimate(Self.load(frames: 1000), history: history, agents: 1).get()
        #expect(same.match == "encoder and preset" && same.samples == 2)
        #expect(abs(same.agentSeconds - 280) < 1e-9, "280 s over 1,000 frames, not the mean of 0.1 and 0.3: \(same)")
        let encoder = try RenderEstimator.estimate(Self.load(preset: "veryslow", frames: 1300), history: history, agents: 1).get()
        #expect(encoder.match == "encoder" && encoder.samples == 3)
        #expect(abs(encoder.agentSeconds - 400) < 1e-9, "(120 + 10 + 270) s for 1,300 frames: \(encoder)")
        let other = try RenderEstimator.estimate(Self.load("libsvtav1", preset: "svtav1-8"), history: history, agents: 1).get()
        #expect(other.match == "any" && other.samples == 4)
    }

    @Test func onlyTheMostRecentSamplesCount() throws {
        let recent = Array(repeating: RenderSample(load: Self.load(), agentSeconds: 30), count: RenderEstimator.maxSamples)
        let old = RenderSample(load: Self.load(), agentSeconds: 3_000)
        let estimate = try RenderEstimator.estimate(Self.load(), history: recent + [old], agents: 1).get()
        #expect(abs(estimate.agentSeconds - 30) < 1e-9 && estimate.samples == RenderEstimator.maxSamples)
    }

    @Test func wallTimeUsesNoMoreAgentsThanChunksAndCostTakesTheGivenPriceElseTheHistorys() throws {
        let history = [RenderSample(load: Self.load(), agentSeconds: 3_600, cost: 2),
                       RenderSample(load: Self.load(), agentSeconds: 3_600, cost: nil),
                       RenderSample(load: Self.load(), agentSeconds: 1_800, cost: 2)]
        let estimate = try RenderEstimator.estimate(Self.load(frames: 300), history: history, agents: 8, chunks: 3).get()
        #expect(abs(estimate.agentSeconds - 3_000) < 1e-9)
        #expect(estimate.agents == 3 && abs(estimate.wallSeconds - 1_000) < 1e-9)
        // The priced jobs' average: 4 for 5,400 agent-s.
        #expect(abs((estimate.cost ?? 0) - 3_000 * 4 / 5_400) < 1e-9, "\(estimate)")
        let priced = try RenderEstimator.estimate(Self.load(frames: 300), history: history, agents: 1, costPerHour: 1.2).get()
        #expect(abs((priced.cost ?? 0) - 1) < 1e-9)
    }

    @Test func withoutHistoryOrWorkItSaysWhy() {
        #expect(RenderEstimator.estimate(Self.load(), history: [], agents: 1) == .failure(.noHistory))
        #expect(RenderEstimator.estimate(Self.load(), history: [RenderSample(load: Self.load(), agentSeconds: 0)], agents: 1) == .failure(.noHistory))
        #expect(RenderEstimator.estimate(Self.load(frames: 0), history: [RenderSample(load: Self.load(), agentSeconds: 1)], agents: 1)
                == .failure(.noWork))
        #expect(RenderEstimator.Failure.noHistory.description.contains("render one like it first"))
    }
}
