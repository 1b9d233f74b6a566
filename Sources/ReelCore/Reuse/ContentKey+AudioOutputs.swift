extension RenderPlan {
    /// Which tracks each audio output mixes (absent from the keys of single mixes, so their keys
    /// are what they were before audio outputs existed). Languages and titles are not part of
    /// the audio result (the finaliser tags the streams), so they are not written.
    func write(audioOutputs: [AudioOutput], to out: inout CanonicalEncoder) {
        out.write("audioOutputs", audioOutputs.count)
        for output in audioOutputs {
            out.write("outputTracks", output.tracks.count)
            for id in output.tracks { out.write("outputTrack", id) }
        }
    }
}
