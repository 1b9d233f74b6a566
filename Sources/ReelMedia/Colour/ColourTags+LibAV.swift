import CFFmpeg
import ReelCore

extension ColourTags {
    /// The tags of a stream's codec parameters (container `colr`/`Colour`, or the bitstream's
    /// VUI as the demuxer found it).
    init(_ parameters: UnsafePointer<AVCodecParameters>) {
        let p = parameters.pointee
        self.init(primaries: Int(p.color_primaries.rawValue), transfer: Int(p.color_trc.rawValue),
                  matrix: Int(p.color_space.rawValue), range: Int(p.color_range.rawValue))
    }

    /// The tags a decoded frame carries (the bitstream's VUI, else what the decoder was given).
    init(frame: UnsafePointer<AVFrame>) {
        let f = frame.pointee
        self.init(primaries: Int(f.color_primaries.rawValue), transfer: Int(f.color_trc.rawValue),
                  matrix: Int(f.colorspace.rawValue), range: Int(f.color_range.rawValue))
    }
}

/// What a pixel format is, for choosing how to convert it.
struct PixelFormatTraits {
    let descriptor: UnsafePointer<AVPixFmtDescriptor>

    init?(_ format: AVPixelFormat) {
        guard let d = av_pix_fmt_desc_get(format) else { return nil }
        descriptor = d
    }

    private func has(_ flag: Int32) -> Bool { descriptor.pointee.flags & UInt64(flag) != 0 }

    /// R'G'B' samples (packed, planar or paletted): no matrix.
    var isRGB: Bool { has(reel_pix_fmt_flag_rgb()) || has(reel_pix_fmt_flag_pal()) }
    var hasAlpha: Bool { has(reel_pix_fmt_flag_alpha()) }
    var components: Int { Int(descriptor.pointee.nb_components) }
    /// Bits of the first component.
    var depth: Int { Int(descriptor.pointee.comp.0.depth) }
    var log2ChromaW: Int { Int(descriptor.pointee.log2_chroma_w) }
    var log2ChromaH: Int { Int(descriptor.pointee.log2_chroma_h) }

    /// The plane holding component `i` (0…3: Y/R, U/G, V/B, A).
    func plane(ofComponent i: Int) -> Int {
        withUnsafeBytes(of: descriptor.pointee.comp) { Int($0.bindMemory(to: AVComponentDescriptor.self)[i].plane) }
    }

    /// Whether zimg can read the colour planes as they are: planar, little-endian integers of
    /// 8…16 bits, one sample a step, three colour components in planes of their own.
    var isZimgReadable: Bool {
        guard has(reel_pix_fmt_flag_planar()), !has(reel_pix_fmt_flag_be()), !has(reel_pix_fmt_flag_bitstream()),
              !has(reel_pix_fmt_flag_float()), !has(reel_pix_fmt_flag_pal()), components >= 3 else { return false }
        return withUnsafeBytes(of: descriptor.pointee.comp) { raw in
            let comps = raw.bindMemory(to: AVComponentDescriptor.self)
            let planes = Set((0..<3).map { comps[$0].plane })
            return planes.count == 3 && (0..<3).allSatisfy { i in
                let c = comps[i]
                return c.shift == 0 && c.offset == 0 && c.depth >= 8 && c.depth <= 16 && Int(c.step) == (c.depth > 8 ? 2 : 1)
            }
        }
    }

    /// The planar format of the same family and about the same depth that zimg reads, for
    /// formats it cannot (packed RGB, semi-planar and packed Y'CbCr, grey, palettes).
    var zimgReadableEquivalent: AVPixelFormat {
        let deep = depth > 8
        if isRGB { return hasAlpha ? (deep ? AV_PIX_FMT_GBRAP16LE : AV_PIX_FMT_GBRAP) : (deep ? AV_PIX_FMT_GBRP16LE : AV_PIX_FMT_GBRP) }
        return hasAlpha ? (deep ? AV_PIX_FMT_YUVA444P16LE : AV_PIX_FMT_YUVA444P) : (deep ? AV_PIX_FMT_YUV444P16LE : AV_PIX_FMT_YUV444P)
    }
}
