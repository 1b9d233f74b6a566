/// `export.audio.loudness` (docs/composition.md, "Loudness").
extension CompositionDecoding {
    /// `"ebuR128"`, `"atscA85"`, `"streaming"`, or `{"integrated": LUFS, "truePeak": dBTP}`.
    func loudnessTarget(_ value: JSONValue, at path: String) -> LoudnessTarget? {
        let r = reader
        if case .string = value {
            return r.choice(value, at: path, LoudnessTarget.Standard.self).map(LoudnessTarget.init(standard:))
        }
        guard case .object = value else {
            r.report(path, "must be \"ebuR128\", \"atscA85\", \"streaming\" or {\"integrated\": LUFS, \"truePeak\": dBTP}, not \(value.typeName)")
            return nil
        }
        guard let o = r.object(value, at: path, keys: ["integrated", "truePeak"]) else { return nil }
        let integrated = r.required(o, "integrated", at: path, r.double)
        let truePeak = r.required(o, "truePeak", at: path, r.double)
        guard let integrated, let truePeak else { return nil }
        return LoudnessTarget(integrated: integrated, truePeak: truePeak)
    }
}

extension ValidationRun {
    func checkLoudnessTarget(_ target: LoudnessTarget, at path: String) {
        let i = LoudnessTarget.integratedRange, p = LoudnessTarget.truePeakRange
        if !i.contains(target.integrated) {
            report("\(path).integrated", "must be between \(Int(i.lowerBound)) and \(Int(i.upperBound)) LUFS")
        }
        if !p.contains(target.truePeak) {
            report("\(path).truePeak", "must be between \(Int(p.lowerBound)) and \(Int(p.upperBound)) dBTP")
        }
    }
}
