extension RenderPlan {
    /// The loudness target of a normalised mix (absent from the keys of mixes that are not, so
    /// their keys are what they were before normalisation existed).
    func write(loudness: LoudnessTarget, to out: inout CanonicalEncoder) {
        out.write("loudnessIntegrated", loudness.integrated)
        out.write("loudnessTruePeak", loudness.truePeak)
    }
}
