/// The static HDR metadata of an HDR10 output (SMPTE ST 2086 and CTA-861.3): the mastering
/// display the programme was graded on, and the programme's light levels. Players use them to
/// map the picture onto displays dimmer than the mastering one.
public struct HDRMetadata: Hashable, Sendable, Codable {
    public var masteringDisplay: MasteringDisplay
    public var contentLightLevel: ContentLightLevel

    public init(masteringDisplay: MasteringDisplay = .p3D65Nits1000, contentLightLevel: ContentLightLevel = .unknown) {
        self.masteringDisplay = masteringDisplay; self.contentLightLevel = contentLightLevel
    }
}

/// `videoComposition.masteringDisplay`: the colour volume of the display the programme was
/// graded on (SMPTE ST 2086), always with a D65 white point.
public struct MasteringDisplay: Hashable, Sendable, Codable {
    /// The display's primaries: `ITU_R_2020` or `P3_D65`.
    public var primaries: CompositionColorPrimaries
    /// Peak luminance in cd/m².
    public var maxLuminance: Double
    /// Black level in cd/m².
    public var minLuminance: Double

    public init(primaries: CompositionColorPrimaries, maxLuminance: Double, minLuminance: Double) {
        self.primaries = primaries; self.maxLuminance = maxLuminance; self.minLuminance = minLuminance
    }

    /// The usual HDR10 grading monitor: P3 primaries, D65, 1000 cd/m² peak, 0.0001 cd/m² black.
    public static let p3D65Nits1000 = MasteringDisplay(primaries: .p3D65, maxLuminance: 1000, minLuminance: 0.0001)

    /// The primaries ST 2086 can describe here (x, y chromaticities).
    public static let describablePrimaries: [CompositionColorPrimaries] = [.itu2020, .p3D65, .itu709]

    /// Green, blue, red and white point as CIE 1931 (x, y), in ST 2086's order.
    public var chromaticities: (green: (Double, Double), blue: (Double, Double), red: (Double, Double), white: (Double, Double))? {
        let d65 = (0.3127, 0.3290)
        switch primaries {
        case .itu2020: return ((0.170, 0.797), (0.131, 0.046), (0.708, 0.292), d65)
        case .p3D65: return ((0.265, 0.690), (0.150, 0.060), (0.680, 0.320), d65)
        case .itu709: return ((0.300, 0.600), (0.150, 0.060), (0.640, 0.330), d65)
        case .smpteC, .ebu3213: return nil
        }
    }

    /// x265's `master-display` string: `G(x,y)B(x,y)R(x,y)WP(x,y)L(max,min)`, chromaticities
    /// in units of 0.00002 and luminances in units of 0.0001 cd/m² (HEVC's SEI units).
    public var x265String: String? {
        guard let c = chromaticities else { return nil }
        func xy(_ p: (Double, Double)) -> String { "(\(Int((p.0 / 0.00002).rounded())),\(Int((p.1 / 0.00002).rounded())))" }
        return "G\(xy(c.green))B\(xy(c.blue))R\(xy(c.red))WP\(xy(c.white))"
            + "L(\(Int((maxLuminance * 10000).rounded())),\(Int((minLuminance * 10000).rounded())))"
    }
}

/// `videoComposition.contentLightLevel`: CTA-861.3's MaxCLL (the brightest pixel of the
/// programme) and MaxFALL (the brightest frame average), in cd/m²; 0 means unknown.
public struct ContentLightLevel: Hashable, Sendable, Codable {
    public var maxCLL: Int
    public var maxFALL: Int

    public init(maxCLL: Int, maxFALL: Int) { self.maxCLL = maxCLL; self.maxFALL = maxFALL }

    public static let unknown = ContentLightLevel(maxCLL: 0, maxFALL: 0)
}
