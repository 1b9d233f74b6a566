extension OutputColour {
    /// The output colour in a video chunk's key: the space as H.273 codes and the tone mapping
    /// (written whatever the sources: a plan does not know every frame's tags), and for an HDR
    /// output its mastering display and light levels, which its bitstream carries. An SDR
    /// output writes nothing more, so SDR keys are what they were.
    func write(to out: inout CanonicalEncoder) {
        out.write("primaries", space.primaries.rawValue)
        out.write("transfer", space.transfer.rawValue)
        out.write("matrix", space.matrix.rawValue)
        out.write("range", space.range.rawValue)
        out.write("toneMapping", toneMapping.curve.rawValue)
        out.write("toneParam", toneMapping.param.map { String($0.bitPattern, radix: 16) } ?? "none")
        out.write("desat", toneMapping.desat)
        out.write("peak", toneMapping.peak.map { String($0.bitPattern, radix: 16) } ?? "none")
        if let hdr {
            let display = hdr.masteringDisplay
            out.write("masteringPrimaries", display.primaries.rawValue)
            out.write("masteringMax", display.maxLuminance)
            out.write("masteringMin", display.minLuminance)
            out.write("maxCLL", hdr.contentLightLevel.maxCLL)
            out.write("maxFALL", hdr.contentLightLevel.maxFALL)
        }
    }
}
