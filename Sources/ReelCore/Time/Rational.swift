/// An exact rational number of seconds (or of anything else), like `CMTime` without a
/// timescale to choose: always reduced, denominator > 0.
///
/// Every decision about which frame or sample to show is taken on `Rational`s, never on
/// floating point, so no error accumulates over hours of timeline. Intermediate products use
/// `Int128`.
///
/// **Exactness and overflow.** Arithmetic is exact whenever the reduced result fits in
/// `Int64 / Int64`. Validated compositions stay inside `TimeDomain` (times within ±10⁷ s on
/// one timescale ≤ 2³²), where every sum, difference, frame product and quotient the planner
/// and renderer take fits with room to spare, so they are always exact. Outside it — a hostile
/// `"1/9223372036854775783"`, a media file with absurd timestamps — arithmetic never traps:
/// like `CMTime`'s `kCMTimeFlags_HasBeenRounded`, a result that does not fit is rounded to the
/// nearest representable value (magnitudes beyond `Int64.max` saturate). `isExact(...)`
/// variants report whether an operation would be exact, for the validator.
public struct Rational: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Numerator; carries the sign.
    public let num: Int64
    /// Denominator; always > 0, and `gcd(num, den) == 1`.
    public let den: Int64

    public static let zero = Rational(0)
    public static let one = Rational(1)
    /// The largest representable magnitude, where saturating results end.
    public static let greatestFinite = Rational(Int64.max)

    /// `num/den`, reduced. `den` must not be 0 (a programming error: parsers reject it first).
    public init(_ num: Int64, _ den: Int64 = 1) {
        precondition(den != 0, "Rational with zero denominator")
        self.init(reducing: Int128(num), Int128(den))
    }

    private init(exactNum: Int64, den: Int64) {
        num = exactNum
        self.den = den
    }

    /// `n/d` reduced, exact when it fits; else the nearest representable value (`d != 0`).
    init(reducing n: Int128, _ d: Int128) {
        if let exact = Rational.exactly(n, d) { self = exact; return }
        self = Rational.nearest(n, d)
    }

    /// `n/d` reduced if it fits in `Int64 / Int64` exactly, else nil. `d` must not be 0.
    static func exactly(_ n: Int128, _ d: Int128) -> Rational? {
        // Int128.min cannot be negated; such a value never fits anyway.
        guard n != .min, d != .min else { return nil }
        var n = n, d = d
        if d < 0 { n = -n; d = -d }
        // The common case (every time in a validated plan): reduce in 64-bit arithmetic, which
        // the planner and the content keys do millions of times.
        if let n64 = Int64(exactly: n), let d64 = Int64(exactly: d), n64 != .min {
            let g = Int64(Rational.gcd64(n64.magnitude, UInt64(d64)))
            return Rational(exactNum: n64 / g, den: d64 / g)
        }
        let g = Rational.gcd(n.magnitude, d.magnitude)
        if g > 1 { n /= Int128(g); d /= Int128(g) }
        guard let n64 = Int64(exactly: n), let d64 = Int64(exactly: d), n64 != .min else { return nil }
        return Rational(exactNum: n64, den: d64)
    }

    /// The representable value nearest to `n/d` when `n/d` itself is not representable:
    /// saturates beyond ±`Int64.max`, else keeps the integer part and as many binary
    /// fraction digits as fit.
    private static func nearest(_ n: Int128, _ d: Int128) -> Rational {
        let negative = (n < 0) != (d < 0)
        let mn = n.magnitude, md = d.magnitude
        let whole = mn / md
        guard whole < UInt128(Int64.max) else { return Rational(exactNum: negative ? -Int64.max : Int64.max, den: 1) }
        // Scale 2^k with whole·2^k < 2^62: the fraction keeps 62 − bits(whole) binary digits.
        let bits = UInt128.bitWidth - whole.leadingZeroBitCount
        let k = max(0, 62 - bits)
        let scale = UInt128(1) << k
        // Only reached off the validated domain, so 53 bits of Double precision are plenty here.
        let remainder = mn % md
        let fraction = UInt128((Double(remainder) / Double(md) * Double(scale)).rounded())
        let scaled = Int128(whole * scale + fraction)
        return exactly(negative ? -scaled : scaled, Int128(scale)) ?? Rational(exactNum: negative ? -Int64.max : Int64.max, den: 1)
    }

    /// Binary GCD (no division); 1 for gcd(0, 0), like `gcd`.
    static func gcd64(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var u = a, v = b
        if u == 0 { return v == 0 ? 1 : v }
        if v == 0 { return u }
        let shift = (u | v).trailingZeroBitCount
        u >>= u.trailingZeroBitCount
        repeat {
            v >>= v.trailingZeroBitCount
            if u > v { swap(&u, &v) }
            v -= u
        } while v != 0
        return u << shift
    }

    static func gcd(_ a: UInt128, _ b: UInt128) -> UInt128 {
        var a = a, b = b
        while b != 0 { (a, b) = (b, a % b) }
        return a == 0 ? 1 : a
    }

    public var isZero: Bool { num == 0 }
    public var seconds: Double { Double(num) / Double(den) }
    public var description: String { den == 1 ? "\(num)" : "\(num)/\(den)" }

    /// Times in a plan mostly share a denominator (the frame duration's), so a sum or
    /// difference of two of them takes one small GCD and no 128-bit product.
    public static func + (l: Rational, r: Rational) -> Rational {
        if l.den == r.den, let sum = sameDenominator(l.num.addingReportingOverflow(r.num), l.den) { return sum }
        return Rational(reducing: Int128(l.num) * Int128(r.den) + Int128(r.num) * Int128(l.den), Int128(l.den) * Int128(r.den))
    }
    public static func - (l: Rational, r: Rational) -> Rational {
        if l.den == r.den, let difference = sameDenominator(l.num.subtractingReportingOverflow(r.num), l.den) { return difference }
        return Rational(reducing: Int128(l.num) * Int128(r.den) - Int128(r.num) * Int128(l.den), Int128(l.den) * Int128(r.den))
    }
    @inline(__always) private static func sameDenominator(_ n: (partialValue: Int64, overflow: Bool), _ den: Int64) -> Rational? {
        guard !n.overflow, n.partialValue != .min else { return nil }
        let g = Int64(gcd64(n.partialValue.magnitude, UInt64(den)))
        return Rational(exactNum: n.partialValue / g, den: den / g)
    }
    public static func * (l: Rational, r: Rational) -> Rational {
        Rational(reducing: Int128(l.num) * Int128(r.num), Int128(l.den) * Int128(r.den))
    }
    public static func / (l: Rational, r: Rational) -> Rational {
        precondition(r.num != 0, "Rational division by zero")
        return Rational(reducing: Int128(l.num) * Int128(r.den), Int128(l.den) * Int128(r.num))
    }
    /// `l · r`. A frame's time is this product (millions of them for a long timeline's content
    /// keys), so it takes one small GCD: `l` is reduced, so `gcd(l.num · r, l.den)` is
    /// `gcd(r, l.den)` = `gcd(l.den, r mod l.den)`.
    public static func * (l: Rational, r: Int) -> Rational {
        let g = Int64(gcd64(UInt64(l.den), UInt64(r.magnitude) % UInt64(l.den)))
        let (n, overflow) = l.num.multipliedReportingOverflow(by: Int64(r) / g)
        if !overflow && n != .min { return Rational(exactNum: n, den: l.den / g) }
        return l * Rational(Int64(r))
    }
    public static func * (l: Int, r: Rational) -> Rational { r * l }
    public static prefix func - (x: Rational) -> Rational { Rational(-x.num, x.den) }
    public static func += (l: inout Rational, r: Rational) { l = l + r }
    public static func -= (l: inout Rational, r: Rational) { l = l - r }

    public static func < (l: Rational, r: Rational) -> Bool {
        if l.den == r.den { return l.num < r.num }
        return Int128(l.num) * Int128(r.den) < Int128(r.num) * Int128(l.den)
    }

    /// Largest integer ≤ self.
    public var floor: Int64 { Rational.clamp(Rational.floorQuotient(Int128(num), Int128(den))) }
    /// Smallest integer ≥ self.
    public var ceil: Int64 { Rational.clamp(-Rational.floorQuotient(-Int128(num), Int128(den))) }
    /// Nearest integer, halves away from zero.
    public var rounded: Int64 { Rational.clamp(Rational.roundedQuotient(Int128(num), Int128(den))) }

    /// The number of whole `step`s that fit in `self`, rounded up: `ceil(self / step)`.
    /// Computed without an intermediate `Rational`, so it is exact for any two values
    /// (saturating at the ends of `Int64`). `step` must not be zero.
    public func ceilDiv(_ step: Rational) -> Int64 {
        let (n, d) = quotientTerms(step)
        return Rational.clamp(-Rational.floorQuotient(-n, d))
    }
    /// `floor(self / step)`; exact for any two values, like `ceilDiv`.
    public func floorDiv(_ step: Rational) -> Int64 {
        let (n, d) = quotientTerms(step)
        return Rational.clamp(Rational.floorQuotient(n, d))
    }

    /// This value expressed in units of `1/timescale`, rounded to nearest (e.g. a time in a
    /// stream's time base, or a sample index at a sample rate). Exact for any value
    /// (saturating at the ends of `Int64`).
    public func scaled(to timescale: Int64) -> Int64 {
        Rational.clamp(Rational.roundedQuotient(Int128(num) * Int128(timescale), Int128(den)))
    }

    /// `self / step` as an unreduced `Int128` fraction with a positive denominator.
    private func quotientTerms(_ step: Rational) -> (Int128, Int128) {
        precondition(step.num != 0, "Rational division by zero")
        var n = Int128(num) * Int128(step.den), d = Int128(den) * Int128(step.num)
        if d < 0 { n = -n; d = -d }
        return (n, d)
    }

    /// ⌊n/d⌋ for d > 0.
    private static func floorQuotient(_ n: Int128, _ d: Int128) -> Int128 {
        let q = n / d
        return (n % d != 0 && n < 0) ? q - 1 : q
    }

    /// n/d rounded to nearest, halves away from zero, for d > 0.
    private static func roundedQuotient(_ n: Int128, _ d: Int128) -> Int128 {
        let q = n / d, r = n % d
        // |r| ≥ d − |r| ⇔ |r| ≥ d/2, without computing 2·|r|.
        return r.magnitude >= d.magnitude - r.magnitude ? (n < 0 ? q - 1 : q + 1) : q
    }

    private static func clamp(_ v: Int128) -> Int64 { Int64(clamping: v) }
}

extension Rational: Codable {
    /// Encodes as the string `"num/den"` (or `"num"`), which is also what the composition
    /// format accepts, so a plan can be shipped to an agent without loss.
    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let i = try? c.decode(Int64.self) { self.init(i); return }
        let s = try c.decode(String.self)
        guard let r = Rational(parsing: s) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "not a rational: \(s)")
        }
        self = r
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }

    /// Parses `"N"`, `"N/D"` or a decimal such as `"2.5"`, `"-0.000001"` exactly.
    public init?(parsing text: String) {
        let s = Substring(text)
        if let slash = s.firstIndex(of: "/") {
            guard let n = Int64(s[..<slash]), let d = Int64(s[s.index(after: slash)...]), d != 0 else { return nil }
            self.init(n, d)
            return
        }
        if let whole = Int64(s), whole != .min { self.init(whole); return }
        var digits = Substring(s)
        var negative = false
        if digits.first == "-" { negative = true; digits = digits.dropFirst() } else if digits.first == "+" { digits = digits.dropFirst() }
        let parts = digits.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let intPart = parts.first, !(intPart.isEmpty && (parts.count == 1 || parts[1].isEmpty)),
              intPart.allSatisfy(\.isASCIIDigit) else { return nil }
        let frac = parts.count == 2 ? parts[1] : ""
        guard frac.allSatisfy(\.isASCIIDigit), frac.count <= 18, intPart.count <= 18 else { return nil }
        let whole = Int64(intPart.isEmpty ? "0" : String(intPart))!
        var scale: Int64 = 1
        for _ in 0..<frac.count { scale *= 10 }
        let fracValue = frac.isEmpty ? 0 : Int64(String(frac))!
        let r = Rational(reducing: Int128(whole) * Int128(scale) + Int128(fracValue), Int128(scale))
        self = negative ? -r : r
    }
}

private extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension Rational: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self.init(value) }
}
