import ArgumentParser
import Foundation
import ReelCore
import ReelMedia

/// `reel import`: an editor's cut (OpenTimelineIO, CMX 3600 EDL) as a composition file.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Turn an editor's timeline (.otio, .edl) into a composition JSON file.",
        discussion: """
            Reads an OpenTimelineIO timeline or a CMX 3600 EDL, finds its media (next to the timeline, or \
            under --media-root), checks the result as `reel validate` does and writes the composition \
            (asset paths absolute). Anything the timeline holds that Reel cannot render is an error naming \
            the item; markers and disabled items are listed as warnings. Final Cut Pro XML, AAF and Premiere \
            XML convert to .otio with OpenTimelineIO's otioconvert first (see docs/interchange.md). \
            `reel render`, `submit` and `validate` also take a timeline directly.
            """)

    @Argument(help: "The timeline: an .otio or .edl file.") var timeline: String
    @Option(name: .shortAndLong, help: "The composition file to write (- for standard output).") var output: String
    @OptionGroup(title: "Timelines") var options: TimelineOptions

    func validate() throws {
        guard TimelineImport.Format(path: timeline) != nil else {
            throw ValidationError("reel import reads .otio and .edl files; convert other formats with otioconvert (see docs/interchange.md)")
        }
    }

    func run() throws {
        try reportingErrors {
            LibAVLogging.quiet()
            let input = try CompositionInput.load(timeline, timeline: options)
            let plan = try input.plan()
            if output == "-" {
                FileHandle.standardOutput.write(Data(input.text.utf8))
                return
            }
            try requireWritableOutput(output, example: "composition.json")
            do { try Data(input.text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic) } catch {
                throw UserError("cannot write \(output): \(error.localizedDescription)")
            }
            Terminal.error("\(output): \(plan.outputSize), \(plan.frameCount) frames of \(TimeFormatting.seconds(plan.frameDuration)), "
                           + "\(plan.videoTracks.count) video / \(plan.audioTracks.count) audio tracks")
        }
    }
}
