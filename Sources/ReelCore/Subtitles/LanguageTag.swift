/// A BCP 47 language tag (`en`, `pt-BR`, `zh-Hant-TW`, `yue`) as subtitle tracks take it, and
/// the ISO 639-2 code containers store.
///
/// MP4 and QuickTime keep a three-letter ISO 639-2 code per track (MP4: the terminological,
/// "/T", form). The primary language subtag decides it: a two-letter ISO 639-1 code maps to its
/// ISO 639-2 code (`en` → `eng`, `fr` → `fra`, `de` → `deu`, `pt` → `por`, `zh` → `zho`);
/// region, script and variant subtags have no place in the container and are dropped
/// (`pt-BR` → `por`); a three-letter primary subtag is already ISO 639-2 (or 639-3) and is
/// written as it is. The bibliographic ("/B") form (`fre`, `ger`, `chi`) is kept beside it for
/// containers that want it.
public struct LanguageTag: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The tag as written.
    public var tag: String
    /// ISO 639-2/T (three lower-case letters).
    public var iso639_2T: String
    /// ISO 639-2/B, where it differs from the /T code.
    public var iso639_2B: String?

    public var description: String { tag }

    /// Parses `tag`, or says what is wrong with it.
    public static func parse(_ tag: String) -> Result<LanguageTag, LanguageTagError> {
        let subtags = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard let primary = subtags.first, (2...3).contains(primary.count), primary.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            return .failure(LanguageTagError(message: "\"\(tag)\" is not a BCP 47 language tag: it must start with a two- or three-letter language code, such as \"en\", \"pt-BR\" or \"yue\""))
        }
        for subtag in subtags.dropFirst() where !(1...8).contains(subtag.count) || !subtag.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
            return .failure(LanguageTagError(message: "\"\(tag)\" is not a BCP 47 language tag: \"\(subtag)\" is not a subtag (1 to 8 letters or digits, separated by \"-\")"))
        }
        let code = primary.lowercased()
        if code.count == 3 { return .success(LanguageTag(tag: tag, iso639_2T: code, iso639_2B: nil)) }
        guard let (t, b) = iso639_1[code] else {
            return .failure(LanguageTagError(message: "\"\(primary)\" in \"\(tag)\" is not an ISO 639-1 language code (write the language as in \"en\", \"fr\", \"pt-BR\", or with its three-letter ISO 639-2 code)"))
        }
        return .success(LanguageTag(tag: tag, iso639_2T: t, iso639_2B: b))
    }

    /// ISO 639-1 → (ISO 639-2/T, ISO 639-2/B where it differs), from the ISO 639-2 registry
    /// (Debian's iso-codes data).
    static let iso639_1: [String: (String, String?)] = [
        "aa": ("aar", nil), "ab": ("abk", nil), "ae": ("ave", nil), "af": ("afr", nil), "ak": ("aka", nil), "am": ("amh", nil),
        "an": ("arg", nil), "ar": ("ara", nil), "as": ("asm", nil), "av": ("ava", nil), "ay": ("aym", nil), "az": ("aze", nil),
        "ba": ("bak", nil), "be": ("bel", nil), "bg": ("bul", nil), "bh": ("bih", nil), "bi": ("bis", nil), "bm": ("bam", nil),
        "bn": ("ben", nil), "bo": ("bod", "tib"), "br": ("bre", nil), "bs": ("bos", nil), "ca": ("cat", nil), "ce": ("che", nil),
        "ch": ("cha", nil), "co": ("cos", nil), "cr": ("cre", nil), "cs": ("ces", "cze"), "cu": ("chu", nil), "cv": ("chv", nil),
        "cy": ("cym", "wel"), "da": ("dan", nil), "de": ("deu", "ger"), "dv": ("div", nil), "dz": ("dzo", nil), "ee": ("ewe", nil),
        "el": ("ell", "gre"), "en": ("eng", nil), "eo": ("epo", nil), "es": ("spa", nil), "et": ("est", nil), "eu": ("eus", "baq"),
        "fa": ("fas", "per"), "ff": ("ful", nil), "fi": ("fin", nil), "fj": ("fij", nil), "fo": ("fao", nil), "fr": ("fra", "fre"),
        "fy": ("fry", nil), "ga": ("gle", nil), "gd": ("gla", nil), "gl": ("glg", nil), "gn": ("grn", nil), "gu": ("guj", nil),
        "gv": ("glv", nil), "ha": ("hau", nil), "he": ("heb", nil), "hi": ("hin", nil), "ho": ("hmo", nil), "hr": ("hrv", nil),
        "ht": ("hat", nil), "hu": ("hun", nil), "hy": ("hye", "arm"), "hz": ("her", nil), "ia": ("ina", nil), "id": ("ind", nil),
        "ie": ("ile", nil), "ig": ("ibo", nil), "ii": ("iii", nil), "ik": ("ipk", nil), "io": ("ido", nil), "is": ("isl", "ice"),
        "it": ("ita", nil), "iu": ("iku", nil), "ja": ("jpn", nil), "jv": ("jav", nil), "ka": ("kat", "geo"), "kg": ("kon", nil),
        "ki": ("kik", nil), "kj": ("kua", nil), "kk": ("kaz", nil), "kl": ("kal", nil), "km": ("khm", nil), "kn": ("kan", nil),
        "ko": ("kor", nil), "kr": ("kau", nil), "ks": ("kas", nil), "ku": ("kur", nil), "kv": ("kom", nil), "kw": ("cor", nil),
        "ky": ("kir", nil), "la": ("lat", nil), "lb": ("ltz", nil), "lg": ("lug", nil), "li": ("lim", nil), "ln": ("lin", nil),
        "lo": ("lao", nil), "lt": ("lit", nil), "lu": ("lub", nil), "lv": ("lav", nil), "mg": ("mlg", nil), "mh": ("mah", nil),
        "mi": ("mri", "mao"), "mk": ("mkd", "mac"), "ml": ("mal", nil), "mn": ("mon", nil), "mr": ("mar", nil), "ms": ("msa", "may"),
        "mt": ("mlt", nil), "my": ("mya", "bur"), "na": ("nau", nil), "nb": ("nob", nil), "nd": ("nde", nil), "ne": ("nep", nil),
        "ng": ("ndo", nil), "nl": ("nld", "dut"), "nn": ("nno", nil), "no": ("nor", nil), "nr": ("nbl", nil), "nv": ("nav", nil),
        "ny": ("nya", nil), "oc": ("oci", nil), "oj": ("oji", nil), "om": ("orm", nil), "or": ("ori", nil), "os": ("oss", nil),
        "pa": ("pan", nil), "pi": ("pli", nil), "pl": ("pol", nil), "ps": ("pus", nil), "pt": ("por", nil), "qu": ("que", nil),
        "rm": ("roh", nil), "rn": ("run", nil), "ro": ("ron", "rum"), "ru": ("rus", nil), "rw": ("kin", nil), "sa": ("san", nil),
        "sc": ("srd", nil), "sd": ("snd", nil), "se": ("sme", nil), "sg": ("sag", nil), "si": ("sin", nil), "sk": ("slk", "slo"),
        "sl": ("slv", nil), "sm": ("smo", nil), "sn": ("sna", nil), "so": ("som", nil), "sq": ("sqi", "alb"), "sr": ("srp", nil),
        "ss": ("ssw", nil), "st": ("sot", nil), "su": ("sun", nil), "sv": ("swe", nil), "sw": ("swa", nil), "ta": ("tam", nil),
        "te": ("tel", nil), "tg": ("tgk", nil), "th": ("tha", nil), "ti": ("tir", nil), "tk": ("tuk", nil), "tl": ("tgl", nil),
        "tn": ("tsn", nil), "to": ("ton", nil), "tr": ("tur", nil), "ts": ("tso", nil), "tt": ("tat", nil), "tw": ("twi", nil),
        "ty": ("tah", nil), "ug": ("uig", nil), "uk": ("ukr", nil), "ur": ("urd", nil), "uz": ("uzb", nil), "ve": ("ven", nil),
        "vi": ("vie", nil), "vo": ("vol", nil), "wa": ("wln", nil), "wo": ("wol", nil), "xh": ("xho", nil), "yi": ("yid", nil),
        "yo": ("yor", nil), "za": ("zha", nil), "zh": ("zho", "chi"), "zu": ("zul", nil),    ]
}

/// Why a language tag is refused.
public struct LanguageTagError: Error, Hashable, Sendable {
    public var message: String
}
