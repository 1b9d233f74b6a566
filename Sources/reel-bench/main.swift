// reel-bench: single-threaded compositor throughput on 1080p frames, and the audio mixer.
//
// Times are the CPU time of the benchmark's thread (see `threadCPUSeconds`).
// Prints one `RESULT <case> <frames> <seconds> <fps>` line per case (for ops/bench-compositor.sh)
// after a human-readable line; `--case mix --composition FILE` mixes the composition's audio
// and prints `RESULT mix <samples> <seconds> <samples/s>` (ops/bench-mixer.sh; `mix-legacy`:
// the mixer as it was before its rewrite per block, for comparison); `--case plan --composition FILE`
// plans, chunks and keys the composition (ops/bench-plan.sh). A benchmark,
// not a test: numbers depend on the machine. Filters and blend modes: ops/bench-filters.sh;
// with `--digest` each filter and blend-mode case also prints `DIGEST <case> <hash>` of the
// picture it wrote: run two builds on the same inputs and `diff` their DIGEST lines to see
// whether a kernel change kept every output byte.
import Foundation
import ReelCore
import ReelKernels
import ReelMedia

#if canImport(Glibc)
import Glibc
#endif

struct Options {
    var frames = 100
    var cases: Set<String> = []
    var composition: String?
    var runs = 5
    var cube: String?
    var inputs: [String] = []
    var digest = false
    var dump: String?

    init(_ arguments: [String]) {
        var it = arguments.dropFirst().makeIterator()
        while let arg = it.next() {
            switch arg {
            case "--frames": frames = it.next().flatMap(Int.init) ?? frames
            case "--case": if let c = it.next() { cases.insert(c) }
            case "--composition": composition = it.next()
            case "--runs": runs = it.next().flatMap(Int.init) ?? runs
            case "--cube": cube = it.next()
            case "--input": if let i = it.next() { inputs.append(i) }
            case "--digest": digest = true
            case "--dump": dump = it.next()
            case "-h", "--help":
                print("usage: reel-bench [--frames N] [--digest] [--dump DIR] [--cube FILE.cube] [--input FRAME.yuv]… [--case blend|affine|scale|rotate90|overlay|filter:NAME|blend:MODE|filters]…\n"
                      + "       reel-bench --case mix|mix-legacy|plan --composition FILE [--runs N]")
                exit(0)
            default:
                print("reel-bench: unknown argument \(arg)"); exit(1)
            }
        }
    }
}

/// A deterministic frame with structure (gradients) and texture (hash noise), like video.
func makeFrame(width: Int, height: Int, seed: UInt32, alpha: Bool = false) -> YUVImage {
    let image = YUVImage(width: width, height: height, hasAlpha: alpha)
    var state = seed &* 2_654_435_761 | 1
    func noise() -> Int { state ^= state << 13; state ^= state >> 17; state ^= state << 5; return Int(state & 31) }
    for y in 0..<height {
        let row = image.y.row(y)
        for x in 0..<width { row[x] = UInt8(16 + (x * 150 / width + y * 50 / height + noise()) % 220) }
    }
    for plane in [image.u, image.v] {
        for y in 0..<plane.height {
            let row = plane.row(y)
            for x in 0..<plane.width { row[x] = UInt8(64 + (x + 2 * y + noise()) % 128) }
        }
    }
    if let a = image.a {
        for y in 0..<height {
            let row = a.row(y)
            for x in 0..<width { row[x] = UInt8(truncatingIfNeeded: (x ^ y) & 0x80 != 0 ? 255 : (x + y) & 255) }
        }
    }
    return image
}

/// CPU seconds this thread has used: the work measured is single-threaded, and on a shared
/// machine the CPU time it takes is what it costs, whatever else waits for the cores.
func threadCPUSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
}

func run(_ name: String, frames: Int, _ body: () -> Void) {
    body()   // warm-up: page in buffers, settle clocks
    let start = threadCPUSeconds()
    for _ in 0..<frames { body() }
    let seconds = threadCPUSeconds() - start
    let fps = Double(frames) / seconds
    print("\(name): \(frames) frames in \(format3(seconds)) s = \(format3(fps)) frames/s")
    print("RESULT \(name) \(frames) \(format3(seconds)) \(format3(fps))")
}

func format3(_ v: Double) -> String {
    let scaled = (v * 1000).rounded()
    let whole = Int(scaled) / 1000, frac = abs(Int(scaled)) % 1000
    return "\(whole)." + String(repeating: "0", count: 3 - String(frac).count) + String(frac)
}

let options = Options(CommandLine.arguments)
// Which vector kernels run: AVX-512BW or AVX2 where the CPU has them (REEL_VECTOR_ISA=baseline or avx2 caps it).
print("ISA \(VectorISA.detected.rawValue)")
func enabled(_ name: String) -> Bool {
    options.cases.isEmpty && !name.contains(":") || options.cases.contains(name)
        || (options.cases.contains("filters") && (name.hasPrefix("filter:") || name.hasPrefix("blend:")))
}

/// Mixes the whole composition's audio with `mix` in the blocks `reel render` mixes (4096
/// samples), with a new mixer per run (its sources opened and decoded each time); prints the
/// median of the runs.
func benchmarkMix(_ name: String, _ makeMixer: (RenderPlan) -> (sampleCount: Int64, mix: (Int64, Int, [UnsafeMutablePointer<Float>]) throws -> Void)) {
    guard let path = options.composition else { print("reel-bench: --case \(name) needs --composition FILE"); exit(1) }
    do {
        let plan = try CompositionLoader.load(path: path)
        let block = 4096
        let channels = plan.export.audio.channels
        let buffers = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: block) }
        var checksum: Double = 0
        var times: [Double] = []
        var total: Int64 = 0
        for _ in 0..<max(1, options.runs) {
            let mixer = makeMixer(plan)
            total = mixer.sampleCount
            let start = threadCPUSeconds()
            var position: Int64 = 0
            while position < total {
                let n = Int(min(Int64(block), total - position))
                try mixer.mix(position, n, buffers)
                checksum += Double(buffers[0][n / 2])
                position += Int64(n)
            }
            times.append(threadCPUSeconds() - start)
        }
        let seconds = times.sorted()[times.count / 2]
        let rate = Double(total) / seconds
        print("\(name): \(total) samples × \(channels) channels, \(plan.audioTracks.count) tracks, median of \(times.count) runs: "
              + "\(format3(seconds)) s = \(format3(rate / 1e6)) M samples/s (\(format3(Double(total) / Double(plan.export.audio.sampleRate) / seconds))× real time; checksum \(checksum))")
        print("RESULT \(name) \(total) \(format3(seconds)) \(format3(rate))")
    } catch {
        print("reel-bench: \(error)"); exit(1)
    }
}

/// Plans a composition as the coordinator does when it accepts a job — parse, validate and
/// plan it (`CompositionLoader`, which probes its assets), cut it into chunks (`ChunkPlanner`)
/// and key every chunk (`ContentKey.videoChunks`, which evaluates every frame) — and prints
/// the median CPU time of the runs (ops/bench-plan.sh).
func benchmarkPlan() {
    guard let path = options.composition else { print("reel-bench: --case plan needs --composition FILE"); exit(1) }
    do {
        var times: [Double] = []
        var summary = ""
        for _ in 0..<max(1, options.runs) {
            let start = threadCPUSeconds()
            let plan = try CompositionLoader.load(path: path)
            let chunks = ChunkPlanner.plan(for: plan)
            let content = Dictionary(uniqueKeysWithValues: plan.assets.keys.map { ($0, String(repeating: "0", count: 64)) })
            let keys = ContentKey.videoChunks(plan, chunks: chunks, encoderThreads: 1, assetContent: content)
            times.append(threadCPUSeconds() - start)
            summary = "\(plan.frameCount) frames, \(plan.videoTracks.map(\.segments.count).reduce(0, +)) segments, "
                + "\(chunks.count) chunks, \(keys.compactMap { $0 }.count) keys"
        }
        let seconds = times.sorted()[times.count / 2]
        print("plan: \(summary); median of \(times.count) runs: \(format3(seconds)) s (runs: \(times.map(format3).joined(separator: " ")))")
        print("RESULT plan \(options.runs) \(format3(seconds))")
    } catch {
        print("reel-bench: \(error)"); exit(1)
    }
}

if options.cases.contains("plan") {
    benchmarkPlan()
    exit(0)
}

if options.cases.contains("mix") || options.cases.contains("mix-legacy") {
    if options.cases.contains("mix") {
        benchmarkMix("mix") { plan in
            let mixer = AudioMixer(plan: plan)
            return (mixer.sampleCount, { try mixer.mix(start: $0, count: $1, into: $2) })
        }
    }
    if options.cases.contains("mix-legacy") {
        benchmarkMix("mix-legacy") { plan in
            let mixer = LegacyAudioMixer(plan: plan)
            return (mixer.sampleCount, { try mixer.mix(start: $0, count: $1, into: $2) })
        }
    }
    exit(0)
}

/// A 1920×1080 yuv420p frame from a raw file (the same picture ffmpeg's side of a benchmark
/// reads), or nil.
func loadFrame(_ path: String) -> YUVImage? {
    guard let data = FileManager.default.contents(atPath: path), data.count >= 1920 * 1080 * 3 / 2 else { return nil }
    let image = YUVImage(width: 1920, height: 1080)
    let bytes = [UInt8](data)
    var offset = 0
    for plane in [image.y, image.u, image.v] {
        for r in 0..<plane.height {
            bytes.withUnsafeBufferPointer { plane.row(r).update(from: $0.baseAddress! + offset, count: plane.width) }
            offset += plane.width
        }
    }
    return image
}

let top = options.inputs.first.flatMap(loadFrame) ?? makeFrame(width: 1920, height: 1080, seed: 1)
let bottom = options.inputs.dropFirst().first.flatMap(loadFrame) ?? makeFrame(width: 1920, height: 1080, seed: 2)
let centre = AffineTransform.translation(-960, -540)

if enabled("blend") {
    // (a) Two-layer opacity blend: 1080p at 0.5 over 1080p (identity fast path).
    run("blend", frames: options.frames) {
        Compositor.draw(top, transform: .identity, opacity: 0.5, crop: nil, onto: bottom)
    }
}
if enabled("affine") {
    // (b) General affine: rotate 10° and scale 0.9 about the centre, over a 1080p background.
    let t = centre.concatenating(.rotation(10 * Double.pi / 180)).concatenating(.scale(0.9, 0.9))
        .concatenating(.translation(960, 540))
    run("affine", frames: options.frames) {
        Compositor.draw(top, transform: t, opacity: 1, crop: nil, onto: bottom)
    }
}
if enabled("scale") {
    // Picture-in-picture: 1080p scaled to 960x540 at (64, 64), axis-aligned path.
    let t = AffineTransform.scale(0.5, 0.5).concatenating(.translation(64, 64))
    run("scale", frames: options.frames) {
        Compositor.draw(top, transform: t, opacity: 1, crop: nil, onto: bottom)
    }
}
if enabled("rotate90") {
    // Portrait phone clip shown upright: 1080x1920 rotated 90° and fitted into 1080p.
    let portrait = makeFrame(width: 1080, height: 1920, seed: 3)
    let t = AffineTransform.rotation(Double.pi / 2).concatenating(.translation(1080, 0))
        .concatenating(.scale(0.5625, 0.5625)).concatenating(.translation(656, 0))
    run("rotate90", frames: options.frames) {
        Compositor.draw(portrait, transform: t, opacity: 1, crop: nil, onto: bottom)
    }
}
if enabled("overlay") {
    // A 1080p layer with an alpha plane, straight-alpha blend at opacity 0.8.
    let layer = makeFrame(width: 1920, height: 1080, seed: 4, alpha: true)
    run("overlay", frames: options.frames) {
        Compositor.draw(layer, transform: .identity, opacity: 0.8, crop: nil, onto: bottom)
    }
}

// MARK: - Filters (ops/bench-filters.sh)

/// Copies `source` over `dest` (same size): each filter run starts from the same picture.
func restore(_ dest: YUVImage, from source: YUVImage) {
    for (s, d) in [(source.y, dest.y), (source.u, dest.u), (source.v, dest.v)] + (source.a.map { [($0, dest.a!)] } ?? []) {
        for r in 0..<s.height { d.row(r).update(from: s.row(r), count: s.width) }
    }
}

/// CPU time of this (single-threaded) process in seconds: like ffmpeg's `-benchmark` utime,
/// it does not count time the machine gave to other work.
func cpuSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
}

/// Frames/s of `body` alone, in CPU time: the time of (restore + body) minus the time of restore.
func runNet(_ name: String, frames: Int, work: YUVImage, source: YUVImage, _ body: () throws -> Void) rethrows {
    restore(work, from: source); try body()   // warm-up
    var start = cpuSeconds()
    for _ in 0..<frames { restore(work, from: source) }
    let copies = cpuSeconds() - start
    start = cpuSeconds()
    for _ in 0..<frames {
        restore(work, from: source)
        try body()
    }
    let net = max(cpuSeconds() - start - copies, 1e-9)
    print("\(name): \(frames) frames in \(format3(net)) s CPU = \(format3(Double(frames) / net)) frames/s")
    print("RESULT \(name) \(frames) \(format3(net)) \(format3(Double(frames) / net))")
    if options.digest || options.dump != nil {
        restore(work, from: source); try body()
        if options.digest { print("DIGEST \(name) \(digest(work))") }
        if let dir = options.dump {
            do { try dump(work, to: "\(dir)/\(name.replacingOccurrences(of: ":", with: "-")).yuv") } catch { print("reel-bench: \(error)"); exit(1) }
        }
    }
}

/// Writes the picture's Y, U and V planes as raw yuv420p (`--dump DIR`: each filter and blend
/// case's output, to compare two builds or check a kernel against a reference outside Reel).
func dump(_ image: YUVImage, to path: String) throws {
    var bytes: [UInt8] = []
    for plane in [image.y, image.u, image.v] {
        for r in 0..<plane.height { bytes.append(contentsOf: UnsafeBufferPointer(start: plane.row(r), count: plane.width)) }
    }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// FNV-1a (64-bit) of the picture's planes: `--digest` prints one per case, so two builds
/// (another compiler, other CPU flags) can be checked to write the same bytes.
func digest(_ image: YUVImage) -> String {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for plane in [image.y, image.u, image.v] + (image.a.map { [$0] } ?? []) {
        for r in 0..<plane.height {
            let row = plane.row(r)
            for x in 0..<plane.width { h = (h ^ UInt64(row[x])) &* 0x100_0000_01b3 }
        }
    }
    return String(h, radix: 16)
}

let filterCases: [(String, [FilterDraw])] = [
    ("brightness", [.brightness(0.1)]),
    ("contrast", [.contrast(1.3)]),
    ("saturation", [.saturation(1.5)]),
    ("gamma", [.gamma(1.5)]),
    ("exposure", [.exposure(0.5)]),
    ("hue", [.hue(degrees: 30)]),
    ("grayscale", [.grayscale]),
    ("invert", [.invert]),
    ("sepia", [.sepia(intensity: 1)]),
    ("colorMatrix", [.colorMatrix(matrix: [0.9, 0.1, 0.0, 0.02, 0.05, 0.85, 0.1, 0.0, 0.0, 0.2, 0.8, -0.02], intensity: 1)]),
    ("lut", [.lut(asset: "grade", intensity: 1)]),
    ("chain4", [.brightness(0.1), .contrast(1.2), .saturation(1.3), .sepia(intensity: 1)]),
    ("gaussianBlur2", [.gaussianBlur(sigma: 2)]),
    ("gaussianBlur5", [.gaussianBlur(sigma: 5)]),
    ("sharpen", [.sharpen(amount: 1, sigma: 1)]),
    ("pixellate", [.pixellate(size: 16)]),
    ("vignette", [.vignette(centerX: 0.5, centerY: 0.5, color: .black, start: 0.3, end: 0.75)]),
    ("sobelEdge", [.sobelEdge(edgeStrength: 1)]),
    ("sketch", [.sketch(edgeStrength: 1)]),
    ("toon", [.toon(threshold: 0.2, levels: 10)]),
    ("swirl", [.swirl(centerX: 0.5, centerY: 0.5, radius: 400, angle: 1)]),
    ("kuwahara", [.kuwahara(radius: 3)]),
]

var luts: [String: CubeLUT] = [:]
if let cube = options.cube, let data = FileManager.default.contents(atPath: cube) {
    luts["grade"] = try CubeLUT.parse([UInt8](data))
}
let pipeline = FilterPipeline(luts: luts)
let work = makeFrame(width: 1920, height: 1080, seed: 5)
let keyed = makeFrame(width: 1920, height: 1080, seed: 6, alpha: true)
let keyedWork = makeFrame(width: 1920, height: 1080, seed: 6, alpha: true)
for (name, filters) in filterCases where enabled("filter:\(name)") {
    if name == "lut" && luts.isEmpty { print("filter:lut skipped: give --cube FILE"); continue }
    try runNet("filter:\(name)", frames: options.frames, work: work, source: top) { try pipeline.apply(filters, to: work) }
}
if enabled("filter:chromaKey") {
    try runNet("filter:chromaKey", frames: options.frames, work: keyedWork, source: keyed) {
        try pipeline.apply([.chromaKey(color: RGBAColor(r: 0, g: 255, b: 0), similarity: 0.4, smoothness: 0.1, spill: 0.5)], to: keyedWork)
    }
}
// The top frame as an opaque layer (the effect path's layer buffer always has an alpha plane).
let opaqueLayer = YUVImage(width: 1920, height: 1080, hasAlpha: true)
restore(opaqueLayer, from: top)
for r in 0..<opaqueLayer.height { opaqueLayer.a!.row(r).update(repeating: 255, count: opaqueLayer.width) }
for mode in BlendMode.allCases where enabled("blend:\(mode.rawValue)") {
    runNet("blend:\(mode.rawValue)", frames: options.frames, work: work, source: bottom) {
        Compositor.blend(opaqueLayer, onto: work, mode: mode, opacity: 1)
    }
}
