import Foundation
import Synchronization
import Testing
import ReelThreadTesting

/// A batch of 200 rows of a template no other test uses: a name (text), a photo, the name's
/// colour and a voice-over of a different length in each row. Every output is read back by
/// independent tools: its text by OCR (tesseract), its photo against the row's own file
/// (PSNR, ffmpeg decoding both), its colour, and its length against its voice-over's.
/// Needs `REEL_TEST_DATABASE_URL`.
@Suite(.database, .blocking) struct HeldOutBatchTests {
    static let rowCount = 200
    static let width = 320, height = 300, photoWidth = 160, photoHeight = 90

    /// 320x300 at 25 fps, 1 s GOPs. For the first 0.8 s the photo (16:9, fitted to the width
    /// by the default instruction: 320x180 from y = 60); the name in the row's colour below it
    /// and two full blocks (█, solid) in that colour above it, the whole time, on black; the
    /// sound is the voice-over alone, whose length (no `duration`) sets the variant's.
    static let template = #"""
    {"formatVersion": 1,
     "variables": {"name": {"type": "text", "maxLength": 16}, "photo": {"type": "asset"}, "ink": {"type": "color"},
                   "voice": {"type": "asset"}},
     "assets": {"photo": {"url": "{{photo}}"}, "voice": {"url": "{{voice}}"}},
     "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "photo", "at": 0, "duration": "4/5"}]},
                {"id": 2, "mediaType": "audio", "segments": [{"asset": "voice", "at": 0}]}],
     "videoComposition": {"renderSize": {"width": 320, "height": 300}, "frameDuration": "1/25",
       "overlays": [{"text": "\u2588\u2588", "fontSize": 40, "color": "{{ink}}", "frame": {"x": 8, "y": 4, "width": 120, "height": 52}},
                    {"text": "{{name}}", "fontSize": 36, "color": "{{ink}}", "frame": {"x": 8, "y": 244, "width": 304, "height": 50}}]},
     "export": {"video": {"gopDuration": 1, "x264Preset": "ultrafast"}}}
    """#

    static let words = ["ALPHA", "BRAVO", "CHARLIE", "DELTA", "ECHO", "FOXTROT", "GOLF", "HOTEL", "INDIA", "JULIET",
                        "KILO", "LIMA", "MIKE", "NOVEMBER", "OSCAR", "PAPA", "QUEBEC", "ROMEO", "SIERRA", "TANGO"]

    struct Row {
        var number: Int
        var name: String { "\(HeldOutBatchTests.words[(number * 7) % HeldOutBatchTests.words.count]) \(number)" }
        /// A light colour of the row's own, so the name reads on black.
        var colour: [Int] { [(number * 37) % 128 + 128, (number * 59) % 128 + 128, (number * 83) % 128 + 128] }
        var hex: String { "#" + colour.map { String(format: "%02X", $0) }.joined() }
        /// The voice-over's length in frames of 1/25 s: 20 to 39 (0.8 s to 1.56 s).
        var frames: Int { 20 + (number * 11) % 20 }
        var photo: String { String(format: "photo%03d.png", number) }
        var voice: String { String(format: "voice%03d.wav", number) }
        var id: String { String(format: "r%03d", number) }
    }

    static let rows = (1...rowCount).map(Row.init)

    /// A mono 16-bit WAV of a 330 Hz tone, `frames` / 25 s long.
    static func wav(frames: Int) -> Data {
        let samples = 48_000 * frames / 25
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("RIFF".utf8)); append(UInt32(36 + 2 * samples)); data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(16)); append(UInt16(1)); append(UInt16(1)); append(UInt32(48_000)); append(UInt32(96_000)); append(UInt16(2)); append(UInt16(16))
        data.append(contentsOf: Array("data".utf8)); append(UInt32(2 * samples))
        for i in 0..<samples { append(Int16(8_000 * sin(2 * Double.pi * 330 * Double(i) / 48_000))) }
        return data
    }

    /// The template, 200 distinct photos (one ffmpeg command: smooth gradients whose base
    /// colour changes with the frame number), 200 voice-overs and the rows file.
    static func fixture() throws -> URL {
        let dir = try Media.tempDirectory()
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=black:size=\(photoWidth)x\(photoHeight):rate=25",
                          "-vf", "format=rgb24,geq=r='mod(N*53\\,200)+28+X*0.15':g='mod(N*97\\,200)+28+Y*0.25':b='mod(N*151\\,200)+28+(X+Y)*0.1'",
                          "-frames:v", "\(rowCount)", "-start_number", "1", dir.appendingPathComponent("photo%03d.png").path])
        for row in rows { try wav(frames: row.frames).write(to: dir.appendingPathComponent(row.voice)) }
        try template.write(to: dir.appendingPathComponent("card.json"), atomically: true, encoding: .utf8)
        let csv = "id,name,photo,ink,voice\n" + rows.map { "\($0.id),\($0.name),\($0.photo),\($0.hex),\($0.voice)\n" }.joined()
        try csv.write(to: dir.appendingPathComponent("rows.csv"), atomically: true, encoding: .utf8)
        return dir
    }

    /// What one output shows, measured: its frame count, its sound's length, the text OCR reads
    /// in the name's band, its photo region's PSNR against the row's photo and against the next
    /// row's, and the colour of the blocks.
    struct Reading: Sendable {
        var frames = 0, audioSeconds = 0.0, text = "", psnr = 0.0, psnrOfNext = 0.0, ink: [Double] = []
        var problem: String?
    }

    /// Runs on any thread (no expectations here: the test checks the readings afterwards).
    /// `photos`: every row's photo as R'G'B' scaled by ffmpeg to the 320x180 the render shows it at.
    static func read(_ row: Row, in dir: URL, photos: [[UInt8]]) -> Reading {
        var reading = Reading()
        do {
            let output = dir.appendingPathComponent("out/\(row.id).mp4").path
            reading.frames = try Media.framePTS(output).count
            reading.audioSeconds = Double(try Media.audioSamples(output, channels: 1).count) / 48_000
            // The frame at 0.4 s in R'G'B', as ffmpeg decodes the output, and the name's band of it
            // for tesseract, which reads one line: scaled up twice, dark on light, with a margin.
            let bandPNG = dir.appendingPathComponent("band-\(row.id).png").path
            let decoded = try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", output, "-filter_complex",
                                                   "[0:v]select=eq(n\\,10),split[frame][b];[b]crop=\(width):60:0:240,scale=\(2 * width):120,"
                                                   + "format=gray,negate,pad=iw+40:ih+40:20:20:white[band]",
                                                   "-map", "[frame]", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-",
                                                   "-map", "[band]", "-frames:v", "1", bandPNG])
            let frame = [UInt8](decoded.stdout)
            guard frame.count == width * height * 3 else { throw Media.Failure(description: "no frame 10 in \(output)") }
            // The photo as the render shows it (rows 60..<240), against the row's file and the next row's.
            let shown = Array(frame[(60 * width * 3)..<(240 * width * 3)])
            reading.psnr = Media.psnr(shown, photos[row.number - 1])
            reading.psnrOfNext = Media.psnr(shown, photos[row.number % rowCount])
            // The colour: the median of the top band's bright pixels, which are the blocks' (their
            // insides outnumber their edges, which blend with the black).
            let band = (0..<60).flatMap { y in (0..<width).map { x in Array(frame[((y * width + x) * 3)..<((y * width + x) * 3 + 3)]) } }
            let brightest = band.map { $0.reduce(0) { $0 + Int($1) } }.max() ?? 0
            let blocks = band.filter { $0.reduce(0) { $0 + Int($1) } * 2 >= brightest }
            reading.ink = (0..<3).map { c in blocks.isEmpty ? 0 : Double(blocks.map { $0[c] }.sorted()[blocks.count / 2]) }
            // One thread each (OpenMP's default of one a core only makes two side by side wait on each other).
            let ocr = try Media.run("tesseract", [bandPNG, "stdout", "--psm", "7", "-c", "tessedit_char_whitelist=ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 "],
                                    environment: ["OMP_THREAD_LIMIT": "1"])
            reading.text = String(decoding: ocr.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            reading.problem = "\(error)"
        }
        return reading
    }

    @Test func twoHundredRowsEachShowItsNamePhotoAndColourAndLastAsLongAsItsVoiceOver() throws {
        let dir = try Self.fixture()
        let database = try FreshDatabase.url(prefix: "batch")
        let started = Date()
        let run = try Media.run(Media.reel, ["batch", "card.json", "rows.csv", "-o", "out/{{id}}.mp4", "--agents", "2", "--jobs", "4",
                                             "--chunk-seconds", "1", "--encoder-threads", "1", "--database", database, "--quiet"],
                                allowFailure: true, currentDirectory: dir)
        try #require(run.status == 0, "reel batch: \(run.stderr)")
        #expect(String(decoding: run.stdout, as: UTF8.self).contains("\(Self.rowCount) rows: \(Self.rowCount) done, 0 failed, 0 invalid"))

        let rendered = Date()
        print("held-out batch: \(Self.rowCount) rows rendered in \(Int(rendered.timeIntervalSince(started))) s")

        // Each output measured by ffmpeg, ffprobe and tesseract, two at a time; the photos
        // scaled by ffmpeg as the render scales them (fitted to 320 wide), in one command.
        let photos = try Media.rgbFrames(dir.appendingPathComponent("photo%03d.png").path, width: Self.width, height: 180,
                                         filter: "scale=\(Self.width):180:flags=bicubic")
        try #require(photos.count == Self.rowCount)
        let readings = Mutex([Reading](repeating: Reading(), count: Self.rowCount))
        DispatchQueue.concurrentPerform(iterations: Self.rowCount) { i in
            let reading = Self.read(Self.rows[i], in: dir, photos: photos)
            readings.withLock { $0[i] = reading }
        }
        let manifest = try TemplateBatchTests.manifest(dir)
        try #require(manifest.count == Self.rowCount)
        let measured = readings.withLock { $0 }.filter { $0.problem == nil }
        print("held-out batch: read back in \(Int(Date().timeIntervalSince(rendered))) s; photo PSNR \(measured.map(\.psnr).min() ?? 0)–\(measured.map(\.psnr).max() ?? 0) dB, "
              + "next row's at most \(measured.map(\.psnrOfNext).max() ?? 0) dB; colour off by at most "
              + "\(zip(Self.rows, readings.withLock { $0 }).flatMap { row, r in zip(r.ink, row.colour).map { abs($0 - Double($1)) } }.max() ?? 0)")
        var misread: [String] = []
        for (row, reading) in zip(Self.rows, readings.withLock { $0 }) {
            guard reading.problem == nil else { Issue.record("row \(row.number): \(reading.problem!)"); continue }
            // Its length is its voice-over's, to the frame, in the picture, the sound and the manifest.
            #expect(reading.frames == row.frames, "row \(row.number): \(reading.frames) frames, its voice-over \(row.frames)")
            #expect(abs(reading.audioSeconds - Double(row.frames) / 25) < 0.03, "row \(row.number): \(reading.audioSeconds) s of sound")
            #expect(manifest[row.number - 1]["durationSeconds"] as? Double == Double(row.frames) / 25, "row \(row.number): \(manifest[row.number - 1])")
            // Its own photo, not the next row's.
            #expect(reading.psnr >= 35, "row \(row.number): its photo at \(reading.psnr) dB")
            #expect(reading.psnrOfNext < 30, "row \(row.number): the next row's photo at \(reading.psnrOfNext) dB")
            // Its colour (8-bit R'G'B' through 4:2:0 Y'CbCr and back).
            #expect(zip(reading.ink, row.colour).allSatisfy { abs($0 - Double($1)) <= 4 }, "row \(row.number): blocks in \(reading.ink), its colour \(row.colour)")
            if reading.text != row.name { misread.append("row \(row.number): \(reading.text.debugDescription) for \(row.name.debugDescription)") }
        }
        // Its name, as tesseract reads it.
        #expect(misread.isEmpty, "\(misread.count) names misread: \(misread.prefix(10))")
    }
}
