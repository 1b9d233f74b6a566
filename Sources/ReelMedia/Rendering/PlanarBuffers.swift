/// One float buffer per channel, zeroed, freed with the object: the scratch planes of the audio
/// passes that read a mix or a source in blocks (loudness, normalising, time-stretching).
final class PlanarBuffers {
    let planes: [UnsafeMutablePointer<Float>]
    let capacity: Int

    init(channels: Int, capacity: Int) {
        self.capacity = capacity
        planes = (0..<channels).map { _ in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: capacity)
            p.initialize(repeating: 0, count: capacity)
            return p
        }
    }

    deinit { planes.forEach { $0.deallocate() } }

    var readOnly: [UnsafePointer<Float>] { planes.map { UnsafePointer($0) } }
}
