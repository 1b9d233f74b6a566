extension ValidationRun {
    /// `export.audioOutputs` (docs/composition.md, "Audio outputs"): each entry a language, an
    /// optional title and at least one audio track, none listed twice in one entry. A track may
    /// be in several outputs (a shared music and effects bed) or in none (it is not heard), and
    /// two outputs may share a language (a main mix and an audio description, told apart by
    /// their titles). Returns the outputs as planned, or nil when the key is absent or wrong.
    func checkAudioOutputs(_ export: ExportOptions, tracks: CheckedTracks) -> [AudioOutput]? {
        guard let written = export.audioOutputs else { return nil }
        let path = "export.audioOutputs"
        if written.isEmpty {
            report(path, "needs at least one output; leave audioOutputs out for one mix of every audio track")
            return nil
        }
        let before = problems.count
        var outputs: [AudioOutput] = []
        for (index, entry) in written.enumerated() {
            let at = "\(path)[\(index)]"
            var language: LanguageTag?
            switch LanguageTag.parse(entry.language) {
            case .success(let tag): language = tag
            case .failure(let error): report("\(at).language", error.message)
            }
            if let title = entry.title, title.isEmpty { report("\(at).title", "must not be empty (leave it out instead)") }
            if entry.tracks.isEmpty { report("\(at).tracks", "must name at least one audio track to mix into this output") }
            for (i, id) in entry.tracks.enumerated() {
                let p = "\(at).tracks[\(i)]"
                switch tracks.mediaTypes[id] {
                case nil: report(p, "no track with id \(id)")
                case .video, .subtitle:
                    report(p, "track \(id) is a \(tracks.mediaTypes[id]!.rawValue) track; an audio output mixes audio tracks")
                case .audio:
                    if entry.tracks[..<i].contains(id) { report(p, "track \(id) is listed twice") }
                }
            }
            if let language { outputs.append(AudioOutput(language: language, title: entry.title, tracks: entry.tracks)) }
        }
        return problems.count == before ? outputs : nil
    }

    /// Audio outputs against the resolved container: WAV holds one audio stream (an HLS
    /// ladder writes each output as a rendition of its AUDIO group).
    func checkAudioOutputs(_ outputs: [AudioOutput], fileType: FileType) {
        if fileType == .wav, outputs.count > 1 {
            report("export.audioOutputs", "has \(outputs.count) outputs, but a WAV file holds one audio stream: keep one output, "
                   + "or write M4A, MP4, MOV or WebM")
        }
    }
}
