/// Editors' timelines as compositions: OpenTimelineIO (`.otio`) and CMX 3600 EDLs (`.edl`).
///
/// Pure: it takes the file's bytes and a `MediaLookup` (which answers whether a file exists),
/// and returns the composition JSON a user could have written, with the warnings the reading
/// raised and where each composition track segment came from. docs/interchange.md describes
/// the mapping item by item.
public enum TimelineImport {
    /// The timeline formats Reel reads, by file extension.
    public enum Format: String, Sendable, CaseIterable {
        case otio, edl
        /// `.otio` or `.edl` (any case); nil for anything else.
        public init?(path: String) {
            guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
            self.init(rawValue: path[path.index(after: dot)...].lowercased())
        }
    }

    public struct Options: Sendable {
        public var lookup: MediaLookup
        /// `--size`: the render size (else Reel's default, the largest source).
        public var renderSize: PixelSize?
        /// `--fps` as a frame rate: overrides an OTIO cut's rate; an EDL's timecode rate.
        public var frameRate: Rational?
        public init(lookup: MediaLookup, renderSize: PixelSize? = nil, frameRate: Rational? = nil) {
            self.lookup = lookup; self.renderSize = renderSize; self.frameRate = frameRate
        }
    }

    /// Reads `bytes` as `format`; every problem is listed, each naming the timeline's item.
    public static func read(_ bytes: [UInt8], format: Format, options: Options) -> Result<ImportedTimeline, CompositionError> {
        let decisions: EditDecisions
        let warnings: [String]
        switch format {
        case .otio:
            let json: JSONValue
            do { json = try JSONParser.parse(bytes) } catch {
                return .failure(CompositionError(problems: [Problem(path: "", message: "not an OpenTimelineIO file: invalid JSON at \(error.line):\(error.column): \(error.message)")]))
            }
            let reader = OTIOReader(lookup: options.lookup)
            let read = reader.read(json)
            guard let read, reader.problems.isEmpty else {
                return .failure(CompositionError(problems: reader.problems.isEmpty ? [Problem(path: "", message: "not a timeline")] : reader.problems))
            }
            decisions = read
            warnings = reader.warnings
        case .edl:
            let reader = EDLReader(lookup: options.lookup, frameRate: options.frameRate)
            let read = reader.read(String(decoding: bytes, as: UTF8.self))
            guard let read, reader.problems.isEmpty else {
                return .failure(CompositionError(problems: reader.problems.isEmpty ? [Problem(path: "", message: "not an EDL")] : reader.problems))
            }
            decisions = read
            warnings = reader.warnings
        }
        let builder = CompositionBuilder(decisions: decisions, renderSize: options.renderSize,
                                         frameDuration: options.frameRate.map { Rational.one / $0 },
                                         isStill: options.lookup.isStill)
        return builder.build().map {
            ImportedTimeline(composition: $0.composition, warnings: warnings, origins: $0.origins)
        }
    }
}

/// A timeline read as a composition.
public struct ImportedTimeline: Sendable {
    /// The composition (docs/composition.md) as JSON.
    public var composition: JSONValue
    /// What was read but is not rendered (markers, disabled items), one line each.
    public var warnings: [String]
    /// Composition JSON path (`tracks[1].segments[0]`, `assets.shotA`) → the timeline item it came from.
    public var origins: [String: ItemOrigin]

    /// The composition as text, laid out for people.
    public var text: String { JSONWriter.text(composition) }

    /// A composition problem named by the timeline item it concerns (when it concerns one), so
    /// `tracks[1].segments[0].sourceRange: ends at …` reads
    /// `tracks.children[0].children[2]: clip "shot A", item 2 of track "V1": sourceRange ends at …`.
    public func relabel(_ problem: Problem) -> Problem {
        let key = origins.keys.filter { k in
            problem.path == k || problem.path.hasPrefix(k + ".") || problem.path.hasPrefix(k + "[")
        }.max { $0.count < $1.count }
        guard let key, let origin = origins[key] else { return problem }
        let detail = problem.path == key ? "" : String(problem.path.dropFirst(key.count)).drop { $0 == "." } + " "
        return Problem(path: origin.path, message: "\(origin.what): \(detail)\(problem.message) (composition \(problem.path))")
    }
}

extension EditRate {
    /// A frame rate as a user writes it: `24`, `25`, `29.97`, `23.976` (decimals follow the NTSC
    /// rule of `exact`) or an exact `N/D` such as `30000/1001`.
    public static func parse(_ text: String) -> Rational? {
        if text.contains("/") {
            guard let r = Rational(parsing: text), r > .zero else { return nil }
            return r
        }
        return Double(text).flatMap(exact)
    }
}
