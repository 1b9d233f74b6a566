/// Which container an output file gets: `export.fileType` when the composition says, else the
/// output name's extension (`.mp4`, `.m4v` → MP4; `.mov` → QuickTime; `.m4a` → M4A and `.wav`
/// → WAV, both sound only; `.webm` → WebM; `.m3u8` → an HLS folder, the name being its master playlist), as AVAssetExportSession users expect from `outputURL`. An unknown extension, or one that contradicts
/// `export.fileType`, is an error naming both, never a silent MP4 under another name. The name
/// is read by `OutputName`, so one that names a directory (`..`, `renders/`) is an error that
/// says so.
public enum OutputContainer {
    /// The extensions Reel writes, and the container each means.
    public static let extensions: [(suffix: String, fileType: FileType)] = [
        ("mp4", .mp4), ("m4v", .mp4), ("mov", .mov), ("m4a", .m4a), ("wav", .wav), ("webm", .webm),
        // The master playlist of an HLS folder (`DIR/master.m3u8`).
        ("m3u8", .hls),
        // A PNG sequence, named with a number field (`DIR/frame-%05d.png`, `FrameSequenceName`).
        ("png", .png),
    ]

    /// The container for `outputPath`, given the composition's `export.fileType` (nil = not written).
    /// `writtenBy` says where that container came from, for the error that says what to change.
    public static func fileType(forOutput outputPath: String, written: FileType?,
                                writtenBy: Source = .composition) -> Result<FileType, OutputNameError> {
        let parsed: OutputName
        switch OutputName.parse(outputPath) {
        case .success(let name): parsed = name
        case .failure(let problem): return .failure(problem)
        }
        let (name, suffix) = (parsed.fileName, parsed.fileExtension)
        guard let implied = extensions.first(where: { $0.suffix == suffix })?.fileType else {
            let known = extensions.map { ".\($0.suffix)" }.joined(separator: ", ")
            let given = !suffix.isEmpty ? "ends in .\(suffix)" : name.hasSuffix(".") ? "ends in a dot with no extension after it" : "has no extension"
            return .failure(OutputNameError(message: "the output name \(name) \(given); Reel writes \(known)"
                + (written.map { " (\(writtenBy.inNote) is \"\($0.rawValue)\")" } ?? "")))
        }
        if implied == .png, FrameSequenceName(outputPath) == nil {
            return .failure(OutputNameError(message: "the output name \(name) ends in .png, a PNG sequence, whose name needs one frame number "
                + "field (%d, or %05d for five digits): name it like \(FrameSequenceName.example)"))
        }
        if let written, written != implied {
            return .failure(OutputNameError(message: "\(writtenBy.name) is \"\(written.rawValue)\" but the output name \(name) ends in .\(suffix) "
                + "(\(implied.rawValue)): change the name's extension or the fileType so they agree"))
        }
        return .success(written ?? implied)
    }

    /// The container for `outputPath` given the composition's whole `export`: as
    /// `fileType(forOutput:written:)` with `export.fileType`, and then refused when the
    /// container the output name implies cannot hold the export's video codec (ProRes in
    /// MP4) or its written audio codec (PCM in MP4), naming both the name and where the codec
    /// came from. An audio-only container takes any video codec: it writes no picture.
    public static func fileType(forOutput outputPath: String, export: ExportOptions) -> Result<FileType, OutputNameError> {
        let resolved = fileType(forOutput: outputPath, written: export.fileType)
        guard case .success(let fileType) = resolved, case .success(let parsed) = OutputName.parse(outputPath) else { return resolved }
        let name = parsed.fileName
        if let written = export.audio.codec, let audio = AudioCodec(rawValue: written), !audio.canBeWritten(in: fileType) {
            let allowed = audio.fileTypes.map { ".\($0.rawValue)" }.joined(separator: ", ")
            return .failure(OutputNameError(message: "the output name \(name) gives \(fileType.displayName), which cannot hold export.audio.codec "
                + "\"\(written)\" (\(audio.displayName) goes only in \(allowed)): name the output \(allowed), or remove the codec to get "
                + "\(AudioCodec.default(for: fileType).displayName)"))
        }
        // The codec as the container makes it (WebM turns an H.264 preset into VP9).
        var contained = export
        contained.fileType = fileType
        guard !fileType.isAudioOnly, let codec = contained.videoCodec, !codec.canBeWritten(in: fileType) else { return resolved }
        let allowed = codec.fileTypes.map { ".\($0.rawValue)" }.joined(separator: " or ")
        let container = fileType.displayName
        if export.fileType != nil {
            return .failure(OutputNameError(message: "the output name \(name) and export.fileType \"\(fileType.rawValue)\" give \(container), but "
                + "\(export.videoCodecOrigin) encodes \(codec.displayName), which Reel writes only in \(allowed): "
                + "set export.fileType to \"\(codec.defaultFileType.rawValue)\" and name the output \(allowed), or choose another codec"))
        }
        return .failure(OutputNameError(message: "the output name \(name) gives \(container), but \(export.videoCodecOrigin) encodes "
            + "\(codec.displayName), which Reel writes only in \(allowed): name the output \(allowed) (for example "
            + "\(parsed.stem).\(codec.defaultFileType.rawValue)), or choose another codec"))
    }
}

extension OutputContainer {
    /// Where a container that the output name must agree with was given.
    public enum Source: Sendable {
        /// The composition's `export.fileType`.
        case composition
        /// A finished job's output file (`reel fetch`).
        case jobOutput

        var name: String { self == .composition ? "export.fileType" : "its container" }
        var inNote: String { self == .composition ? "this composition's export.fileType" : "its container" }
    }
}

/// An output name Reel cannot write the composition to; `message` says what to change.
public struct OutputNameError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
