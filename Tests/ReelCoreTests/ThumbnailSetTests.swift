import Testing
@testable import ReelCore
import ReelThreadTesting

/// The times, sizes, contact-sheet grid and WebVTT track of `reel thumbnail`.
@Suite(.blocking) struct ThumbnailSetTests {
    @Test func timesAreSortedOnceEachWithEveryMultipleBeforeTheEnd() {
        #expect(ThumbnailSet.times(at: [3, 1, 1], every: 2, duration: 5) == [0, 1, 2, 3, 4])
        #expect(ThumbnailSet.times(at: [Rational(1, 3)], every: nil, duration: 5) == [Rational(1, 3)])
        #expect(ThumbnailSet.times(at: [], every: Rational(5, 2), duration: 5) == [0, Rational(5, 2)], "the end itself is not a frame")
        #expect(ThumbnailSet.count(every: Rational(5, 2), duration: 5) == 2 && ThumbnailSet.count(every: 2, duration: 5) == 3)
    }

    @Test func picturesShrinkToFitAndNeverGrow() {
        let hd = PixelSize(width: 1920, height: 1080)
        #expect(ThumbnailSet.fitting(hd, within: PixelSize(width: 320, height: 320)) == PixelSize(width: 320, height: 180))
        #expect(ThumbnailSet.fitting(hd, within: PixelSize(width: 320, height: 0)) == PixelSize(width: 320, height: 180))
        #expect(ThumbnailSet.fitting(hd, within: PixelSize(width: 0, height: 100)) == PixelSize(width: 178, height: 100))
        #expect(ThumbnailSet.fitting(PixelSize(width: 1080, height: 1920), within: PixelSize(width: 320, height: 320)) == PixelSize(width: 180, height: 320))
        #expect(ThumbnailSet.fitting(PixelSize(width: 160, height: 90), within: PixelSize(width: 320, height: 180)) == PixelSize(width: 160, height: 90))
        #expect(ThumbnailSet.fitting(hd, within: nil) == hd)
        #expect(ThumbnailSet.fitting(PixelSize(width: 4000, height: 2), within: PixelSize(width: 100, height: 0)) == PixelSize(width: 100, height: 1))
    }

    @Test func aContactSheetFillsRowsLeftToRight() {
        let sheet = ContactSheet(tile: PixelSize(width: 160, height: 90), count: 12, columns: 5)
        #expect(sheet.rows == 3 && sheet.size == PixelSize(width: 800, height: 270))
        #expect(sheet.frame(of: 0) == (0, 0, 160, 90) && sheet.frame(of: 7) == (320, 90, 160, 90) && sheet.frame(of: 11) == (160, 180, 160, 90))
        let strip = ContactSheet(tile: PixelSize(width: 64, height: 48), count: 3, columns: 10)
        #expect(strip.columns == 3 && strip.rows == 1 && strip.size == PixelSize(width: 192, height: 48))
    }

    @Test func theWebVTTTrackPointsEachTimeAtItsTile() {
        let sheet = ContactSheet(tile: PixelSize(width: 64, height: 48), count: 3, columns: 2)
        let vtt = WebVTTThumbnails.document(times: [0, 2, Rational(7, 2)], end: Rational(11, 2), sheet: sheet, imageName: "sheet.jpg")
        #expect(vtt == """
            WEBVTT

            00:00:00.000 --> 00:00:02.000
            sheet.jpg#xywh=0,0,64,48

            00:00:02.000 --> 00:00:03.500
            sheet.jpg#xywh=64,0,64,48

            00:00:03.500 --> 00:00:05.500
            sheet.jpg#xywh=0,48,64,48

            """)
        #expect(WebVTTThumbnails.timestamp(Rational(3_723_045_600, 1_000_000)) == "01:02:03.045")
        #expect(WebVTTThumbnails.timestamp(Rational(1, 3)) == "00:00:00.333")
        #expect(WebVTTThumbnails.timestamp(Rational(100 * 3600)) == "100:00:00.000")
    }

    @Test func aSeriesSplitsTilesOverFullSheetsAndTheTrackNamesEachTilesSheet() {
        let series = SheetSeries(tile: PixelSize(width: 16, height: 9), count: 7, columns: 2, rowsPerSheet: 1)
        #expect(series.sheets.map(\.count) == [2, 2, 2, 1])
        #expect(series.sheets.last!.size == PixelSize(width: 16, height: 9))
        #expect(series.location(of: 0).sheet == 0 && series.location(of: 0).frame == (0, 0, 16, 9))
        #expect(series.location(of: 5).sheet == 2 && series.location(of: 5).frame == (16, 0, 16, 9))
        #expect(series.location(of: 6).sheet == 3 && series.location(of: 6).frame == (0, 0, 16, 9))
        let times = (0..<7).map { Rational($0 * 2) }
        let vtt = WebVTTThumbnails.document(times: times, end: 13, series: series) { "t-\($0 + 1).jpg" }
        let cues = vtt.split(separator: "\n").filter { $0.contains("#xywh=") }
        #expect(cues == ["t-1.jpg#xywh=0,0,16,9", "t-1.jpg#xywh=16,0,16,9", "t-2.jpg#xywh=0,0,16,9", "t-2.jpg#xywh=16,0,16,9",
                         "t-3.jpg#xywh=0,0,16,9", "t-3.jpg#xywh=16,0,16,9", "t-4.jpg#xywh=0,0,16,9"])
        #expect(vtt.hasSuffix("00:00:12.000 --> 00:00:13.000\nt-4.jpg#xywh=0,0,16,9\n"))
    }
}
