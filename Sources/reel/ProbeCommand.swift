import ArgumentParser
import Foundation
import ReelCore
import ReelKernels
import ReelMedia

struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Describe a media file: tracks, codecs, duration, frame rate, natural size, preferred transform, keyframe interval.")

    @Argument(help: "A video, audio or image file.") var file: String
    @Flag(help: "Machine-readable JSON output.") var json = false

    func run() throws {
        try reportingErrors {
            try requireReadableFile(file, what: "the file")
            LibAVLogging.quiet()
            let report: ProbeReport
            do { report = try MediaProbe.report(path: file) } catch {
                throw UserError("\(file) is not a media file Reel can read (\(error))")
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
            } else {
                print(report.description)
            }
        }
    }
}
