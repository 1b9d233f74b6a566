import ArgumentParser
import Foundation
import ReelCore
import ReelMedia

struct ThumbnailCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Write the exact frames shown at given times of a video or a composition, as PNG or JPEG, or as a contact sheet with a WebVTT track.",
        discussion: """
            Like AVAssetImageGenerator with zero tolerance: for a video file, the frame whose presentation time is \
            the last one at or before each time (not the nearest keyframe), upright; for a composition (.json) or \
            an editor's timeline (.otio, .edl), the frame the full render shows at that time, drawn the same way, without rendering any other frame. \
            --at may be given several times and --every S adds 0, S, 2S, … up to the end; the pictures are in time \
            order. With more than one picture, -o is a pattern numbered from 1 as ffmpeg's image muxer numbers \
            files (thumb-%03d.png). --max-size WxH scales them down to fit, aspect kept (0 leaves a side free). \
            --sprite writes one contact sheet (-o sheet.jpg) and, beside it, sheet.vtt: a WebVTT track whose cues \
            point at the tiles with #xywh= fragments, as players use for previews while scrubbing. The format \
            follows -o's extension: .png, .jpg or .jpeg.
            """)

    /// More pictures than this in one run is a mistake (a tiny --every over a long file).
    static let maximumPictures = 10_000
    /// A contact sheet side longer than this is refused (JPEG's own limit is 65,535).
    static let maximumSheetSide = 16_384

    @Argument(help: "A video file, a composition (.json), or an editor's timeline (.otio, .edl).") var input: String
    // `.unconditionalSingleValue`: `--at -1` is a (wrong) time to explain, not a missing value.
    @Option(parsing: .unconditionalSingleValue, help: "A time in seconds: a decimal (2.5) or a fraction (1001/30000). May be repeated.")
    var at: [String] = []
    @Option(help: "Also a picture every S seconds from 0 to the end (a decimal or a fraction, > 0).") var every: String?
    @Option(help: "Scale the pictures down to fit WIDTHxHEIGHT, aspect ratio kept (0 leaves that side free), e.g. 320x180 or 160x0.")
    var maxSize: String?
    @Flag(help: "One contact sheet of every picture (-o sheet.jpg) plus a WebVTT thumbnails track beside it (sheet.vtt).")
    var sprite = false
    @Option(help: "Tiles per row of the contact sheet (--sprite). Must be ≥ 1.") var columns: Int = 10
    @Option(name: .shortAndLong, help: "The picture to write (.png, .jpg): a pattern such as thumb-%03d.png for several, or the sheet with --sprite.")
    var output: String
    @OptionGroup(title: "Timelines") var timeline: TimelineOptions
    @OptionGroup(title: "Templates") var template: TemplateOptions

    func validate() throws {
        guard columns >= 1 else { throw ValidationError("--columns must be at least 1") }
        guard !at.isEmpty || every != nil else { throw ValidationError("give a time with --at T (several allowed) or --every S") }
        if let maxSize, parsedMaximum(maxSize) == nil {
            throw ValidationError("--max-size must look like 320x180 (whole pixels; 0 leaves a side free, not both)")
        }
    }

    func parsedMaximum(_ text: String) -> PixelSize? {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w >= 0, h >= 0, w + h > 0 else { return nil }
        return PixelSize(width: w, height: h)
    }

    func run() throws {
        try reportingErrors {
            try requireReadableFile(input, what: "the input")
            try requireWritableOutput(output, example: "thumb.png")
            LibAVLogging.quiet()
            guard let format = Thumbnails.ImageFormat(path: output) else {
                throw UserError("-o \(output): thumbnails are written as .png, .jpg or .jpeg")
            }
            let source = try Source(input, timeline: timeline, variables: template.set)
            var requested = try at.map { try parseTime($0, option: "--at") }
            if let duration = source.duration, let late = requested.first(where: { $0 >= duration }) {
                throw UserError("--at \(TimeFormatting.seconds(late)) is not before the end of \(input) (\(String(format: "%.3f", duration.seconds)) s)")
            }
            guard requested.count <= Self.maximumPictures else { throw UserError("at most \(Self.maximumPictures) pictures in one run") }
            var step: Rational?
            if let every {
                step = try parseTime(every, option: "--every")
                guard step! > .zero else { throw UserError("--every must be more than 0 seconds") }
                guard let duration = source.duration else { throw UserError("--every needs a video with a duration; \(input) is a still image") }
                guard ThumbnailSet.count(every: step!, duration: duration) + Int64(requested.count) <= Self.maximumPictures else {
                    throw UserError("--every \(every) makes more than \(Self.maximumPictures) pictures of \(input); give a longer interval")
                }
            }
            requested = ThumbnailSet.times(at: requested, every: step, duration: source.duration ?? .zero)
            let size = ThumbnailSet.fitting(source.size, within: maxSize.flatMap(parsedMaximum))
            if sprite {
                try writeSprite(source: source, times: requested, size: size, format: format)
            } else {
                try writePictures(source: source, times: requested, size: size, format: format)
            }
        }
    }

    /// One file per time, numbered from 1 in time order (a single picture may take a plain name).
    private func writePictures(source: Source, times: [Rational], size: PixelSize, format: Thumbnails.ImageFormat) throws {
        let pattern = Thumbnails.numberedPath(output, number: 1) != nil
        guard pattern || times.count == 1 else {
            throw UserError("\(times.count) pictures need a numbered -o such as thumb-%03d.\(URL(fileURLWithPath: output).pathExtension) "
                            + "(numbered from 1 in time order), or --sprite for one contact sheet")
        }
        let pictures = try source.pictures(at: times)
        var written: [String] = []
        for (index, picture) in pictures.enumerated() {
            let path = pattern ? Thumbnails.numberedPath(output, number: index + 1)! : output
            try Thumbnails.write(try Thumbnails.scaled(picture, to: size), as: format, to: path)
            written.append(path)
        }
        if times.count == 1 {
            print("\(written[0]): \(size) at \(TimeFormatting.seconds(times[0]))")
        } else {
            print("\(written.first!) … \(written.last!): \(times.count) pictures of \(size), \(TimeFormatting.seconds(times.first!)) to \(TimeFormatting.seconds(times.last!))")
        }
    }

    /// The contact sheet at `output` and its WebVTT track beside it (same name, `.vtt`).
    private func writeSprite(source: Source, times: [Rational], size: PixelSize, format: Thumbnails.ImageFormat) throws {
        guard Thumbnails.numberedPath(output, number: 1) == nil else {
            throw UserError("--sprite writes one contact sheet: give -o a plain name such as sheet.jpg, not a pattern")
        }
        let sheet = ContactSheet(tile: size, count: times.count, columns: columns)
        guard max(sheet.size.width, sheet.size.height) <= Self.maximumSheetSide else {
            throw UserError("the contact sheet would be \(sheet.size) (\(sheet.columns)×\(sheet.rows) tiles of \(size)); at most "
                            + "\(Self.maximumSheetSide) pixels a side: give a longer --every, a smaller --max-size, or other --columns")
        }
        let tiles = try source.pictures(at: times).map { try Thumbnails.scaled($0, to: size) }
        try Thumbnails.write(Thumbnails.contactSheet(tiles, sheet: sheet), as: format, to: output)
        let url = URL(fileURLWithPath: output)
        let vtt = url.deletingPathExtension().appendingPathExtension("vtt").path
        let track = WebVTTThumbnails.document(times: times, end: source.duration ?? times.last!, sheet: sheet, imageName: url.lastPathComponent)
        guard FileManager.default.createFile(atPath: vtt, contents: Data(track.utf8)) else { throw UserError("cannot write \(vtt)") }
        print("\(output): \(times.count) tiles of \(size) in \(sheet.columns)×\(sheet.rows) (\(sheet.size)); \(vtt)")
    }
}

/// What the thumbnails are taken of: a media file's video, or a composition's render.
private enum Source {
    /// `duration` nil: a still image (any time shows it).
    case file(path: String, video: VideoTrackDescription, duration: Rational?)
    case composition(RenderPlan)

    init(_ path: String, timeline: TimelineOptions, variables: [VariableAssignment]) throws {
        if URL(fileURLWithPath: path).pathExtension.lowercased() == "json" || TimelineImport.Format(path: path) != nil {
            let plan = try CompositionInput.load(path, timeline: timeline, variables: variables).plan()
            guard plan.hasPicture else { throw UserError("\(path) is sound only: it has no picture to take a thumbnail of") }
            self = .composition(plan)
            return
        }
        guard timeline.isEmpty else { throw UserError("--media-root, --size and --fps are for timelines (.otio, .edl); \(path) is a media file") }
        try CompositionInput.refuseVariables(variables, path: path)
        let description: AssetDescription
        do { description = try MediaProbe.describe(path: path) } catch {
            throw UserError("\(path) is not a media file Reel can read (\(error))")
        }
        guard let video = description.video else { throw UserError("\(path) has no video track") }
        self = .file(path: path, video: video, duration: description.duration)
    }

    var duration: Rational? {
        switch self {
        case .file(_, _, let duration): duration
        case .composition(let plan): plan.duration
        }
    }

    /// The size of a picture before `--max-size`: the video's upright size, or the render's output size.
    var size: PixelSize {
        switch self {
        case .file(_, let video, _): video.displaySize
        case .composition(let plan): plan.outputSize
        }
    }

    func pictures(at times: [Rational]) throws -> [RGBPicture] {
        switch self {
        case .file(let path, let video, _): try Thumbnails.frames(ofFile: path, video: video, at: times)
        case .composition(let plan): try Thumbnails.frames(of: plan, at: times)
        }
    }
}
