/// How far a programme's delivered audio is from its loudness target; nil (no miss) when it
/// meets it: its integrated loudness within `LoudnessTarget.integratedTolerance` of the
/// target's and its true peak not above the target's ceiling. Silence meets any target: a
/// programme with no integrated loudness (nothing above the gate) or no peak has no level to
/// reach, and is left as it is.
///
/// Normalisation (`NormalisedAudio` in ReelMedia) encodes again while the delivered audio
/// misses, at most four times; this is the same test, so a miss here is what is left after the
/// last encoding. Such an output is **delivered with a warning, not failed**: the file is still
/// a usable render, and since every step depends only on the samples, rendering again gives the
/// same bytes, so failing the job would take the output away and change nothing. What is left
/// to do is the user's (usually a target the material cannot reach: a loud integrated level
/// under a low true-peak ceiling, which the limiter holds it to), so the warning says plainly
/// what was measured, what the target was and what to change. It goes into the job's loudness
/// line (`LoudnessReport.summary`): `reel status JOB`, `reel events JOB` (kind `loudness`), and
/// what `reel render` and `reel submit --wait` print.
public struct LoudnessMiss: Hashable, Sendable {
    /// What the text of every warning starts with, so a client can tell a loudness line that
    /// carries one.
    public static let warningPrefix = "warning: the output misses its loudness target"

    public var target: LoudnessTarget
    /// The delivered audio, measured after its last encoding.
    public var delivered: LoudnessMeasurement
    /// Delivered minus target integrated loudness in LU, when further apart than the tolerance
    /// (negative: quieter than the target).
    public var loudness: Double?
    /// How far the delivered true peak is above the target's ceiling, in dB, when it is.
    public var peakExcess: Double?

    public init?(target: LoudnessTarget, delivered: LoudnessMeasurement) {
        let loudness = delivered.integrated.map { $0 - target.integrated }.flatMap { abs($0) > LoudnessTarget.integratedTolerance ? $0 : nil }
        let peakExcess = delivered.truePeak.map { $0 - target.truePeak }.flatMap { $0 > 0 ? $0 : nil }
        guard loudness != nil || peakExcess != nil else { return nil }
        self.target = target; self.delivered = delivered; self.loudness = loudness; self.peakExcess = peakExcess
    }

    /// One sentence with the measured and target figures (two decimals: a miss can be a few
    /// hundredths past its limit), what happened to the file and what to change:
    /// `warning: the output misses its loudness target: integrated −31.42 LUFS, 26.42 LU below
    /// the target's −5 LUFS (more than the 0.2 LU allowed); true peak −20.31 dBTP, within the
    /// target's −20 dBTP; delivered as rendered (rendering again gives the same result): …`.
    public var warning: String {
        let fixed = LoudnessFormat.fixed2, number = LoudnessFormat.number
        let tolerance = "\(number(LoudnessTarget.integratedTolerance)) LU"
        var parts: [String] = []
        if let integrated = delivered.integrated {
            let target = "the target's \(number(target.integrated)) LUFS"
            parts.append("integrated \(fixed(integrated)) LUFS, "
                         + (loudness.map { "\(fixed(abs($0))) LU \($0 < 0 ? "below" : "above") \(target) (more than the \(tolerance) allowed)" }
                            ?? "within \(tolerance) of \(target)"))
        }
        if let peak = delivered.truePeak {
            let target = "the target's \(number(target.truePeak)) dBTP"
            parts.append("true peak \(fixed(peak)) dBTP, " + (peakExcess.map { "\(fixed($0)) dB above \(target)" } ?? "within \(target)"))
        }
        let tooLoud = (loudness ?? 0) > 0 && peakExcess == nil
        let change = tooLoud ? "to meet it, give an integrated target nearer the delivered loudness (export.audio.loudness)"
                             : "to meet it, lower the integrated target or raise the true-peak ceiling (export.audio.loudness)"
        return "\(Self.warningPrefix): \(parts.joined(separator: "; ")); delivered as rendered (rendering again gives the same result): \(change)"
    }
}

extension LoudnessTarget {
    /// How far the delivered integrated loudness may be from the target: a programme further
    /// off is encoded again (`NormalisedAudio`), and one still further off after the last
    /// encoding is delivered with a `LoudnessMiss` warning.
    public static let integratedTolerance = 0.2
}

extension LoudnessReport {
    /// How far the delivered audio missed the target after the last encoding; nil when it met it.
    public var miss: LoudnessMiss? { LoudnessMiss(target: target, delivered: after) }
}

extension LoudnessFormat {
    /// Two decimals, a true minus sign for negatives.
    static func fixed2(_ value: Double) -> String {
        let hundredths = Int((abs(value) * 100).rounded())
        let text = "\(hundredths / 100)." + (hundredths % 100 < 10 ? "0" : "") + "\(hundredths % 100)"
        return value < 0 && hundredths > 0 ? "−" + text : text
    }
}
