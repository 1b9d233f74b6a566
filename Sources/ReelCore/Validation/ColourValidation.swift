extension ValidationRun {
    /// The output colour `videoComposition` asks for (docs/colour.md): each key absent is
    /// BT.709's value; the range is always limited. HDR outputs are refused: Reel composites
    /// and encodes 8-bit SDR, and HDR sources are tone-mapped into it.
    func checkOutputColour() -> OutputColour {
        let vc = composition.videoComposition ?? VideoComposition()
        let path = "videoComposition"
        if let transfer = vc.colorTransferFunction, transfer.transfer.isHighDynamicRange {
            report("\(path).colorTransferFunction",
                   "\"\(transfer.rawValue)\" asks for an HDR output, which Reel does not render yet (it composites and encodes 8-bit SDR); "
                   + "use \"ITU_R_709_2\" (the default): HDR sources are tone-mapped into it (\(path).toneMapping)")
        }
        var toneMapping = vc.toneMapping ?? ToneMapping()
        if let given = vc.toneMapping {
            let tonePath = "\(path).toneMapping"
            if let param = given.param, !(param > 0) { report("\(tonePath).param", "must be > 0") }
            if given.curve == .reinhard, let param = given.param, param >= 1 {
                report("\(tonePath).param", "reinhard's contrast must be below 1 (ffmpeg's tonemap=reinhard:param), not \(param)")
            }
            if given.curve == .bt2390, given.param != nil {
                report("\(tonePath).param", "bt2390 has no parameter (its knee follows from the source's peak)")
            }
            if given.desat < 0 { report("\(tonePath).desat", "must be ≥ 0") }
            if let peak = given.peak, !(peak > 0) { report("\(tonePath).peak", "must be > 0 (in units of 100 cd/m²: 10 is 1000 cd/m²)") }
            toneMapping = given
        }
        let space = ColourSpace(primaries: vc.colorPrimaries?.primaries ?? .bt709,
                                transfer: vc.colorTransferFunction?.transfer ?? .bt709,
                                matrix: vc.colorYCbCrMatrix?.matrix ?? .bt709, range: .limited)
        return OutputColour(space: space, toneMapping: toneMapping)
    }
}
