/// `export.audio.loudness`: the integrated loudness and true-peak ceiling the whole programme
/// is normalised to (docs/composition.md, "Loudness").
///
/// The named targets are the delivery specifications people are asked for: EBU R128 (−23 LUFS,
/// −1 dBTP), ATSC A/85 (−24 LKFS, −2 dBTP) and about −14 LUFS at −1 dBTP for streaming services.
public struct LoudnessTarget: Hashable, Sendable, Codable, CustomStringConvertible {
    public enum Standard: String, Hashable, Sendable, Codable, CaseIterable {
        case ebuR128, atscA85, streaming
    }

    /// The named target, or nil for `{"integrated", "truePeak"}`.
    public var standard: Standard?
    /// LUFS (= LKFS).
    public var integrated: Double
    /// dBTP.
    public var truePeak: Double

    public init(standard: Standard) {
        self.standard = standard
        switch standard {
        case .ebuR128: (integrated, truePeak) = (-23, -1)
        case .atscA85: (integrated, truePeak) = (-24, -2)
        case .streaming: (integrated, truePeak) = (-14, -1)
        }
    }

    public init(integrated: Double, truePeak: Double) {
        self.standard = nil; self.integrated = integrated; self.truePeak = truePeak
    }

    /// Accepted integrated loudness: quieter than −60 LUFS is below what a programme is
    /// delivered at, louder than −5 LUFS cannot be reached without crushing it.
    public static let integratedRange: ClosedRange<Double> = -60 ... -5
    /// Accepted true-peak ceilings.
    public static let truePeakRange: ClosedRange<Double> = -20 ... 0

    /// `ebuR128 (−23 LUFS, −1 dBTP)`, or `−16 LUFS, −1.5 dBTP` for a target given by numbers.
    public var description: String {
        let figures = "\(LoudnessFormat.number(integrated)) LUFS, \(LoudnessFormat.number(truePeak)) dBTP"
        return standard.map { "\($0.rawValue) (\(figures))" } ?? figures
    }
}

/// Loudness figures of a programme (ITU-R BS.1770-4 with EBU R128 gating, EBU Tech 3342
/// loudness range, true peak by oversampling).
public struct LoudnessMeasurement: Hashable, Sendable, Codable {
    /// Gated integrated loudness in LUFS; nil for silence (nothing above the −70 LUFS gate).
    public var integrated: Double?
    /// Loudness range in LU.
    public var range: Double
    /// The highest true peak of any channel in dBTP; nil for digital silence.
    public var truePeak: Double?

    public init(integrated: Double?, range: Double, truePeak: Double?) {
        self.integrated = integrated; self.range = range; self.truePeak = truePeak
    }

    /// `−23.0 LUFS, range 7.2 LU, true peak −1.3 dBTP`.
    public var summary: String {
        "\(integrated.map { LoudnessFormat.fixed($0) + " LUFS" } ?? "silence"), range \(LoudnessFormat.fixed(range)) LU, "
            + "true peak \(truePeak.map { LoudnessFormat.fixed($0) + " dBTP" } ?? "none")"
    }
}

/// What normalising a programme did: its figures before and after, and the gain between them.
public struct LoudnessReport: Hashable, Sendable, Codable {
    public var target: LoudnessTarget
    /// The mix as composed.
    public var before: LoudnessMeasurement
    /// The one gain applied to the whole programme, in dB (target − measured integrated; 0 for silence).
    public var gain: Double
    /// The true-peak limiter's ceiling, in dBTP.
    public var ceiling: Double
    /// The delivered audio, measured after encoding.
    public var after: LoudnessMeasurement

    public init(target: LoudnessTarget, before: LoudnessMeasurement, gain: Double, ceiling: Double, after: LoudnessMeasurement) {
        self.target = target; self.before = before; self.gain = gain; self.ceiling = ceiling; self.after = after
    }

    /// The gain that brings `measured` to `target`: 0 for a silent programme (no level to reach).
    public static func gain(for measured: LoudnessMeasurement, target: LoudnessTarget) -> Double {
        measured.integrated.map { target.integrated - $0 } ?? 0
    }

    /// One line for a job's history and `reel status`; an output that still misses its target
    /// ends with the `LoudnessMiss` warning.
    public var summary: String {
        "normalised to \(target): measured \(before.summary); gain \(LoudnessFormat.signed(gain)) dB; output \(after.summary)"
            + (miss.map { "; " + $0.warning } ?? "")
    }

    /// The warnings of the reports of every audio output that misses its target, labelled as in
    /// `summary(of:outputs:)` when there are several outputs, joined by ` | `; nil when every
    /// output meets its target.
    public static func warning(of reports: [LoudnessReport], outputs: [AudioOutput]?) -> String? {
        let missed = reports.enumerated().compactMap { i, report in report.miss.map { (i, $0.warning) } }
        guard !missed.isEmpty else { return nil }
        guard reports.count > 1 else { return missed[0].1 }
        return missed.map { i, warning in "\(label(i, outputs: outputs)): \(warning)" }.joined(separator: " | ")
    }

    static func label(_ i: Int, outputs: [AudioOutput]?) -> String {
        outputs.flatMap { i < $0.count ? $0[i].label : nil } ?? "output \(i + 1)"
    }

    /// One line for a job's history and `reel status` over the reports of every audio output
    /// (`export.audioOutputs`, in order): one report's own summary, or each output's labelled
    /// summary (`en "English": normalised to …`) joined by ` | `. Nil without reports. Reports
    /// beyond `outputs` (or all of them, without it) are labelled by position.
    public static func summary(of reports: [LoudnessReport], outputs: [AudioOutput]?) -> String? {
        guard reports.count > 1 else { return reports.first?.summary }
        return reports.enumerated().map { i, report in "\(label(i, outputs: outputs)): \(report.summary)" }.joined(separator: " | ")
    }
}

enum LoudnessFormat {
    /// One decimal, a true minus sign for negatives (as loudness figures are printed).
    static func fixed(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        let text = String(format1: abs(rounded))
        return rounded < 0 ? "−" + text : text
    }

    static func signed(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return (rounded < 0 ? "−" : "+") + String(format1: abs(rounded))
    }

    /// The shortest form of a target number (`-23`, `-1.5`), true minus sign.
    static func number(_ value: Double) -> String {
        let text = value == value.rounded() ? String(Int(abs(value))) : String(abs(value))
        return value < 0 ? "−" + text : text
    }
}

extension String {
    /// `value` with exactly one decimal (no Foundation in the pure core).
    init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(tenths % 10)"
    }
}
