extension ValidationRun {
    /// An HDR output (`colorTransferFunction` PQ or HLG): BT.2020 primaries and matrix, an HEVC
    /// export (HEVC Main10, the one 10-bit encoder Reel drives so far), and only what the
    /// 16-bit compositor draws — video and still layers placed and scaled without rotation,
    /// with opacity and its ramps (cross-fades). Filters, blend modes, overlays (text and
    /// images), burned-in captions, alpha and HLS ladders are refused, each by its key.
    /// Returns the static metadata the output carries (docs/colour.md, "HDR outputs").
    func checkHDROutput(_ vc: VideoComposition) -> HDRMetadata {
        let path = "videoComposition"
        let transfer = vc.colorTransferFunction!
        let name = "\"\(transfer.rawValue)\""
        if let primaries = vc.colorPrimaries, primaries != .itu2020 {
            report("\(path).colorPrimaries", "an HDR output (colorTransferFunction \(name)) is BT.2020: "
                   + "use \"ITU_R_2020\" (or leave it out), not \"\(primaries.rawValue)\"")
        }
        if let matrix = vc.colorYCbCrMatrix, matrix != .itu2020 {
            report("\(path).colorYCbCrMatrix", "an HDR output (colorTransferFunction \(name)) is BT.2020: "
                   + "use \"ITU_R_2020\" (or leave it out), not \"\(matrix.rawValue)\"")
        }
        let export = composition.export
        if let codec = export.videoCodec, codec != .hevc {
            let key = export.video.codec != nil ? "export.video.codec" : "export.preset"
            report(key, "\(export.videoCodecOrigin) encodes \(codec.displayName), which cannot carry colorTransferFunction \(name) "
                   + "as Reel encodes it (\(codec == .h264 ? "8-bit H.264" : codec.displayName)): HDR outputs are HEVC Main10 — "
                   + "set export.video.codec to \"hevc\" (in an MP4 or MOV), or colorTransferFunction to \"ITU_R_709_2\" "
                   + "to tone-map HDR sources into SDR")
        }
        if export.isLadder {
            report("export.fileType", "HDR HLS ladders are not rendered yet: write an MP4 or MOV for colorTransferFunction \(name)")
        }
        if export.video.alpha == true {
            report("export.video.alpha", "HDR outputs are opaque (HEVC Main10): remove alpha")
        }
        let unsupported = "is not supported in HDR compositions yet (the 16-bit compositor draws video and still layers with "
            + "their transform, crop and opacity only; docs/colour.md, \"HDR outputs\")"
        for (index, _) in vc.filters.enumerated() { report("\(path).filters[\(index)]", "a composition filter \(unsupported)") }
        for (index, overlay) in vc.overlays.enumerated() {
            report("\(path).overlays[\(index)]", "\(overlay.content.isText ? "a text overlay" : "an image overlay") \(unsupported)")
        }
        for (index, _) in vc.captions.enumerated() { report("\(path).captions[\(index)]", "burned-in captions \(unsupported)") }
        for (i, instruction) in (vc.instructions ?? []).enumerated() {
            for (j, layer) in instruction.layerInstructions.enumerated() {
                let at = "\(path).instructions[\(i)].layerInstructions[\(j)]"
                for (k, _) in layer.filters.enumerated() { report("\(at).filters[\(k)]", "a layer filter \(unsupported)") }
                if layer.blendMode != .normal { report("\(at).blendMode", "\"\(layer.blendMode.rawValue)\" \(unsupported)") }
                if case .matrix(let m) = layer.transform, !m.isAxisAlignedUpright {
                    report("\(at).transform", "rotation, skew and flips are not supported in HDR compositions yet: "
                           + "use a matrix with b = c = 0 and a, d > 0 (scale and translation)")
                }
                for (k, ramp) in layer.transformRamps.enumerated() where !ramp.from.isAxisAlignedUpright || !ramp.to.isAxisAlignedUpright {
                    report("\(at).transformRamps[\(k)]", "rotation, skew and flips are not supported in HDR compositions yet: "
                           + "use matrices with b = c = 0 and a, d > 0 (scale and translation)")
                }
            }
            if instruction.backgroundColor.a < 255 {
                report("\(path).instructions[\(i)].backgroundColor", "HDR outputs are opaque: give the background an alpha of 255")
            }
        }
        var metadata = HDRMetadata()
        if let display = vc.masteringDisplay {
            let at = "\(path).masteringDisplay"
            if !MasteringDisplay.describablePrimaries.contains(display.primaries) {
                report("\(at).primaries", "must be one of \(MasteringDisplay.describablePrimaries.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), "
                       + "not \"\(display.primaries.rawValue)\"")
            }
            // HEVC's SEI holds the peak in units of 0.0001 cd/m² in 32 bits, and ST 2086 caps it at 10 000.
            if !(display.maxLuminance >= 1 && display.maxLuminance <= 10000) {
                report("\(at).maxLuminance", "must be between 1 and 10000 cd/m² (the display's peak), not \(display.maxLuminance)")
            }
            if !(display.minLuminance >= 0.0001 && display.minLuminance < display.maxLuminance && display.minLuminance <= 50) {
                report("\(at).minLuminance", "must be between 0.0001 and 50 cd/m² and below maxLuminance (the display's black), not \(display.minLuminance)")
            }
            metadata.masteringDisplay = display
        }
        if let level = vc.contentLightLevel {
            let at = "\(path).contentLightLevel"
            if !(0...65535).contains(level.maxCLL) { report("\(at).maxCLL", "must be between 0 and 65535 cd/m² (0: unknown), not \(level.maxCLL)") }
            if !(0...65535).contains(level.maxFALL) { report("\(at).maxFALL", "must be between 0 and 65535 cd/m² (0: unknown), not \(level.maxFALL)") }
            if level.maxFALL > level.maxCLL, level.maxCLL > 0 {
                report("\(at).maxFALL", "a frame's average light level cannot exceed the brightest pixel's: \(level.maxFALL) > maxCLL \(level.maxCLL)")
            }
            metadata.contentLightLevel = level
        }
        return metadata
    }
}

extension AffineTransform {
    /// Scale and translation only, not flipped: what the 16-bit compositor places.
    public var isAxisAlignedUpright: Bool { b == 0 && c == 0 && a > 0 && d > 0 }
}

extension OverlayContent {
    var isText: Bool { if case .text = self { true } else { false } }
}
