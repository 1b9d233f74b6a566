import ArgumentParser
import Foundation
import ReelCore
import ReelMedia

/// The options of commands that take an editor's timeline (`.otio`, `.edl`) as well as a
/// composition: where the media is, and what the timeline does not say.
struct TimelineOptions: ParsableArguments {
    @Option(help: "For a timeline: a directory to look for its media in (by relative path, then by file name) when the paths it names are not on this machine.")
    var mediaRoot: String?
    @Option(help: "For a timeline: the render size WIDTHxHEIGHT (even numbers). Default: the largest source.")
    var size: String?
    @Option(help: "For a timeline: the frame rate (24, 25, 29.97, 30000/1001 …). An OTIO cut's own rate is the default; an EDL's timecode needs it unless it is drop-frame.")
    var fps: String?

    var isEmpty: Bool { mediaRoot == nil && size == nil && fps == nil }

    func validate() throws {
        if let size {
            guard let parsed = Self.size(size) else { throw ValidationError("--size must look like 1280x720") }
            let limit = RenderDefaults.maximumDimension
            guard parsed.width > 0, parsed.height > 0, parsed.width % 2 == 0, parsed.height % 2 == 0,
                  parsed.width <= limit, parsed.height <= limit else {
                throw ValidationError("--size \(size): width and height must be even numbers from 2 to \(limit) (H.264 4:2:0 needs even sizes), e.g. 640x360")
            }
        }
        if let fps {
            guard let rate = EditRate.parse(fps), Rational.one / rate >= RenderLimits.minimumFrameDuration else {
                throw ValidationError("--fps must be a frame rate above 0 and at most 240, like 24, 25, 29.97 or 30000/1001; got \"\(fps)\"")
            }
        }
    }

    static func size(_ text: String) -> PixelSize? {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]) else { return nil }
        return PixelSize(width: w, height: h)
    }
}

/// The option of commands that take a template (a composition with `variables`,
/// docs/templates.md): values for its variables.
struct TemplateOptions: ParsableArguments {
    @Option(name: .customLong("set"), help: ArgumentHelp(
        "For a template: a value for one of its variables, NAME=VALUE (repeat for each). The value is read by the variable's type: "
        + "a number (2.5), true or false, a colour (#FF8800), a time (2.5 or 1001/30000), a media file's path (relative to the current directory) or text.",
        valueName: "name=value"))
    var set: [VariableAssignment] = []
}

/// What a command renders, submits or validates: a composition JSON file as written, one
/// made from a template and its values (`Template`), or one imported from an editor's timeline
/// (`TimelineImport`), with the timeline's warnings and the map that names composition problems
/// by the timeline's items.
struct CompositionInput {
    /// The file given on the command line.
    var path: String
    /// The composition's JSON text (the file's, or the imported one).
    var text: String
    var composition: Composition
    /// Where the composition's relative asset URLs start.
    var directory: String
    /// Set when `path` is a timeline.
    var imported: ImportedTimeline?
    /// Set when `path` is a template: its values in place (`text` and `composition` are the result).
    var template: ResolvedTemplate?

    /// Reads `path`: a timeline by its extension (`.otio`, `.edl`), else a composition, which is a
    /// template when it has a top-level `variables` (resolved with `variables`; a composition
    /// without one is read exactly as before templates existed).
    static func load(_ path: String, timeline options: TimelineOptions, variables: [VariableAssignment] = []) throws -> CompositionInput {
        try requireReadableFile(path, what: TimelineImport.Format(path: path) == nil ? "the composition" : "the timeline")
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw UserError("cannot read \(path): \(error.localizedDescription)")
        }
        let directory = URL(fileURLWithPath: absolute(path)).deletingLastPathComponent().path
        guard let format = TimelineImport.Format(path: path) else {
            if !options.isEmpty {
                throw UserError("--media-root, --size and --fps are for timelines (.otio, .edl); \(path) is a composition: set its videoComposition instead")
            }
            guard let text = String(data: data, encoding: .utf8) else { throw UserError("the composition \(path) is not UTF-8 text") }
            if let template = Template.parse(Array(data)) {
                let resolved = try template.resolve(variables, currentDirectory: FileManager.default.currentDirectoryPath).get()
                return CompositionInput(path: path, text: resolved.text, composition: resolved.composition, directory: directory, template: resolved)
            }
            try refuseVariables(variables, path: path)
            return CompositionInput(path: path, text: text, composition: try Composition.parse(Array(data)), directory: directory)
        }
        try refuseVariables(variables, path: path)
        let imported = try importTimeline(Array(data), format: format, directory: directory, options: options)
        for warning in imported.warnings { Terminal.error("warning: \(warning)") }
        let text = imported.text
        return CompositionInput(path: path, text: text, composition: try Composition.parse(text), directory: directory, imported: imported)
    }

    /// `--set` is for templates only: said plainly rather than ignored.
    static func refuseVariables(_ variables: [VariableAssignment], path: String) throws {
        guard let first = variables.first else { return }
        throw UserError("--set \(first) gives a value to a template's variable, but \(path) declares no variables (a template has a top-level "
                        + "\"variables\" object, see docs/templates.md): remove --set")
    }

    static func importTimeline(_ bytes: [UInt8], format: TimelineImport.Format, directory: String,
                               options: TimelineOptions) throws -> ImportedTimeline {
        let lookup = MediaLookup(timelineDirectory: directory, mediaRoot: options.mediaRoot.map(absolute),
                                 exists: { path in
                                     var info = stat()
                                     return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
                                 },
                                 isStill: { path in (try? MediaProbe.describe(path: path))?.kind == .still })
        let importOptions = TimelineImport.Options(lookup: lookup, renderSize: options.size.flatMap(TimelineOptions.size),
                                                   frameRate: options.fps.flatMap(EditRate.parse))
        return try TimelineImport.read(bytes, format: format, options: importOptions).get()
    }

    /// Probes the assets and validates; a problem in an imported composition is named by the
    /// timeline item it came from. `outputFileType`: the container the output's name gives, used
    /// when the composition names none (it decides whether there is a picture: M4A and WAV are
    /// sound only).
    func plan(outputFileType: FileType? = nil) throws -> RenderPlan {
        do {
            return try CompositionLoader.plan(composition, directory: directory, outputFileType: outputFileType)
        } catch let error as CompositionError {
            if let template { throw CompositionError(problems: error.problems.map(template.relabel)) }
            guard let imported else { throw error }
            throw CompositionError(problems: error.problems.map(imported.relabel))
        }
    }

    /// The job's name in `reel status`.
    var name: String { URL(fileURLWithPath: path).lastPathComponent }
}
