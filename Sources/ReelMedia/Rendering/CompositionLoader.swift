import Foundation
import ReelCore

/// Turns a composition file into a `RenderPlan`: reads and parses the JSON, resolves every
/// asset's URL against the composition's directory, probes each file, and validates the whole.
///
/// This is the only place that touches the file system on the way to a plan; the rules live in
/// the pure core. Every problem found is reported, not just the first.
public enum CompositionLoader {
    /// Loads and validates the composition at `path`. `outputFileType`: the container the
    /// output's name gives (`OutputContainer`), used when the composition's `export.fileType`
    /// is absent — it decides whether there is a picture (M4A and WAV are sound only) and the
    /// defaults that follow the container.
    public static func load(path: String, outputFileType: FileType? = nil) throws -> RenderPlan {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw CompositionError(problems: [Problem(path: path, message: "cannot read the composition file (\(describe(error)))")])
        }
        let composition = try Composition.parse(bytes)
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return try plan(composition, directory: directory, outputFileType: outputFileType)
    }

    /// Validates an already-parsed composition whose relative URLs are relative to `directory`;
    /// `outputFileType` as in `load(path:outputFileType:)`. An asset whose resolved URL
    /// `sources` gives a byte-range source for is probed through it (the coordinator's sources
    /// in an object store, read in ranges); every other one is a local file or an http(s) URL.
    public static func plan(_ composition: Composition, directory: String, outputFileType: FileType? = nil,
                            sources: MediaSources = .local) throws -> RenderPlan {
        var composition = composition
        if composition.export.fileType == nil { composition.export.fileType = outputFileType }
        var resolutions: [String: AssetResolution] = [:]
        for (id, asset) in composition.assets {
            let url = resolveAssetURL(asset.url, relativeTo: directory)
            if case .byteRanges(let source, _)? = try? sources.location(of: url) {
                resolutions[id] = probe(url, source: source)
            } else {
                resolutions[id] = probe(url)
            }
        }
        return try CompositionValidator.validate(composition, assets: resolutions).get()
    }

    /// Probes the asset `url` through `source`: the same recognition as a local file's (subtitles
    /// by name or content and read whole, `.cube` LUTs by name or content and read whole, media by libav
    /// reading only the ranges it needs).
    static func probe(_ url: String, source: any ByteRangeSource) -> AssetResolution {
        if let subtitles = SubtitleProbe.resolve(url, source: source) { return subtitles }
        let location = MediaLocation.byteRanges(source, name: url)
        if CubeLUTFile.isLUT(url) || CubeLUTFile.sniff((try? SubtitleProbe.readAll(source, upTo: 4096)) ?? []) {
            do {
                let lut = try CubeLUTFile.load(location)
                return .described(url: url, AssetDescription(kind: .lut, duration: nil, video: nil, audio: nil,
                                                             lut: LUTDescription(dimensions: lut.isThreeDimensional ? 3 : 1, size: lut.size)))
            } catch {
                return .unavailable(reason: "not a .cube LUT Reel can read (\(error))")
            }
        }
        do {
            return .described(url: url, try MediaProbe.describe(location))
        } catch {
            return .unavailable(reason: "not a media file Reel can read (\(error))")
        }
    }

    /// The first 4 KiB of the local file `path` (empty if it cannot be read).
    static func head(of path: String) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: 4096)).map { [UInt8]($0) } ?? []
    }

    static func probe(_ url: String) -> AssetResolution {
        let isRemote = url.hasPrefix("http://") || url.hasPrefix("https://")
        if !isRemote {
            var info = stat()
            guard stat(url, &info) == 0 else { return .unavailable(reason: "no such file (\(url))") }
            switch info.st_mode & S_IFMT {
            case S_IFREG: break
            case S_IFDIR: return .unavailable(reason: "is a directory, not a media file (\(url))")
            // Reading a FIFO or a device never ends (or blocks): only regular files are media.
            default: return .unavailable(reason: "is not a regular file (a FIFO, device or socket); give a media file (\(url))")
            }
            guard FileManager.default.isReadableFile(atPath: url) else {
                return .unavailable(reason: "file is not readable (\(url))")
            }
        }
        if let subtitles = SubtitleProbe.resolve(url, isRemote: isRemote) { return subtitles }
        if CubeLUTFile.isLUT(url) || (!isRemote && CubeLUTFile.sniff(Self.head(of: url))) {
            if isRemote { return .unavailable(reason: "a .cube LUT must be a local file; download it and give its path (\(url))") }
            do {
                let lut = try CubeLUTFile.load(.file(url))
                return .described(url: url, AssetDescription(kind: .lut, duration: nil, video: nil, audio: nil,
                                                             lut: LUTDescription(dimensions: lut.isThreeDimensional ? 3 : 1, size: lut.size)))
            } catch {
                return .unavailable(reason: "not a .cube LUT Reel can read (\(error))")
            }
        }
        do {
            return .described(url: url, try MediaProbe.describe(path: url))
        } catch {
            return .unavailable(reason: "not a media file Reel can read (\(error))")
        }
    }

    static func describe(_ error: Error) -> String {
        (error as NSError).localizedDescription
    }
}
