/// The colour description of a picture, as ITU-T H.273 code points: the numbers H.264/HEVC
/// VUI, the MP4/MOV `colr` box, Matroska's `Colour` element and libavutil's `AVCOL_*`
/// constants all use. Reel's conversions (zimg) take the same numbers.

/// Colour primaries (H.273 table 2).
public enum ColourPrimaries: Int, Hashable, Sendable, Codable, CaseIterable {
    case bt709 = 1
    case bt470M = 4
    /// BT.470 System B/G, BT.601 625-line: AVFoundation's `EBU_3213`.
    case bt470BG = 5
    /// SMPTE 170M, BT.601 525-line: AVFoundation's `SMPTE_C`.
    case smpte170M = 6
    case smpte240M = 7
    case film = 8
    case bt2020 = 9
    case smpte428 = 10
    /// DCI-P3 (SMPTE RP 431-2).
    case dciP3 = 11
    /// Display P3 (SMPTE EG 432-1): AVFoundation's `P3_D65`.
    case p3D65 = 12
    /// EBU Tech. 3213-E (JEDEC P22), not AVFoundation's `EBU_3213`.
    case jedecP22 = 22

    /// libavutil's name (`av_color_primaries_name`), as ffprobe prints it.
    public var name: String {
        switch self {
        case .bt709: "bt709"
        case .bt470M: "bt470m"
        case .bt470BG: "bt470bg"
        case .smpte170M: "smpte170m"
        case .smpte240M: "smpte240m"
        case .film: "film"
        case .bt2020: "bt2020"
        case .smpte428: "smpte428"
        case .dciP3: "smpte431"
        case .p3D65: "smpte432"
        case .jedecP22: "ebu3213"
        }
    }

    /// Standard-definition primaries differ from BT.709's by a few code values at full
    /// saturation: Reel treats them as BT.709's, as ffmpeg, broadcast up-converters and most
    /// editors do (converting them would shift the look SD footage is known by). Wide gamuts
    /// (BT.2020, P3) are converted.
    public var gamut: ColourPrimaries {
        switch self {
        case .bt470M, .bt470BG, .smpte170M, .smpte240M, .jedecP22: .bt709
        default: self
        }
    }
}

/// Transfer characteristics (H.273 table 3).
public enum TransferFunction: Int, Hashable, Sendable, Codable, CaseIterable {
    case bt709 = 1
    case gamma22 = 4
    case gamma28 = 5
    case smpte170M = 6
    case smpte240M = 7
    case linear = 8
    case log100 = 9
    case log316 = 10
    case iec61966_2_4 = 11
    /// sRGB (IEC 61966-2-1).
    case sRGB = 13
    case bt2020_10 = 14
    case bt2020_12 = 15
    /// SMPTE ST 2084 (PQ): HDR.
    case pq = 16
    /// ARIB STD-B67 (HLG): HDR.
    case hlg = 18

    public var name: String {
        switch self {
        case .bt709: "bt709"
        case .gamma22: "bt470m"
        case .gamma28: "bt470bg"
        case .smpte170M: "smpte170m"
        case .smpte240M: "smpte240m"
        case .linear: "linear"
        case .log100: "log100"
        case .log316: "log316"
        case .iec61966_2_4: "iec61966-2-4"
        case .sRGB: "iec61966-2-1"
        case .bt2020_10: "bt2020-10"
        case .bt2020_12: "bt2020-12"
        case .pq: "smpte2084"
        case .hlg: "arib-std-b67"
        }
    }

    /// PQ and HLG: high dynamic range signals, tone-mapped into an SDR output.
    public var isHighDynamicRange: Bool { self == .pq || self == .hlg }

    /// Whether code values are the same picture as BT.709's gamma: the SDR video transfers and
    /// sRGB, which players show alike. Reel keeps such code values as they are between
    /// sources and output instead of converting through linear light.
    public var isVideoGamma: Bool {
        switch self {
        case .bt709, .smpte170M, .bt2020_10, .bt2020_12, .sRGB, .gamma22, .gamma28, .smpte240M, .iec61966_2_4: true
        default: false
        }
    }
}

/// Matrix coefficients (H.273 table 4): how Y'CbCr is formed from R'G'B'.
public enum YCbCrMatrix: Int, Hashable, Sendable, Codable, CaseIterable {
    /// The samples are R'G'B' (G, B, R planes).
    case identity = 0
    case bt709 = 1
    case fcc = 4
    /// BT.601 625-line (the same numbers as `smpte170M`).
    case bt470BG = 5
    /// BT.601 525-line: AVFoundation's `ITU_R_601_4`.
    case smpte170M = 6
    case smpte240M = 7
    case yCgCo = 8
    /// BT.2020 non-constant luminance.
    case bt2020NCL = 9
    case bt2020CL = 10

    public var name: String {
        switch self {
        case .identity: "gbr"
        case .bt709: "bt709"
        case .fcc: "fcc"
        case .bt470BG: "bt470bg"
        case .smpte170M: "smpte170m"
        case .smpte240M: "smpte240m"
        case .yCgCo: "ycgco"
        case .bt2020NCL: "bt2020nc"
        case .bt2020CL: "bt2020c"
        }
    }

    /// The luma weights (Kr, Kg, Kb) of a matrix built from them; nil for identity and YCgCo.
    public var lumaWeights: (r: Double, g: Double, b: Double)? {
        switch self {
        case .identity, .yCgCo: nil
        case .bt709: (0.2126, 0.7152, 0.0722)
        case .fcc: (0.30, 0.59, 0.11)
        case .bt470BG, .smpte170M: (0.299, 0.587, 0.114)
        case .smpte240M: (0.212, 0.701, 0.087)
        case .bt2020NCL, .bt2020CL: (0.2627, 0.6780, 0.0593)
        }
    }
}

/// Quantisation range of the samples.
public enum ColourRange: String, Hashable, Sendable, Codable, CaseIterable {
    /// Studio range: Y' 16…235, Cb/Cr 16…240 in 8 bits (ffmpeg's `tv`).
    case limited
    /// Full range: 0…255 (ffmpeg's `pc`, JPEG).
    case full

    public var name: String { self == .limited ? "tv" : "pc" }
}
