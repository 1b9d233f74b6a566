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

struct ThumbnailCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Write the exact frame shown at a time as a PNG.",
        discussion: """
            Like AVAssetImageGenerator with zero tolerance: the frame whose presentation time is the last one \
            at or before --at (not the nearest keyframe). The preferred transform is applied, so portrait phone \
            clips come out upright.
            """)

    @Argument(help: "A video file.") var file: String
    // `.unconditional`: `--at -1` is a (wrong) time to explain, not a missing value.
    @Option(parsing: .unconditional, help: "Time in seconds: a decimal (2.5) or a fraction (1001/30000).") var at: String
    @Option(name: .shortAndLong, help: "The PNG to write.") var output: String

    func run() throws {
        try reportingErrors {
            try requireReadableFile(file, what: "the video")
            try requireWritableOutput(output)
            LibAVLogging.quiet()
            let time = try parseTime(at, option: "--at")
            let description: AssetDescription
            do { description = try MediaProbe.describe(path: file) } catch {
                throw UserError("\(file) is not a media file Reel can read (\(error))")
            }
            guard let video = description.video else { throw UserError("\(file) has no video track") }
            if let duration = description.duration, time >= duration {
                throw UserError("--at \(at) is not before the end of \(file) (\(String(format: "%.3f", duration.seconds)) s)")
            }
            let source = try VideoFrameSource(path: file)
            let frame = try source.frame(at: time)
            let size = video.displaySize
            let upright = YUVImage(width: size.width, height: size.height)
            Compositor.fill(upright, color: .black)
            Compositor.draw(frame, transform: video.preferredTransform, opacity: 1, crop: nil, onto: upright)
            try PNGWriter.write(upright, to: output)
            print("\(output): \(size) at \(TimeFormatting.seconds(time))")
        }
    }
}
