/// `videoComposition.colorPrimaries`: AVFoundation's `AVVideoColorPrimaries_*` names.
public enum CompositionColorPrimaries: String, Hashable, Sendable, Codable, CaseIterable {
    case itu709 = "ITU_R_709_2"
    case itu2020 = "ITU_R_2020"
    case p3D65 = "P3_D65"
    case smpteC = "SMPTE_C"
    case ebu3213 = "EBU_3213"

    /// The H.273 primaries the output is tagged with (CoreVideo's mapping).
    public var primaries: ColourPrimaries {
        switch self {
        case .itu709: .bt709
        case .itu2020: .bt2020
        case .p3D65: .p3D65
        case .smpteC: .smpte170M
        case .ebu3213: .bt470BG
        }
    }
}

/// `videoComposition.colorTransferFunction`: AVFoundation's `AVVideoTransferFunction_*` names.
public enum CompositionTransferFunction: String, Hashable, Sendable, Codable, CaseIterable {
    case itu709 = "ITU_R_709_2"
    case itu2020 = "ITU_R_2020"
    case sRGB = "IEC_sRGB"
    case linear = "Linear"
    case pq = "SMPTE_ST_2084_PQ"
    case hlg = "ITU_R_2100_HLG"

    public var transfer: TransferFunction {
        switch self {
        case .itu709: .bt709
        case .itu2020: .bt2020_10
        case .sRGB: .sRGB
        case .linear: .linear
        case .pq: .pq
        case .hlg: .hlg
        }
    }
}

/// `videoComposition.colorYCbCrMatrix`: AVFoundation's `AVVideoYCbCrMatrix_*` names.
public enum CompositionYCbCrMatrix: String, Hashable, Sendable, Codable, CaseIterable {
    case itu709 = "ITU_R_709_2"
    case itu601 = "ITU_R_601_4"
    case itu2020 = "ITU_R_2020"

    public var matrix: YCbCrMatrix {
        switch self {
        case .itu709: .bt709
        case .itu601: .smpte170M
        case .itu2020: .bt2020NCL
        }
    }
}

/// The colour of a render: the space the compositor works in and the output is tagged with,
/// and how HDR sources are brought into it.
///
/// An SDR render composites in 8-bit limited-range Y'CbCr of `space.matrix`; every source is
/// converted into `space` as it is decoded, and RGB overlays and colours are taken as R'G'B'
/// of `space` (so `#FF0000` is the output's red). An HDR render (`space` PQ or HLG)
/// composites in 16-bit Y'CbCr and encodes 10 bits (docs/colour.md, "HDR outputs").
public struct OutputColour: Hashable, Sendable, Codable {
    public var space: ColourSpace
    /// Used for sources whose transfer is PQ or HLG.
    public var toneMapping: ToneMapping
    /// The static HDR metadata an HDR output carries; nil for SDR.
    public var hdr: HDRMetadata?

    public init(space: ColourSpace = .bt709, toneMapping: ToneMapping = ToneMapping(), hdr: HDRMetadata? = nil) {
        self.space = space; self.toneMapping = toneMapping; self.hdr = hdr
    }

    /// BT.709, limited range, BT.2390 tone mapping: what a composition without colour keys gets.
    public static let standard = OutputColour()
}
