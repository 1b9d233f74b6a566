import CZimg
import ReelCore

/// One plane-layout-and-colour description zimg converts from or to.
struct ZimgFormat: Hashable {
    enum Samples: Hashable {
        /// Unsigned integers of `depth` bits, one byte (≤ 8) or two (9…16) per sample.
        case integer(depth: Int)
        /// 32-bit float (linear light for tone mapping).
        case float
    }
    var width: Int
    var height: Int
    var samples: Samples
    /// `.yuv` with chroma subsampled by 2^`subsampleW` × 2^`subsampleH`, or `.rgb` (G, B, R planes).
    var rgb: Bool
    var subsampleW = 0
    var subsampleH = 0
    var colour: ColourSpace
    /// The part of a source image to read, in its pixels (left, top, width, height): a graph
    /// whose destination has another size scales that part to it. nil: the whole image.
    var activeRegion: ActiveRegion? = nil

    struct ActiveRegion: Hashable { var left: Double, top: Double, width: Double, height: Double }

    /// Bytes per sample.
    var sampleBytes: Int {
        switch samples {
        case .integer(let depth): depth > 8 ? 2 : 1
        case .float: 4
        }
    }

    fileprivate var zimg: zimg_image_format {
        var f = zimg_image_format()
        zimg_image_format_default(&f, reel_zimg_api_version())
        f.width = UInt32(width)
        f.height = UInt32(height)
        switch samples {
        case .integer(let depth):
            f.pixel_type = depth > 8 ? ZIMG_PIXEL_WORD : ZIMG_PIXEL_BYTE
            f.depth = UInt32(depth)
        case .float:
            f.pixel_type = ZIMG_PIXEL_FLOAT
            f.depth = 32
        }
        f.subsample_w = UInt32(subsampleW)
        f.subsample_h = UInt32(subsampleH)
        f.color_family = rgb ? ZIMG_COLOR_RGB : ZIMG_COLOR_YUV
        f.matrix_coefficients = rgb ? ZIMG_MATRIX_RGB : zimg_matrix_coefficients_e(Int32(colour.matrix.rawValue))
        f.transfer_characteristics = zimg_transfer_characteristics_e(Int32(colour.transfer.rawValue))
        f.color_primaries = zimg_color_primaries_e(Int32(colour.primaries.rawValue))
        f.pixel_range = colour.range == .full || rgb ? ZIMG_RANGE_FULL : ZIMG_RANGE_LIMITED
        // H.264/HEVC's default siting, and what ffmpeg's zscale assumes for untagged frames.
        f.chroma_location = ZIMG_CHROMA_LEFT
        if let r = activeRegion { reel_zimg_set_active_region(&f, r.left, r.top, r.width, r.height) }
        return f
    }
}

/// A zimg filter graph from one `ZimgFormat` to another, with its scratch memory. Owns both;
/// used from one thread at a time.
///
/// Built as ffmpeg's `zscale` builds its graphs, so that Reel's conversions compute what the
/// `zscale` filter does: bilinear chroma resampling, no dithering (round to nearest), nominal
/// peak luminance 100 cd/m² (linear 1.0 = SDR reference white). zimg's SIMD is pinned to
/// SSE2, which every x86-64 CPU has: its AVX2 paths contract into fused multiply-adds and
/// would round some values differently, and agents must produce the same bytes whatever
/// their CPU.
final class ZimgGraph {
    let source: ZimgFormat
    let destination: ZimgFormat
    private let graph: OpaquePointer
    private let scratch: UnsafeMutableRawPointer

    /// `sharpChroma`: bicubic chroma resampling instead of zscale's bilinear, for conversions
    /// that go 4:2:0 → 4:4:4 → 4:2:0 (another matrix) and would otherwise blur colour edges twice.
    ///
    /// `nominalPeak`: the cd/m² of linear 1.0 when a conversion goes through linear light —
    /// 100 (SDR white as zscale has it) for tone mapping and HDR to HDR, 203 (BT.2408's HDR
    /// reference white) to place SDR pictures in an HDR output. `resample`: the luma filter
    /// when the destination has another size than the source (bilinear, as zscale, or bicubic).
    init(from source: ZimgFormat, to destination: ZimgFormat, sharpChroma: Bool = false, nominalPeak: Double = 100,
         bicubic: Bool = false) throws {
        self.source = source
        self.destination = destination
        var params = zimg_graph_builder_params()
        zimg_graph_builder_params_default(&params, reel_zimg_api_version())
        params.resample_filter = bicubic ? ZIMG_RESIZE_BICUBIC : ZIMG_RESIZE_BILINEAR
        params.resample_filter_uv = sharpChroma || bicubic ? ZIMG_RESIZE_BICUBIC : ZIMG_RESIZE_BILINEAR
        params.dither_type = ZIMG_DITHER_NONE
        params.nominal_peak_luminance = nominalPeak
        #if arch(x86_64)
        params.cpu_type = ZIMG_CPU_X86_SSE2
        #else
        params.cpu_type = ZIMG_CPU_NONE
        #endif
        var src = source.zimg, dst = destination.zimg
        guard let graph = zimg_filter_graph_build(&src, &dst, &params) else {
            throw Self.lastError("building a colour conversion from \(source.colour.summary) to \(destination.colour.summary)")
        }
        var size = 0
        if zimg_filter_graph_get_tmp_size(graph, &size) != ZIMG_ERROR_SUCCESS {
            zimg_filter_graph_free(graph)
            throw Self.lastError("sizing a colour conversion")
        }
        self.graph = graph
        scratch = UnsafeMutableRawPointer.allocate(byteCount: max(size, 64), alignment: 64)
    }

    deinit {
        zimg_filter_graph_free(graph)
        scratch.deallocate()
    }

    /// Converts whole planes (`source` order: Y, U, V or G, B, R; at most 3).
    func process(_ source: [(UnsafeRawPointer, Int)], into destination: [(UnsafeMutableRawPointer, Int)]) throws {
        var src = zimg_image_buffer_const()
        src.version = reel_zimg_api_version()
        var dst = zimg_image_buffer()
        dst.version = reel_zimg_api_version()
        for (i, (base, stride)) in source.enumerated() { reel_zimg_set_input_plane(&src, UInt32(i), base, stride) }
        for (i, (base, stride)) in destination.enumerated() { reel_zimg_set_output_plane(&dst, UInt32(i), base, stride) }
        if zimg_filter_graph_process(graph, &src, &dst, scratch, nil, nil, nil, nil) != ZIMG_ERROR_SUCCESS {
            throw Self.lastError("converting colour from \(self.source.colour.summary) to \(self.destination.colour.summary)")
        }
    }

    private static func lastError(_ what: String) -> MediaError {
        var message = [CChar](repeating: 0, count: 1024)
        let code = zimg_get_last_error(&message, message.count)
        zimg_clear_last_error()
        let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return MediaError(code: .invalidArgument, message: "zimg error \(code.rawValue): \(text)", context: what)
    }
}
