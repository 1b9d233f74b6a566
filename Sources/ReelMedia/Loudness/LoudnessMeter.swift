import CEbur128
import Foundation
import ReelCore

/// Measures loudness with libebur128: integrated loudness (ITU-R BS.1770-4 with EBU R128's
/// gating), loudness range (EBU Tech 3342) and true peak (oversampled), of planar float
/// samples fed in order.
///
/// Owns one `ebur128_state` (destroyed in `deinit`). Not thread-safe: one feeder.
public final class LoudnessMeter {
    public let channels: Int
    public let sampleRate: Int
    private var state: UnsafeMutablePointer<ebur128_state>?
    private var interleaved: UnsafeMutablePointer<Float>
    private var capacity = 4096

    /// A meter for `channels` channels at `sampleRate` Hz. Channels follow FFmpeg's default
    /// order: mono or left/right; with 3 or more, the third is centre; with 6 or more the fourth
    /// is the LFE (not counted, as BS.1770 says) and the next ones are surrounds (+1.5 dB).
    public init(channels: Int, sampleRate: Int) throws {
        guard (1...8).contains(channels), sampleRate >= 8000 else {
            throw MediaError(code: .invalidArgument, message: "cannot measure \(channels) channels at \(sampleRate) Hz", context: "measuring loudness")
        }
        let mode = EBUR128_MODE_I.rawValue | EBUR128_MODE_LRA.rawValue | EBUR128_MODE_TRUE_PEAK.rawValue
        guard let state = ebur128_init(UInt32(channels), UInt(sampleRate), Int32(mode)) else {
            throw MediaError(code: .noData, message: "libebur128 could not start a meter", context: "measuring loudness")
        }
        self.channels = channels
        self.sampleRate = sampleRate
        self.state = state
        interleaved = .allocate(capacity: capacity * channels)
        for (index, role) in Self.roles(channels: channels).enumerated() {
            ebur128_set_channel(state, UInt32(index), Int32(role.rawValue))
        }
    }

    deinit {
        ebur128_destroy(&state)
        interleaved.deallocate()
    }

    static func roles(channels: Int) -> [channel] {
        switch channels {
        case 1: return [EBUR128_LEFT]
        case 2: return [EBUR128_LEFT, EBUR128_RIGHT]
        case 3, 4, 5: return Array([EBUR128_LEFT, EBUR128_RIGHT, EBUR128_CENTER, EBUR128_LEFT_SURROUND, EBUR128_RIGHT_SURROUND].prefix(channels))
        default:
            return [EBUR128_LEFT, EBUR128_RIGHT, EBUR128_CENTER, EBUR128_UNUSED, EBUR128_LEFT_SURROUND, EBUR128_RIGHT_SURROUND,
                    EBUR128_LEFT_SURROUND, EBUR128_RIGHT_SURROUND].prefix(channels).map { $0 }
        }
    }

    /// Feeds `count` samples of each channel (`planes[ch]`).
    public func add(_ planes: [UnsafePointer<Float>], count: Int) throws {
        precondition(planes.count == channels)
        if count > capacity {
            interleaved.deallocate()
            capacity = count
            interleaved = .allocate(capacity: capacity * channels)
        }
        for ch in 0..<channels {
            let p = planes[ch]
            for i in 0..<count { interleaved[i * channels + ch] = p[i] }
        }
        try check(ebur128_add_frames_float(state, interleaved, count))
    }

    /// The figures of everything fed so far.
    public func measurement() throws -> LoudnessMeasurement {
        var integrated = 0.0, range = 0.0
        try check(ebur128_loudness_global(state, &integrated))
        try check(ebur128_loudness_range(state, &range))
        var peak = 0.0
        for ch in 0..<channels {
            var p = 0.0
            try check(ebur128_true_peak(state, UInt32(ch), &p))
            peak = max(peak, p)
        }
        return LoudnessMeasurement(integrated: integrated.isFinite ? integrated : nil, range: range.isFinite ? range : 0,
                                   truePeak: peak > 0 ? 20 * log10(peak) : nil)
    }

    private func check(_ status: Int32) throws {
        guard status == Int32(EBUR128_SUCCESS.rawValue) else {
            throw MediaError(code: .invalidArgument, message: "libebur128 error \(status)", context: "measuring loudness")
        }
    }
}
