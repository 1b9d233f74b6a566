import CFFmpeg

/// One picture through a libavcodec image encoder (PNG, MJPEG): the encoded bytes.
enum StillEncoder {
    /// Encodes the picture whose planes are `planes` (borrowed; libavcodec copies them).
    static func encode(_ id: AVCodecID, width: Int, height: Int, format: AVPixelFormat, planes: PixelConverter.Planes,
                       configure: (UnsafeMutablePointer<AVCodecContext>) -> Void = { _ in },
                       context what: @autoclosure () -> String) throws -> [UInt8] {
        guard let codec = avcodec_find_encoder(id) else {
            throw MediaError(code: .noCodec, message: "no \(String(cString: avcodec_get_name(id))) encoder", context: what())
        }
        guard let ctx = avcodec_alloc_context3(codec) else { fatalError("avcodec_alloc_context3: out of memory") }
        var owned: UnsafeMutablePointer<AVCodecContext>? = ctx
        defer { avcodec_free_context(&owned) }
        ctx.pointee.width = Int32(width)
        ctx.pointee.height = Int32(height)
        ctx.pointee.pix_fmt = format
        ctx.pointee.time_base = AVRational(num: 1, den: 1)
        configure(ctx)
        try check(avcodec_open2(ctx, codec, nil), what())

        let frame = Frame(), packet = Packet()
        let f = frame.pointer
        f.pointee.format = format.rawValue
        f.pointee.width = Int32(width)
        f.pointee.height = Int32(height)
        f.pointee.pts = 0
        f.pointee.quality = ctx.pointee.global_quality // fixed-quantiser encoders read it per frame
        withUnsafeMutableBytes(of: &f.pointee.data) { raw in
            let data = raw.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)
            for (i, plane) in planes.data.prefix(4).enumerated() { data[i] = plane }
        }
        withUnsafeMutableBytes(of: &f.pointee.linesize) { raw in
            let strides = raw.bindMemory(to: Int32.self)
            for (i, stride) in planes.strides.prefix(4).enumerated() { strides[i] = stride }
        }
        let status = avcodec_send_frame(ctx, f)
        // Borrowed, unreferenced data: never freed by the frame.
        withUnsafeMutableBytes(of: &f.pointee.data) { raw in
            for i in 0..<raw.count / MemoryLayout<UnsafeMutablePointer<UInt8>?>.stride {
                raw.storeBytes(of: nil, toByteOffset: i * MemoryLayout<UnsafeMutablePointer<UInt8>?>.stride, as: UnsafeMutablePointer<UInt8>?.self)
            }
        }
        try check(status, what())
        try check(avcodec_send_frame(ctx, nil), what())
        var bytes: [UInt8] = []
        while true {
            let r = avcodec_receive_packet(ctx, packet.pointer)
            if r == averrorEOF || r == averrorEAGAIN { break }
            try check(r, what())
            bytes += UnsafeBufferPointer(start: packet.pointer.pointee.data, count: Int(packet.pointer.pointee.size))
            packet.unref()
        }
        guard !bytes.isEmpty else { throw MediaError(code: .noData, message: "the encoder produced nothing", context: what()) }
        return bytes
    }
}
