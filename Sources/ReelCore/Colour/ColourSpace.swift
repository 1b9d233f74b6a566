/// A complete colour description: what a picture's samples mean. Sources get one from their
/// tags (`ColourTags.resolved`), an output from the composition (`OutputColour`).
public struct ColourSpace: Hashable, Sendable, Codable {
    public var primaries: ColourPrimaries
    public var transfer: TransferFunction
    public var matrix: YCbCrMatrix
    public var range: ColourRange

    public init(primaries: ColourPrimaries, transfer: TransferFunction, matrix: YCbCrMatrix, range: ColourRange) {
        self.primaries = primaries; self.transfer = transfer; self.matrix = matrix; self.range = range
    }

    /// HD video: BT.709 primaries, transfer and matrix, limited range. Reel's default output.
    public static let bt709 = ColourSpace(primaries: .bt709, transfer: .bt709, matrix: .bt709, range: .limited)
    /// SD video (525-line BT.601): SMPTE C primaries, BT.601 transfer and matrix, limited range.
    public static let bt601 = ColourSpace(primaries: .smpte170M, transfer: .smpte170M, matrix: .smpte170M, range: .limited)

    public var isHighDynamicRange: Bool { transfer.isHighDynamicRange }

    /// One line for `reel probe` and error messages: `bt709/bt709/bt709, tv`.
    public var summary: String { "\(matrix.name)/\(primaries.name)/\(transfer.name), \(range.name)" }
}

/// The colour tags a stream or frame carries, each possibly absent (unspecified, or a code
/// Reel does not know). `resolved` fills the gaps the way ffmpeg and AVFoundation guess them.
public struct ColourTags: Hashable, Sendable, Codable {
    public var primaries: ColourPrimaries?
    public var transfer: TransferFunction?
    public var matrix: YCbCrMatrix?
    public var range: ColourRange?

    public init(primaries: ColourPrimaries? = nil, transfer: TransferFunction? = nil, matrix: YCbCrMatrix? = nil, range: ColourRange? = nil) {
        self.primaries = primaries; self.transfer = transfer; self.matrix = matrix; self.range = range
    }

    /// From H.273 code points as libavutil reports them (0 and 2 mean unspecified; codes Reel
    /// does not know are treated as unspecified too). `range`: 1 = limited (MPEG), 2 = full (JPEG).
    public init(primaries: Int, transfer: Int, matrix: Int, range: Int) {
        self.primaries = ColourPrimaries(rawValue: primaries)
        self.transfer = TransferFunction(rawValue: transfer)
        // 0 is RGB only for RGB pixel formats; libavutil reports RGB frames as 0 too, and
        // `resolved(rgb:)` handles those.
        self.matrix = matrix == 0 ? nil : YCbCrMatrix(rawValue: matrix)
        self.range = range == 1 ? .limited : (range == 2 ? .full : nil)
    }

    /// Whether nothing at all is tagged.
    public var isEmpty: Bool { primaries == nil && transfer == nil && matrix == nil && range == nil }

    /// `self`, with the gaps of `self` filled from `other` (a frame's tags over its stream's).
    public func filled(from other: ColourTags) -> ColourTags {
        ColourTags(primaries: primaries ?? other.primaries, transfer: transfer ?? other.transfer,
                   matrix: matrix ?? other.matrix, range: range ?? other.range)
    }

    /// The colour space of a picture `height` lines tall with these tags. Untagged parts are
    /// guessed as ffmpeg and AVFoundation guess them: below 720 lines SD (BT.601 matrix, SMPTE C
    /// primaries), from 720 lines HD (BT.709); the transfer BT.709's (SDR); the range limited,
    /// unless the pixel format says full (`fullRangeFormat`: JPEG's `yuvj*`). RGB pictures
    /// (`rgb`) have no matrix and full range; an untagged one is taken as the same video
    /// gamma and primaries as HD.
    public func resolved(height: Int, rgb: Bool = false, fullRangeFormat: Bool = false) -> ColourSpace {
        let hd = height >= 720 || rgb
        let guessedMatrix: YCbCrMatrix = hd ? .bt709 : .smpte170M
        let matrix = rgb ? .identity : (self.matrix ?? guessedMatrix)
        let primaries = self.primaries ?? (matrix == .bt2020NCL || matrix == .bt2020CL ? .bt2020 : (hd ? .bt709 : .smpte170M))
        let transfer = self.transfer ?? .bt709
        let range: ColourRange = rgb ? .full : (fullRangeFormat ? .full : (self.range ?? .limited))
        return ColourSpace(primaries: primaries, transfer: transfer, matrix: matrix, range: range)
    }
}
