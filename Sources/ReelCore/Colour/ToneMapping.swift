/// How an HDR source (PQ or HLG) is brought into an SDR output: `videoComposition.toneMapping`.
///
/// The source is linearised (1.0 = 100 cd/m², SDR reference white), converted to the output's
/// primaries, and then, as ffmpeg's `tonemap` filter does: desaturated towards its luma by
/// `desat`, its brightest component `sig` mapped by the curve, and all three components
/// scaled by `curve(sig) / sig` (so hues are kept).
public struct ToneMapping: Hashable, Sendable, Codable {
    public enum Curve: String, Hashable, Sendable, Codable, CaseIterable {
        /// ITU-R BT.2390's EETF: the source's peak onto SDR white in the PQ domain, with a
        /// Hermite knee (identity below it).
        case bt2390
        /// John Hable's filmic curve (Uncharted 2).
        case hable
        /// Möbius: linear up to `param` (default 0.3), then a smooth roll-off to the peak.
        case mobius
        /// Reinhard: `param` is the contrast at the mid-point (default 0.5).
        case reinhard
        /// Hard clip, after multiplying by `param` (default 1).
        case clip
    }

    public var curve: Curve
    /// The curve's parameter as ffmpeg's `tonemap=param`: nil = the curve's default.
    public var param: Double?
    /// Desaturation strength (ffmpeg's `desat`, default 2): components are pulled towards luma
    /// by how far luma is above this level; 0 turns it off.
    public var desat: Double
    /// The signal peak in units of 100 cd/m² (ffmpeg's `peak`: 10 = 1000 cd/m²); nil = from the
    /// source's metadata (MaxCLL, else the mastering display's peak), else 10.
    public var peak: Double?

    public static let defaultDesat = 2.0

    public init(curve: Curve = .bt2390, param: Double? = nil, desat: Double = ToneMapping.defaultDesat, peak: Double? = nil) {
        self.curve = curve; self.param = param; self.desat = desat; self.peak = peak
    }
}
