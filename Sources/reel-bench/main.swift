// reel-bench: single-threaded compositor throughput on 1080p frames.
//
// Prints one `RESULT <case> <frames> <seconds> <fps>` line per case (for ops/bench-compositor.sh)
// after a human-readable line. A benchmark, not a test: numbers depend on the machine.
import ReelCore
import ReelMedia

#if canImport(Glibc)
import Glibc
#endif

struct Options {
    var frames = 100
    var cases: Set<String> = []

    init(_ arguments: [String]) {
        var it = arguments.dropFirst().makeIterator()
        while let arg = it.next() {
            switch arg {
            case "--frames": frames = it.next().flatMap(Int.init) ?? frames
            case "--case": if let c = it.next() { cases.insert(c) }
            case "-h", "--help":
                print("usage: reel-bench [--frames N] [--case blend|affine|scale|rotate90|overlay]…")
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

func run(_ name: String, frames: Int, _ body: () -> Void) {
    body()   // warm-up: page in buffers, settle clocks
    let clock = ContinuousClock()
    let elapsed = clock.measure { for _ in 0..<frames { body() } }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
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
