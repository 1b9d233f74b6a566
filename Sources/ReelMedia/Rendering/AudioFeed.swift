/// Pulls mixed audio in fixed blocks and feeds the AAC encoder, up to a target sample.
final class AudioFeed {
    let mixer: AudioMixer
    let encoder: AudioEncoder
    private(set) var position: Int64 = 0
    private let block = 4096
    private let buffers: [UnsafeMutablePointer<Float>]

    init(mixer: AudioMixer, encoder: AudioEncoder) {
        self.mixer = mixer
        self.encoder = encoder
        buffers = (0..<mixer.channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 4096) }
    }
    deinit { buffers.forEach { $0.deallocate() } }

    /// Mixes and encodes samples `[position, min(target, total))`.
    func advance(to target: Int64) throws -> [EncodedPacket] {
        var packets: [EncodedPacket] = []
        let end = min(target, mixer.sampleCount)
        while position < end {
            let n = Int(min(Int64(block), end - position))
            try mixer.mix(start: position, count: n, into: buffers)
            packets += try encoder.encode(planar: buffers.map { UnsafePointer($0) }, count: n)
            position += Int64(n)
        }
        return packets
    }
}
