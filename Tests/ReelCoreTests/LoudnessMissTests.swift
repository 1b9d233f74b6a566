import Testing
@testable import ReelCore
import ReelThreadTesting

/// `LoudnessMiss`: whether a normalised output still misses its target after the last encoding
/// (the test `NormalisedAudio` encodes again by), and the warning it is delivered with, which
/// the job's loudness line carries to `reel status` and `reel events`.
@Suite(.blocking) struct LoudnessMissTests {
    static let r128 = LoudnessTarget(standard: .ebuR128)

    static func report(_ target: LoudnessTarget, integrated: Double?, truePeak: Double?) -> LoudnessReport {
        LoudnessReport(target: target, before: LoudnessMeasurement(integrated: -30, range: 4, truePeak: -6), gain: 7, ceiling: target.truePeak - 0.5,
                       after: LoudnessMeasurement(integrated: integrated, range: 4, truePeak: truePeak))
    }

    /// Within 0.2 LU and at or under the ceiling is met; just past either is a miss. Silence
    /// meets any target (there is no level to reach).
    @Test(arguments: [
        (-23.0, -1.0, false), (-23.19, -1.0, false), (-22.81, -5.0, false), (-23.21, -2.0, true), (-22.79, -2.0, true),
        (-23.0, -0.99, true), (-60.0, -40.0, true),
    ])
    func theToleranceDecidesAMiss(integrated: Double, truePeak: Double, missed: Bool) {
        #expect((LoudnessMiss(target: Self.r128, delivered: LoudnessMeasurement(integrated: integrated, range: 4, truePeak: truePeak)) != nil) == missed,
                "\(integrated) LUFS, \(truePeak) dBTP")
    }

    @Test func silenceMeetsAnyTarget() {
        #expect(LoudnessMiss(target: Self.r128, delivered: LoudnessMeasurement(integrated: nil, range: 0, truePeak: nil)) == nil)
        #expect(Self.report(Self.r128, integrated: nil, truePeak: nil).summary.contains("warning") == false)
    }

    /// A target no programme reaches: −5 LUFS under a −20 dBTP ceiling. The limiter holds the
    /// peaks, so the loudness stays far below; the warning says by how much and what to change.
    @Test func aTargetTooLoudForItsCeilingIsAQuietMiss() throws {
        let target = LoudnessTarget(integrated: -5, truePeak: -20)
        let miss = try #require(LoudnessMiss(target: target, delivered: LoudnessMeasurement(integrated: -31.42, range: 4, truePeak: -20.31)))
        #expect(miss.loudness.map { abs($0 - -26.42) < 1e-9 } == true)
        #expect(miss.peakExcess == nil)
        #expect(miss.warning == "warning: the output misses its loudness target: integrated −31.42 LUFS, 26.42 LU below the target's −5 LUFS "
                + "(more than the 0.2 LU allowed); true peak −20.31 dBTP, within the target's −20 dBTP; delivered as rendered "
                + "(rendering again gives the same result): to meet it, lower the integrated target or raise the true-peak ceiling "
                + "(export.audio.loudness)")
    }

    @Test func aPeakOverTheCeilingIsAMissEvenAtTheRightLoudness() throws {
        let miss = try #require(LoudnessMiss(target: Self.r128, delivered: LoudnessMeasurement(integrated: -23.05, range: 4, truePeak: -0.61)))
        #expect(miss.loudness == nil)
        #expect(miss.warning == "warning: the output misses its loudness target: integrated −23.05 LUFS, within 0.2 LU of the target's −23 LUFS; "
                + "true peak −0.61 dBTP, 0.39 dB above the target's −1 dBTP; delivered as rendered (rendering again gives the same result): "
                + "to meet it, lower the integrated target or raise the true-peak ceiling (export.audio.loudness)")
    }

    @Test func aLoudMissSaysSo() throws {
        let miss = try #require(LoudnessMiss(target: Self.r128, delivered: LoudnessMeasurement(integrated: -22.5, range: 4, truePeak: -3)))
        #expect(miss.warning.hasPrefix("warning: the output misses its loudness target: integrated −22.50 LUFS, 0.50 LU above the target's −23 LUFS"),
                "\(miss.warning)")
        #expect(miss.warning.hasSuffix("to meet it, give an integrated target nearer the delivered loudness (export.audio.loudness)"), "\(miss.warning)")
    }

    /// The job's loudness line (events, `reel status`) ends with the warning of an output that
    /// misses, and says nothing more of one that meets its target.
    @Test func theJobsLoudnessLineCarriesTheWarning() throws {
        let met = Self.report(Self.r128, integrated: -23.04, truePeak: -1.6)
        let missed = Self.report(LoudnessTarget(integrated: -5, truePeak: -20), integrated: -31.42, truePeak: -20.31)
        let warning = try #require(missed.miss?.warning)
        #expect(met.miss == nil && !met.summary.contains(LoudnessMiss.warningPrefix))
        #expect(missed.summary == "normalised to −5 LUFS, −20 dBTP: measured −30.0 LUFS, range 4.0 LU, true peak −6.0 dBTP; gain +7.0 dB; "
                + "output −31.4 LUFS, range 4.0 LU, true peak −20.3 dBTP; " + warning)
        #expect(LoudnessReport.warning(of: [met], outputs: nil) == nil)
        #expect(LoudnessReport.warning(of: [missed], outputs: nil) == warning)
        // Several outputs: only those that miss, each under its label.
        let outputs = [AudioOutput(language: try LanguageTag.parse("en").get(), title: "English", tracks: [2]),
                       AudioOutput(language: try LanguageTag.parse("fr").get(), tracks: [3])]
        #expect(LoudnessReport.warning(of: [met, missed], outputs: outputs) == "fr: \(warning)")
        #expect(LoudnessReport.summary(of: [met, missed], outputs: outputs) == #"en "English": \#(met.summary) | fr: \#(missed.summary)"#)
    }
}
