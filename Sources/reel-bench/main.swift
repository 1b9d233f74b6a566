// reel-bench: single-threaded compositor throughput on 1080p frames, and the audio mixer.
//
// Times are the CPU time of the benchmark's thread (see `threadCPUSeconds`).
// Prints one `RESULT <case> <frames> <seconds> <fps>` line per case (for ops/bench-compositor.sh)
// after a human-readable line; `--case mix --composition FILE` mixes the composition's audio
// and prints `RESULT mix <samples> <seconds> <samples/s>` (ops/bench-mixer.sh; `mix-legacy`:
// the mixer as it was before issue 24, for comparison); `--case plan --composition FILE`
// plans, chunks and keys the composition (ops/bench-plan.sh). A benchmark,
// not a test: numbers depend on the machine.
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

    init(_ arguments: [String]) {
        var it = arguments.dropFirst().makeIterator()
        while let arg = it.next() {
            switch arg {
            case "--frames": frames = it.next().flatMap(Int.init) ?? frames
            case "--case": if let c = it.next() { cases.insert(c) }
            case "--composition": composition = it.next()
            case "--runs": runs = it.next().flatMap(Int.init) ?? runs
            case "-h", "--help":
                print("usage: reel-bench [--frames N] [--case blend|affine|scale|rotate90|overlay]…\n"
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
func enabled(_ name: String) -> Bool { options.cases.isEmpty || options.cases.contains(name) }

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

let top = makeFrame(width: 1920, height: 1080, seed: 1)
let bottom = makeFrame(width: 1920, height: 1080, seed: 2)
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
