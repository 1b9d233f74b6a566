import Foundation
import ReelCore
import ReelMedia
import ReelProtocol

/// The remuxed pieces of finished chunks that the console's preview serves (docs/delivery.md,
/// "Watching a render"), cached in `previews/` and keyed by the chunk result's content hash:
/// `<sha256>.init.mp4` (the init segment, which depends on the stream only) and
/// `<sha256>-<first frame>.m4s` (the fragments, whose decode times depend on where the chunk
/// sits in its job — one result may serve several places). They are made once, on first
/// request, by stream copy (`PreviewRemuxer`), written whole and renamed, so a reader never
/// sees part of one; two requests racing to make the same piece write the same bytes. The
/// sweep removes pieces whose result is gone.
///
/// A ladder chunk's result is an archive of renditions (proto/PROTOCOL.md §4.6), and one archive
/// may serve several jobs with different ladders: the pieces of one of its renditions are named
/// `<sha256>~<rendition>.init.mp4` and `<sha256>~<rendition>-<first frame>.m4s`.
extension CoordinatorStorage {
    func previewInitPath(_ sha256: String, rendition: String? = nil) -> String {
        "\(root)/previews/\(sha256)\(rendition.map { "~" + $0 } ?? "").init.mp4"
    }
    func previewSegmentPath(_ sha256: String, rendition: String? = nil, firstFrame: Int) -> String {
        "\(root)/previews/\(sha256)\(rendition.map { "~" + $0 } ?? "")-\(firstFrame).m4s"
    }

    /// The result hash a preview piece was made from (`<sha256>[~<rendition>].init.mp4`,
    /// `<sha256>[~<rendition>]-N.m4s`); nil for any other name.
    static func previewSource(named name: String) -> String? {
        let hash = String(name.prefix(64))
        guard isValidHash(hash) else { return nil }
        var rest = Substring(name.dropFirst(64))
        if rest.hasPrefix("~") {
            // A rendition's name: a-z, 0-9, _ and - (RenditionLadder.nameCharacters), then the piece's suffix.
            let nameEnd = rest.dropFirst().firstIndex { !RenditionLadder.nameCharacters.contains($0) } ?? rest.endIndex
            var rendition = rest[rest.index(after: rest.startIndex)..<nameEnd]
            rest = rest[nameEnd...]
            // `-N.m4s`: the rendition's name may end in "-digits" too; the frame number is the last one.
            if rest == ".m4s", let dash = rendition.lastIndex(of: "-") {
                rest = Substring(String(rendition[dash...]) + rest)
                rendition = rendition[..<dash]
            }
            guard !rendition.isEmpty else { return nil }
        }
        if rest == ".init.mp4" { return hash }
        guard rest.hasPrefix("-"), rest.hasSuffix(".m4s"), Int(rest.dropFirst().dropLast(4)) != nil else { return nil }
        return hash
    }

    /// The init and media segment of the chunk result `sha256` holding plan frames `frames`,
    /// from the cache or remuxed now from `results/<sha256>`. For a ladder archive, the member
    /// `<rendition>.mp4`, or without `rendition` its smallest member.
    /// - Throws: `ReelProtocolError(.notFound)` when neither the pieces nor the result are stored.
    func previewPieces(sha256: String, rendition: String? = nil, frames: FrameRange, frameDuration: Rational) throws
        -> (initSegment: [UInt8], media: [UInt8]) {
        guard Self.isValidHash(sha256) else { throw ReelProtocolError(.internal, "a chunk result's hash is not a content hash") }
        let initPath = previewInitPath(sha256, rendition: rendition)
        let mediaPath = previewSegmentPath(sha256, rendition: rendition, firstFrame: frames.start)
        if let initData = FileManager.default.contents(atPath: initPath), let media = FileManager.default.contents(atPath: mediaPath) {
            return ([UInt8](initData), [UInt8](media))
        }
        let source = resultPath(sha256)
        guard Self.fileSize(source) != nil else {
            throw ReelProtocolError(.notFound, "the result of chunk \(frames) is no longer stored (its retention ended)")
        }
        // A ladder chunk's result is an archive of its renditions (proto/PROTOCOL.md §4.6): the
        // preview plays the one asked for (the ladder's smallest picture, `JobPreviews`).
        var chunk = source
        if LadderArchive.isArchive(source) {
            let members = try LadderArchive.members(of: source)
            let member = rendition.map { name in members.first { $0.name == "\(name).mp4" } } ?? members.min(by: { $0.size < $1.size })
            guard let member else {
                throw ReelProtocolError(.internal, "the ladder result of chunk \(frames) holds no rendition \(rendition ?? "")")
            }
            chunk = "\(root)/tmp/preview-\(UUID().uuidString)-rendition.mp4"
            try LadderArchive.extract(member, from: source, to: chunk)
        }
        defer { if chunk != source { unlink(chunk) } }
        let pieces = try PreviewRemuxer.remux(chunk: chunk, frames: frames, frameDuration: frameDuration,
                                              scratch: "\(root)/tmp/preview-\(UUID().uuidString).mp4")
        try writeWhole(pieces.initSegment, to: initPath, what: "the preview init segment of \(sha256)")
        try writeWhole(pieces.mediaSegment, to: mediaPath, what: "the preview segment of \(sha256)")
        return (pieces.initSegment, pieces.mediaSegment)
    }

    /// Writes a preview piece whole: to a file in `tmp/`, then renamed, so a reader never sees
    /// part of one.
    private func writeWhole(_ bytes: [UInt8], to path: String, what: String) throws {
        let temporary = "\(root)/tmp/preview-\(UUID().uuidString).part"
        defer { unlink(temporary) }
        guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes)), rename(temporary, path) == 0 else {
            throw ReelProtocolError(.internal, "cannot store \(what): \(String(cString: strerror(errno)))")
        }
    }

    /// With an object store, downloads the result `sha256` into the directory (verified) unless
    /// it, or the pieces made from it for `firstFrame`, are there already: `previewPieces` reads
    /// results as files.
    func fetchResultForPreview(_ sha256: String, rendition: String? = nil, firstFrame: Int) async throws {
        guard isRemote, Self.isValidHash(sha256) else { return }
        if Self.fileSize(previewInitPath(sha256, rendition: rendition)) != nil,
           Self.fileSize(previewSegmentPath(sha256, rendition: rendition, firstFrame: firstFrame)) != nil { return }
        guard Self.fileSize(resultPath(sha256)) == nil else { return }
        _ = try await blobs.download(.result(sha256: sha256), to: resultPath(sha256))
    }

    /// Preview pieces whose result is no longer stored (and names that are no preview piece).
    static func previewsToDelete(_ files: [StoredFile], storedResults: Set<String>) -> [String] {
        files.filter { previewSource(named: $0.name).map { !storedResults.contains($0) } ?? true }.map(\.name).sorted()
    }
}
