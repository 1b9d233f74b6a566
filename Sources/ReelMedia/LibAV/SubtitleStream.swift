import CFFmpeg
import ReelCore

/// A timed-text stream of an MP4 or QuickTime file (3GPP timed text, `mov_text`/`tx3g`), or
/// of a WebM file (WebVTT): its label in the container and its samples.
///
/// Each sample is a 16-bit big-endian byte count and the UTF-8 text (3GPP TS 26.245), in a
/// millisecond time base. The sample description is the one FFmpeg's own mov_text encoder
/// writes by default (centred at the bottom, white 16-pixel Arial on black), so players treat
/// Reel's streams as they treat FFmpeg's. libavformat fills the gaps between cues with empty
/// samples.
public struct SubtitleStreamDescription: Sendable, Hashable {
    /// The three-letter ISO 639-2 code the container stores (see `LanguageTag.code(for:)`).
    public var language: String
    /// The handler name players show as the track's title (`SubtitleHandler` when nil).
    public var title: String?
    public var isDefault: Bool

    public init(language: String, title: String?, isDefault: Bool) {
        self.language = language; self.title = title; self.isDefault = isDefault
    }

    /// Samples are timed in milliseconds.
    public static let timeBase = Rational(1, 1000)

    /// The tx3g sample description after its sample-entry header: display flags, justification
    /// (centre, bottom), background colour, text box, default style record (font 1, 16 px,
    /// white) and a font table naming Arial.
    static let sampleDescription: [UInt8] = [
        0x00, 0x00, 0x00, 0x00,                          // displayFlags
        0x01, 0xFF,                                      // horizontal centre, vertical bottom
        0x00, 0x00, 0x00, 0xFF,                          // background RGBA
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // BoxRecord
        0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x10,  // StyleRecord: chars 0–0, font 1, plain, 16 px
        0xFF, 0xFF, 0xFF, 0xFF,                          //   text RGBA
        0x00, 0x00, 0x00, 0x12, 0x66, 0x74, 0x61, 0x62,  // 'ftab', 18 bytes
        0x00, 0x01, 0x00, 0x01, 0x05, 0x41, 0x72, 0x69, 0x61, 0x6C,  // one font: 1, "Arial"
    ]

    /// A sample's bytes: the text, cut at a character boundary if it exceeds the 65,535 bytes a
    /// sample can hold.
    public static func sample(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8)
        if bytes.count > 0xFFFF {
            var end = 0xFFFF
            while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
            bytes.removeSubrange(end...)
        }
        return [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
    }

    /// The samples of `cues` (already one at a time: see `SubtitleCue.flattened`), in the
    /// stream's time base. Times are rounded to the millisecond, the precision of SubRip and
    /// WebVTT; a cue shorter than that after rounding is left out.
    static func webVTTText(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// With `webVTT` (a WebM stream) a sample is the cue's UTF-8 text alone, as Matroska's
    /// WebVTT blocks hold it, with `&`, `<` and `>` escaped as WebVTT cue text requires (the
    /// text is plain: markup was taken out when the file was read).
    public static func packets(_ cues: [SubtitleCue], webVTT: Bool = false) -> [EncodedPacket] {
        cues.compactMap { cue in
            let start = cue.start.scaled(to: 1000), end = cue.end.scaled(to: 1000)
            guard end > start else { return nil }
            let data = webVTT ? Array(webVTTText(cue.text).utf8) : sample(cue.text)
            return EncodedPacket(data: data, pts: start, dts: start, duration: end - start, isKeyframe: true)
        }
    }
}

extension LanguageTag {
    /// The ISO 639-2 code `fileType`'s muxer keeps: MP4 stores the terminological code (`fra`);
    /// QuickTime, as libavformat writes it, keeps only the classic QuickTime language codes
    /// (`quickTimeLanguages`), so the bibliographic form is used where only it is one of them
    /// (`ger` for German). Any other language is written to QuickTime as unspecified.
    /// Matroska (WebM) takes the bibliographic form (`fre`), as its specification asks.
    public func code(for fileType: String) -> String {
        if fileType == "webm" { return iso639_2B ?? iso639_2T }
        guard fileType == "mov" else { return iso639_2T }
        if Self.quickTimeLanguages.contains(iso639_2T) { return iso639_2T }
        if let b = iso639_2B, Self.quickTimeLanguages.contains(b) { return b }
        return iso639_2T
    }

    /// The three-letter codes of QuickTime's classic (Macintosh) language list as libavformat
    /// maps them (`mov_mdhd_language_map`).
    static let quickTimeLanguages: Set<String> = [
        "eng", "fra", "ger", "ita", "dut", "sve", "spa", "dan", "por", "nor", "heb", "jpn", "ara", "fin", "gre", "ice",
        "mlt", "tur", "chi", "urd", "hin", "tha", "kor", "lit", "pol", "hun", "est", "lav", "rus", "iri", "alb", "ron",
        "ces", "slk", "slv", "yid", "mac", "bul", "ukr", "bel", "uzb", "kaz", "aze", "arm", "geo", "mol", "kir", "tgk",
        "tuk", "mon", "pus", "kur", "kas", "snd", "tib", "nep", "san", "mar", "ben", "asm", "guj", "ori", "mal", "kan",
        "tam", "tel", "bur", "khm", "lao", "vie", "ind", "tgl", "may", "amh", "tir", "orm", "som", "swa", "run", "mlg",
        "epo", "wel", "baq", "cat", "lat", "que", "grn", "aym", "tat", "uig", "dzo", "jav",
    ]
}
