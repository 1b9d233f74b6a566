extension OutputColour {
    /// The output colour in a video chunk's key: the space as H.273 codes and the tone mapping
    /// (written whatever the sources: a plan does not know every frame's tags).
    func write(to out: inout CanonicalEncoder) {
        out.write("primaries", space.primaries.rawValue)
        out.write("transfer", space.transfer.rawValue)
        out.write("matrix", space.matrix.rawValue)
        out.write("range", space.range.rawValue)
        out.write("toneMapping", toneMapping.curve.rawValue)
        out.write("toneParam", toneMapping.param.map { String($0.bitPattern, radix: 16) } ?? "none")
        out.write("desat", toneMapping.desat)
        out.write("peak", toneMapping.peak.map { String($0.bitPattern, radix: 16) } ?? "none")
    }
}
