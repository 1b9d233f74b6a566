import CFFmpeg
import ReelCore
import ReelKernels

/// Turns decoded frames of one source into layers of an HDR render: 16-bit limited-range
/// Y'CbCr (4:2:0 or 4:4:4, as the layer asks) in the output's colour space (BT.2020 with PQ or HLG), scaled to the pixels
/// the layer covers — one zimg graph for the colour conversion and the scaling, from the
/// decoded samples at their own depth (a 10-bit source is never taken through 8 bits).
///
/// The colour follows the frame's tags as `SourceColourConverter` reads them. An HDR source is
/// converted to the output's transfer through linear light (PQ to PQ and HLG to HLG only
/// change the layout); an SDR source is placed with its white at 203 cd/m², BT.2408's HDR
/// reference white, through linear light and BT.2020 primaries. Used from one thread at a
/// time; keeps the graphs of the last few placements.
final class DeepSourceConverter {
    let output: OutputColour
    private let reader: SourceColourConverter
    private var graphs: [Key: ZimgGraph] = [:]

    private struct Key: Hashable { let source: ZimgFormat; let destination: ZimgFormat; let nominalPeak: Double }

    /// Linear 1.0 for SDR pictures in an HDR output: BT.2408's reference white.
    static let sdrReferenceWhite = 203.0
    /// Graphs kept: a still layer has one, a moving or scaling one a new one each frame.
    private static let keptGraphs = 8

    init(output: OutputColour, streamTags: ColourTags = ColourTags()) {
        precondition(output.space.isHighDynamicRange, "DeepSourceConverter converts into HDR outputs")
        self.output = output
        reader = SourceColourConverter(output: output, streamTags: streamTags)
    }

    /// Converts the part `region` of `frame` (source pixels; nil = all of it) into `layer`,
    /// scaled to the layer's size.
    func convert(_ frame: UnsafeMutablePointer<AVFrame>, region: ZimgFormat.ActiveRegion?, into layer: DeepYUVImage,
                 context what: @autoclosure () -> String) throws {
        let f = frame.pointee
        guard let traits = PixelFormatTraits(AVPixelFormat(rawValue: f.format)) else {
            throw MediaError(code: .invalidArgument, message: "unknown pixel format \(f.format)", context: what())
        }
        let source = reader.colour(of: frame)
        let target = output.space
        let planar = try reader.zimgReadable(frame, traits: traits, context: what())
        let planarTraits = PixelFormatTraits(AVPixelFormat(rawValue: planar.pointee.format))!
        var colour = source
        colour.primaries = source.primaries.gamut
        if source.matrix == .identity { colour.range = .full }
        // SDR video gammas are one picture (`TransferFunction.isVideoGamma`): read as BT.709's,
        // which zimg linearises with BT.1886's inverse of the camera curve.
        if source.transfer.isVideoGamma { colour.transfer = .bt709 }
        var input = ZimgFormat(width: Int(f.width), height: Int(f.height), samples: .integer(depth: planarTraits.depth), rgb: traits.isRGB,
                               subsampleW: planarTraits.log2ChromaW, subsampleH: planarTraits.log2ChromaH, colour: colour)
        input.activeRegion = region
        let destination = ZimgFormat(width: layer.width, height: layer.height, samples: .integer(depth: 16), rgb: false,
                                     subsampleW: layer.subsampled ? 1 : 0, subsampleH: layer.subsampled ? 1 : 0, colour: target.asZimgTarget)
        let peak = source.isHighDynamicRange ? 100 : Self.sdrReferenceWhite
        let key = Key(source: input, destination: destination, nominalPeak: peak)
        let graph: ZimgGraph
        if let cached = graphs[key] {
            graph = cached
        } else {
            if graphs.count >= Self.keptGraphs { graphs.removeAll(keepingCapacity: true) }
            graph = try ZimgGraph(from: input, to: destination, sharpChroma: true, nominalPeak: peak, bicubic: true)
            graphs[key] = graph
        }
        let planes = (0..<3).map { i -> (UnsafeRawPointer, Int) in
            let plane = planarTraits.plane(ofComponent: i)
            return (UnsafeRawPointer(planar.pointee.dataPointer(plane)), Int(planar.pointee.lineSize(plane)))
        }
        try graph.process(planes, into: layer.planes.map { (UnsafeMutableRawPointer($0.base), $0.stride * 2) })
    }
}
