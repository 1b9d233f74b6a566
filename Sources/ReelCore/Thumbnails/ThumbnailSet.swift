/// What a set of thumbnails shows and how it is laid out (`reel thumbnail`), as pure functions:
/// the times, the size of each picture, the contact sheet's grid and the WebVTT track that maps
/// times to the sheet's tiles (as players read it for scrubbing previews).
public enum ThumbnailSet {
    /// The times to show, in order: every `at`, and every multiple of `every` before `duration`
    /// (from 0), sorted, each once. AVAssetImageGenerator's requested times, with `every` as
    /// the usual way to ask for a strip.
    public static func times(at: [Rational], every: Rational?, duration: Rational) -> [Rational] {
        var times = Set(at)
        if let every, every > .zero {
            var t = Rational.zero
            while t < duration {
                times.insert(t)
                t += every
            }
        }
        return times.sorted()
    }

    /// How many times `every` gives before `duration` (to refuse an absurd request before
    /// making the list).
    public static func count(every: Rational, duration: Rational) -> Int64 {
        guard every > .zero, duration > .zero else { return 0 }
        return Int64(duration.ceilDiv(every))
    }

    /// `size` scaled down to fit within `maximum`, aspect ratio kept (AVAssetImageGenerator's
    /// `maximumSize`): never scaled up; a 0 in `maximum` leaves that side free. The other side is
    /// rounded to the nearest pixel, at least 1.
    public static func fitting(_ size: PixelSize, within maximum: PixelSize?) -> PixelSize {
        guard let maximum, size.width > 0, size.height > 0 else { return size }
        var scale = Rational.one
        if maximum.width > 0 { scale = min(scale, Rational(Int64(maximum.width), Int64(size.width))) }
        if maximum.height > 0 { scale = min(scale, Rational(Int64(maximum.height), Int64(size.height))) }
        guard scale < .one else { return size }
        func side(_ n: Int) -> Int { max(1, Int((scale * n).rounded)) }
        return PixelSize(width: side(size.width), height: side(size.height))
    }
}

/// A contact sheet: `count` tiles of one size in rows of `columns`, left to right then top to
/// bottom, in time order, with no gap between tiles.
public struct ContactSheet: Sendable, Hashable {
    public var tile: PixelSize
    public var count: Int
    public var columns: Int

    /// `columns` is capped to `count` (a short strip is one row).
    public init(tile: PixelSize, count: Int, columns: Int) {
        precondition(count > 0 && columns > 0, "a contact sheet needs tiles and columns")
        self.tile = tile; self.count = count; self.columns = min(columns, count)
    }

    public var rows: Int { (count + columns - 1) / columns }
    public var size: PixelSize { PixelSize(width: tile.width * columns, height: tile.height * rows) }

    /// Where tile `index` (0-based) lies in the sheet, in pixels.
    public func frame(of index: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        (index % columns * tile.width, index / columns * tile.height, tile.width, tile.height)
    }
}

/// Tiles split in order over several contact sheets of at most `columns × rowsPerSheet` tiles
/// each, so that a long programme's thumbnails never make one picture too large for players
/// and image decoders. Every sheet but the last is full.
public struct SheetSeries: Sendable, Hashable {
    public var tile: PixelSize
    public var count: Int
    public var columns: Int
    public var rowsPerSheet: Int

    public init(tile: PixelSize, count: Int, columns: Int, rowsPerSheet: Int) {
        precondition(count > 0 && columns > 0 && rowsPerSheet > 0, "a sheet series needs tiles, columns and rows")
        self.tile = tile; self.count = count; self.columns = columns; self.rowsPerSheet = rowsPerSheet
    }

    public var tilesPerSheet: Int { columns * rowsPerSheet }

    /// The sheets in order (the last may hold fewer tiles, and fewer columns if it holds fewer
    /// than one row).
    public var sheets: [ContactSheet] {
        stride(from: 0, to: count, by: tilesPerSheet).map {
            ContactSheet(tile: tile, count: min(tilesPerSheet, count - $0), columns: columns)
        }
    }

    /// Which sheet tile `index` (0-based, over all sheets) is on, and where on it.
    public func location(of index: Int) -> (sheet: Int, frame: (x: Int, y: Int, width: Int, height: Int)) {
        let sheet = index / tilesPerSheet
        return (sheet, sheets[sheet].frame(of: index % tilesPerSheet))
    }
}

/// A WebVTT thumbnails track for contact sheets: one cue per tile, from its time to the next
/// tile's (the last to the end of the media), whose text is the sheet's name with a
/// `#xywh=x,y,w,h` media fragment — what video.js, Plyr, JW Player and others read for
/// scrubbing previews.
public enum WebVTTThumbnails {
    public static func document(times: [Rational], end: Rational, sheet: ContactSheet, imageName: String) -> String {
        precondition(times.count == sheet.count, "one time per tile")
        return document(times: times, end: end) { index in (imageName, sheet.frame(of: index)) }
    }

    /// Tiles over several sheets: tile `i` is on the sheet named `imageName(sheet)`.
    public static func document(times: [Rational], end: Rational, series: SheetSeries, imageName: (Int) -> String) -> String {
        precondition(times.count == series.count, "one time per tile")
        let sheets = series.sheets
        return document(times: times, end: end) { index in
            let sheet = index / series.tilesPerSheet
            return (imageName(sheet), sheets[sheet].frame(of: index % series.tilesPerSheet))
        }
    }

    private static func document(times: [Rational], end: Rational,
                                 tile: (Int) -> (image: String, frame: (x: Int, y: Int, width: Int, height: Int))) -> String {
        var text = "WEBVTT\n"
        for (index, start) in times.enumerated() {
            let stop = index + 1 < times.count ? times[index + 1] : max(end, start)
            let (image, f) = tile(index)
            text += "\n\(timestamp(start)) --> \(timestamp(stop))\n\(image)#xywh=\(f.x),\(f.y),\(f.width),\(f.height)\n"
        }
        return text
    }

    /// `HH:MM:SS.mmm`, the time rounded down to the millisecond.
    public static func timestamp(_ time: Rational) -> String {
        let ms = max(0, (time * 1000).floor)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let millis = ms % 1000
        return "\(two(ms / 3_600_000)):\(two(ms / 60_000 % 60)):\(two(ms / 1000 % 60)).\(millis < 10 ? "00" : millis < 100 ? "0" : "")\(millis)"
    }
}
