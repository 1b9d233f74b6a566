import Testing
import ReelThreadTesting
@testable import ReelCore

/// HDR outputs (docs/colour.md, "HDR outputs"): what validation accepts, what it refuses and
/// names, the metadata the plan carries, and the content key covering it.
@Suite(.blocking) struct HDRValidationTests {
    static func composition(_ videoComposition: String, export: String = #"{"video": {"codec": "hevc"}}"#) -> String {
        Fixtures.composition(extra: #""videoComposition": {\#(videoComposition)}, "export": \#(export)"#)
    }

    @Test func anHDR10CompositionPlansBT2020PQWithItsMetadata() throws {
        let plan = try Fixtures.plan(Self.composition(#"""
            "colorPrimaries": "ITU_R_2020", "colorTransferFunction": "SMPTE_ST_2084_PQ", "colorYCbCrMatrix": "ITU_R_2020",
            "masteringDisplay": {"primaries": "ITU_R_2020", "maxLuminance": 4000, "minLuminance": 0.005},
            "contentLightLevel": {"maxCLL": 1200, "maxFALL": 300}
            """#), assets: Fixtures.ruleAssets)
        #expect(plan.colour.space == ColourSpace(primaries: .bt2020, transfer: .pq, matrix: .bt2020NCL, range: .limited))
        let hdr = try #require(plan.colour.hdr)
        #expect(hdr.masteringDisplay == MasteringDisplay(primaries: .itu2020, maxLuminance: 4000, minLuminance: 0.005))
        #expect(hdr.contentLightLevel == ContentLightLevel(maxCLL: 1200, maxFALL: 300))
        // HEVC's SEI units: chromaticities in 0.00002, luminance in 0.0001 cd/m² (x265's own
        // documentation gives this string for BT.2020 primaries).
        #expect(hdr.masteringDisplay.x265String == "G(8500,39850)B(6550,2300)R(35400,14600)WP(15635,16450)L(40000000,50)")
    }

    @Test func anHLGCompositionDefaultsToBT2020AndTheUsualMasteringDisplay() throws {
        let plan = try Fixtures.plan(Self.composition(#""colorTransferFunction": "ITU_R_2100_HLG""#), assets: Fixtures.ruleAssets)
        #expect(plan.colour.space == ColourSpace(primaries: .bt2020, transfer: .hlg, matrix: .bt2020NCL, range: .limited))
        #expect(plan.colour.hdr == HDRMetadata(masteringDisplay: .p3D65Nits1000, contentLightLevel: .unknown))
        #expect(MasteringDisplay.p3D65Nits1000.x265String == "G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1)")
    }

    @Test func sdrCompositionsAreUnchanged() throws {
        let plan = try Fixtures.plan(Fixtures.composition(), assets: Fixtures.ruleAssets)
        #expect(plan.colour == OutputColour.standard && plan.colour.hdr == nil)
    }

    @Test func aCodecThatCannotCarryHDRIsRefusedNamingTheFix() {
        let problems = Fixtures.problems(Self.composition(#""colorTransferFunction": "SMPTE_ST_2084_PQ""#, export: #"{"video": {"codec": "h264"}}"#))
        #expect(problems.count == 1)
        #expect(problems.first?.hasPrefix("export.video.codec: export.video.codec \"h264\" encodes H.264, which cannot carry colorTransferFunction \"SMPTE_ST_2084_PQ\"") == true,
                "\(problems)")
        #expect(problems.first?.contains("set export.video.codec to \"hevc\"") == true)
        // The default preset (H.264) is named as the origin.
        let byPreset = Fixtures.problems(Self.composition(#""colorTransferFunction": "ITU_R_2100_HLG""#, export: "{}"))
        #expect(byPreset.count == 1 && byPreset[0].hasPrefix("export.preset: export.preset \"highest\" encodes H.264"), "\(byPreset)")
    }

    @Test func featuresTheSixteenBitCompositorLacksAreRefusedByKey() {
        let problems = Fixtures.problems(Self.composition(#"""
            "colorTransferFunction": "SMPTE_ST_2084_PQ", "colorPrimaries": "P3_D65", "colorYCbCrMatrix": "ITU_R_709_2",
            "filters": [{"type": "sepia"}],
            "overlays": [{"text": "Hi", "frame": {"x": 0, "y": 0, "width": 100, "height": 50}}],
            "instructions": [{"timeRange": {"start": 0, "duration": 10}, "layerInstructions": [
              {"track": 1, "blendMode": "screen", "filters": [{"type": "toon"}],
               "transform": {"a": 0, "b": 1, "c": -1, "d": 0, "tx": 1080, "ty": 0}}]}]
            """#))
        let paths = problems.map { String($0.prefix { $0 != ":" }) }
        #expect(paths == ["videoComposition.colorPrimaries", "videoComposition.colorYCbCrMatrix", "videoComposition.filters[0]",
                          "videoComposition.overlays[0]", "videoComposition.instructions[0].layerInstructions[0].filters[0]",
                          "videoComposition.instructions[0].layerInstructions[0].blendMode",
                          "videoComposition.instructions[0].layerInstructions[0].transform"], "\(problems)")
        #expect(problems[3].contains("a text overlay is not supported in HDR compositions yet"), "\(problems)")
    }

    @Test func metadataIsValidatedAndRefusedOnSDROutputs() {
        let bad = Fixtures.problems(Self.composition(#"""
            "colorTransferFunction": "SMPTE_ST_2084_PQ",
            "masteringDisplay": {"primaries": "SMPTE_C", "maxLuminance": 20000, "minLuminance": 0},
            "contentLightLevel": {"maxCLL": 400, "maxFALL": 1000}
            """#))
        #expect(bad.map { String($0.prefix { $0 != ":" }) } == [
            "videoComposition.masteringDisplay.primaries", "videoComposition.masteringDisplay.maxLuminance",
            "videoComposition.masteringDisplay.minLuminance", "videoComposition.contentLightLevel.maxFALL"], "\(bad)")
        let sdr = Fixtures.problems(Self.composition(#""contentLightLevel": {"maxCLL": 400, "maxFALL": 100}"#))
        #expect(sdr.count == 1 && sdr[0].hasPrefix("videoComposition.contentLightLevel: describes an HDR output"), "\(sdr)")
    }

    @Test func theContentKeyCoversTheHDRSettings() throws {
        func key(_ vc: String) throws -> String {
            let plan = try Fixtures.plan(Self.composition(vc), assets: Fixtures.ruleAssets)
            return ContentKey.videoChunk(plan, frames: FrameRange(start: 0, end: 3), encoderThreads: 2,
                                         assetContent: ["a": String(repeating: "1", count: 64)])!
        }
        let pq = try key(#""colorTransferFunction": "SMPTE_ST_2084_PQ""#)
        let brighter = try key(#""colorTransferFunction": "SMPTE_ST_2084_PQ", "masteringDisplay": {"primaries": "P3_D65", "maxLuminance": 4000, "minLuminance": 0.0001}"#)
        let measured = try key(#""colorTransferFunction": "SMPTE_ST_2084_PQ", "contentLightLevel": {"maxCLL": 800, "maxFALL": 200}"#)
        let hlg = try key(#""colorTransferFunction": "ITU_R_2100_HLG""#)
        #expect(Set([pq, brighter, measured, hlg]).count == 4)
        // An SDR plan writes no HDR field (ContentKeyReferenceTests rebuilds SDR keys field by field).
        #expect(!(try key("")).isEmpty)
    }
}
