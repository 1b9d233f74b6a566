extension ValidationRun {
    /// The output colour `videoComposition` asks for (docs/colour.md): each key absent is
    /// BT.709's value, or BT.2020's for an HDR transfer; the range is always limited. An HDR
    /// output (PQ or HLG) is checked by `checkHDROutput`.
    func checkOutputColour() -> OutputColour {
        let vc = composition.videoComposition ?? VideoComposition()
        let path = "videoComposition"
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
        let hdr = vc.colorTransferFunction?.transfer.isHighDynamicRange ?? false
        let wideDefault: ColourPrimaries = hdr ? .bt2020 : .bt709
        let space = ColourSpace(primaries: vc.colorPrimaries?.primaries ?? wideDefault,
                                transfer: vc.colorTransferFunction?.transfer ?? .bt709,
                                matrix: vc.colorYCbCrMatrix?.matrix ?? (hdr ? .bt2020NCL : .bt709), range: .limited)
        if hdr { return OutputColour(space: space, toneMapping: toneMapping, hdr: checkHDROutput(vc)) }
        for (key, given) in [("masteringDisplay", vc.masteringDisplay != nil), ("contentLightLevel", vc.contentLightLevel != nil)] where given {
            report("\(path).\(key)", "describes an HDR output, but colorTransferFunction is SDR: "
                   + "set colorTransferFunction to \"SMPTE_ST_2084_PQ\" or \"ITU_R_2100_HLG\", or remove \(key)")
        }
        return OutputColour(space: space, toneMapping: toneMapping)
    }
}
