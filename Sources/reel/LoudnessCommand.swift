import ArgumentParser
import Foundation
import ReelCore
import ReelMedia

/// `reel loudness`: integrated loudness, loudness range and true peak of a file, or of a
/// composition's mix (rendered without the picture), measured with libebur128.
struct LoudnessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loudness",
        abstract: "Measure integrated loudness, loudness range and true peak of a file or of a composition's mix.",
        discussion: """
            Loudness is measured to ITU-R BS.1770-4 with EBU R128's gating (libebur128): integrated \
            loudness in LUFS, loudness range in LU (EBU Tech 3342), and the highest true peak of any channel \
            in dBTP (4× oversampling). A media file is measured from its first audio stream at its own sample \
            rate and channels. A composition (a JSON file) is validated and its audio mix is rendered and \
            measured without rendering any picture; when it sets export.audio.loudness, the line after it \
            gives what normalisation makes of the mix (gain and true-peak limiter, before AAC encoding). \
            With export.audioOutputs each output's mix is measured (and normalised) on its own, one after \
            the other; the JSON's top-level figures are the first output's, and audioOutputs lists them all.
            """)

    @Argument(help: "A media file, or a composition JSON file.") var input: String
    @Flag(help: "Machine-readable JSON output.") var json = false

    struct Output: Encodable {
        var input: String
        /// "file" or "composition".
        var kind: String
        var integratedLUFS: Double?
        var loudnessRangeLU: Double
        var truePeakDBTP: Double?
        var normalised: Normalised?
        /// With `export.audioOutputs`: which output this is (`en "English"`).
        var audioOutput: String?
        /// With `export.audioOutputs`: every output's figures, in order (the first is the top level's).
        var audioOutputs: [Output]?

        struct Normalised: Encodable {
            var target: String
            var integratedTargetLUFS: Double
            var truePeakTargetDBTP: Double
            var gainDB: Double
            var limiterCeilingDBTP: Double
            var integratedLUFS: Double?
            var loudnessRangeLU: Double
            var truePeakDBTP: Double?
        }
    }

    func run() throws {
        try reportingErrors {
            try requireReadableFile(input, what: "the input")
            LibAVLogging.quiet()
            let output: Output
            if try Self.isComposition(input) {
                let plan = try CompositionLoader.load(path: input)
                guard !plan.audioTracks.isEmpty else { throw UserError("\(input) has no audio track: there is no mix to measure") }
                let labels = plan.export.audioOutputs?.map(\.label)
                let mixes = try plan.audioMixPlans.enumerated().map { i, mix in try measure(mix, label: labels?[i]) }
                output = labels == nil ? mixes[0] : { var first = mixes[0]; first.audioOutputs = mixes; return first }()
            } else {
                let measured: LoudnessMeasurement
                do { measured = try LoudnessAnalysis.measure(path: input) } catch {
                    throw UserError("\(input): cannot measure its loudness (\(error)); give a file with an audio stream, or a composition")
                }
                output = Output(input: input, kind: "file", integratedLUFS: measured.integrated, loudnessRangeLU: measured.range,
                                truePeakDBTP: measured.truePeak)
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(output), as: UTF8.self))
            } else {
                print(Self.text(output), terminator: "")
            }
        }
    }

    /// The figures of one mix (`RenderPlan.audioMixPlans`), and what normalisation makes of it.
    func measure(_ plan: RenderPlan, label: String?) throws -> Output {
        let mix = try LoudnessAnalysis.measure(AudioMixer(plan: plan))
        var out = Output(input: input, kind: "composition", integratedLUFS: mix.integrated, loudnessRangeLU: mix.range,
                         truePeakDBTP: mix.truePeak, audioOutput: label)
        if let target = plan.export.audio.loudness {
            let report = try LoudnessAnalysis.preview(plan, target: target)
            out.normalised = .init(target: target.description, integratedTargetLUFS: target.integrated, truePeakTargetDBTP: target.truePeak,
                                   gainDB: report.gain, limiterCeilingDBTP: report.ceiling, integratedLUFS: report.after.integrated,
                                   loudnessRangeLU: report.after.range, truePeakDBTP: report.after.truePeak)
        }
        return out
    }

    /// A composition is a JSON object: the file's first non-blank byte is `{`.
    static func isComposition(_ path: String) throws -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw UserError("cannot read \(path)") }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 256)) ?? Data()
        return head.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) } == UInt8(ascii: "{")
    }

    static func text(_ o: Output) -> String {
        if let outputs = o.audioOutputs { return outputs.map { Self.text($0) }.joined() }
        func figures(_ integrated: Double?, _ range: Double, _ peak: Double?) -> String {
            "integrated \(integrated.map { String(format: "%.1f LUFS", $0) } ?? "silence (below the −70 LUFS gate)"), "
                + "loudness range \(String(format: "%.1f LU", range)), "
                + "true peak \(peak.map { String(format: "%.1f dBTP", $0) } ?? "none (digital silence)")"
        }
        let what = o.audioOutput.map { " (audio output \($0))" } ?? (o.kind == "composition" ? " (mix)" : "")
        var text = "\(o.input)\(what): \(figures(o.integratedLUFS, o.loudnessRangeLU, o.truePeakDBTP))\n"
        if let n = o.normalised {
            text += "normalised to \(n.target): gain \(String(format: "%+.1f dB", n.gainDB)), limiter ceiling \(String(format: "%.1f dBTP", n.limiterCeilingDBTP)): "
                + figures(n.integratedLUFS, n.loudnessRangeLU, n.truePeakDBTP) + " (before AAC encoding)\n"
        }
        return text
    }
}
