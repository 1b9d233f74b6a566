import Foundation
import ReelCore

/// Scrubbing thumbnails beside an HLS ladder's master playlist: one picture at the start of
/// every segment, tiled into JPEG contact sheets `thumbnails-1.jpg`, `thumbnails-2.jpg`, … (at
/// most 10 × 10 tiles each, so a long programme never makes one huge picture) and
/// `thumbnails.vtt`, a WebVTT thumbnails track whose cues point at the tiles with `#xywh=`
/// fragments, as video.js, Plyr and JW Player read them for scrubbing previews.
///
/// Every segment starts with an IDR frame, so each tile is the first frame of a segment
/// decoded on its own (the rendition's init segment and that one fragment): the finaliser
/// decodes one or two frames per segment, never the whole rendition, and nothing is rendered
/// again. The pictures come from the smallest rendition at least `tileWidth` wide (else the
/// widest), shrunk to `tileWidth` with the aspect ratio kept (never enlarged).
extension Finaliser {
    public static let thumbnailTrackName = "thumbnails.vtt"
    static let thumbnailTileWidth = 160
    static let thumbnailColumns = 10, thumbnailRowsPerSheet = 10

    static func thumbnailSheetName(_ index: Int) -> String { "thumbnails-\(index + 1).jpg" }

    /// Writes the sheets and the track into `work` (where the renditions' folders are
    /// packaged); returns the names written, to move into place with the rest.
    static func writeThumbnails(_ plan: RenderPlan, ladder: RenditionLadder, tracks: [PackagedTrack], into work: URL) throws -> [String] {
        let renditions = zip(ladder.renditions, tracks).sorted { $0.0.size.width < $1.0.size.width }
        guard let (rendition, track) = renditions.first(where: { $0.0.size.width >= thumbnailTileWidth }) ?? renditions.last else { return [] }
        let tile = ThumbnailSet.fitting(rendition.size, within: PixelSize(width: thumbnailTileWidth, height: 0))
        let series = SheetSeries(tile: tile, count: track.segments.count, columns: thumbnailColumns, rowsPerSheet: thumbnailRowsPerSheet)

        let folder = work.appendingPathComponent(track.folder)
        let initSegment = try Data(contentsOf: folder.appendingPathComponent("init.mp4"))
        let single = work.appendingPathComponent(".thumbnail-segment.mp4")
        defer { try? FileManager.default.removeItem(at: single) }
        var tiles: [RGBPicture] = []
        for segment in track.segments {
            try (initSegment + Data(contentsOf: folder.appendingPathComponent(segment.name))).write(to: single)
            let first = try VideoFrameSource(path: single.path).frame(at: .zero)
            tiles.append(try Thumbnails.scaled(try Thumbnails.picture(first, matrix: OutputColour.standard.space.matrix), to: tile))
        }

        var names: [String] = []
        for (index, sheet) in series.sheets.enumerated() {
            let start = index * series.tilesPerSheet
            let name = thumbnailSheetName(index)
            try Thumbnails.write(Thumbnails.contactSheet(Array(tiles[start..<(start + sheet.count)]), sheet: sheet), as: .jpeg,
                                 to: work.appendingPathComponent(name).path)
            names.append(name)
        }
        // Segment i starts at frame i × segmentFrames: chunks are whole segments.
        let times = (0..<track.segments.count).map { Rational(Int64($0 * ladder.segmentFrames)) * plan.frameDuration }
        try write(WebVTTThumbnails.document(times: times, end: plan.duration, series: series, imageName: thumbnailSheetName),
                  to: work.appendingPathComponent(thumbnailTrackName))
        return names + [thumbnailTrackName]
    }
}
