/// An exact rational number of seconds (or of anything else), like `CMTime` without a
/// timescale to choose: always reduced, denominator > 0.
///
/// Every decision about which frame or sample to show is taken on `Rational`s, never on
/// floating point, so no error accumulates over hours of timeline. Intermediate products use
/// `Int128`, so comparing and adding times with denominators such as 30000, 48000, 90000 or
/// 10⁶ cannot overflow for any realistic duration.
public struct Rational: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Numerator; carries the sign.
    public let num: Int64
    /// Denominator; always > 0, and `gcd(num, den) == 1`.
    public let den: Int64

    public static let zero = Rational(0)
    public static let one = Rational(1)

    /// `num/den`, reduced. `den` must not be 0.
    public init(_ num: Int64, _ den: Int64 = 1) {
        precondition(den != 0, "Rational with zero denominator")
        self.init(reducing: Int128(num), Int128(den))
    }

    init(reducing n: Int128, _ d: Int128) {
        var n = n, d = d
        if d < 0 { n = -n; d = -d }
        let g = Rational.gcd(n.magnitude, d.magnitude)
        if g > 1 { n /= Int128(g); d /= Int128(g) }
        guard let n64 = Int64(exactly: n), let d64 = Int64(exactly: d) else {
            preconditionFailure("Rational overflow: \(n)/\(d)")
        }
        num = n64
        den = d64
    }

    static func gcd(_ a: UInt128, _ b: UInt128) -> UInt128 {
        var a = a, b = b
        while b != 0 { (a, b) = (b, a % b) }
        return a == 0 ? 1 : a
    }

    public var isZero: Bool { num == 0 }
    public var seconds: Double { Double(num) / Double(den) }
    public var description: String { den == 1 ? "\(num)" : "\(num)/\(den)" }

    public static func + (l: Rational, r: Rational) -> Rational {
        Rational(reducing: Int128(l.num) * Int128(r.den) + Int128(r.num) * Int128(l.den), Int128(l.den) * Int128(r.den))
    }
    public static func - (l: Rational, r: Rational) -> Rational {
        Rational(reducing: Int128(l.num) * Int128(r.den) - Int128(r.num) * Int128(l.den), Int128(l.den) * Int128(r.den))
    }
    public static func * (l: Rational, r: Rational) -> Rational {
        Rational(reducing: Int128(l.num) * Int128(r.num), Int128(l.den) * Int128(r.den))
    }
    public static func / (l: Rational, r: Rational) -> Rational {
        precondition(r.num != 0, "Rational division by zero")
        return Rational(reducing: Int128(l.num) * Int128(r.den), Int128(l.den) * Int128(r.num))
    }
    public static func * (l: Rational, r: Int) -> Rational { l * Rational(Int64(r)) }
    public static func * (l: Int, r: Rational) -> Rational { Rational(Int64(l)) * r }
    public static prefix func - (x: Rational) -> Rational { Rational(-x.num, x.den) }
    public static func += (l: inout Rational, r: Rational) { l = l + r }
    public static func -= (l: inout Rational, r: Rational) { l = l - r }

    public static func < (l: Rational, r: Rational) -> Bool {
        Int128(l.num) * Int128(r.den) < Int128(r.num) * Int128(l.den)
    }

    /// Largest integer ≤ self.
    public var floor: Int64 {
        let q = num / den
        return (num % den != 0 && num < 0) ? q - 1 : q
    }
    /// Smallest integer ≥ self.
    public var ceil: Int64 {
        let q = num / den
        return (num % den != 0 && num > 0) ? q + 1 : q
    }
    /// Nearest integer, halves away from zero.
    public var rounded: Int64 {
        let twice = Rational(reducing: Int128(num) * 2 + (num >= 0 ? Int128(den) : -Int128(den)), Int128(den) * 2)
        return num >= 0 ? twice.floor : twice.ceil
    }

    /// The number of whole `step`s that fit in `self`, rounded up: `ceil(self / step)`.
    public func ceilDiv(_ step: Rational) -> Int64 { (self / step).ceil }
    /// `floor(self / step)`.
    public func floorDiv(_ step: Rational) -> Int64 { (self / step).floor }

    /// This value expressed in units of `1/timescale`, rounded to nearest (e.g. a time in a
    /// stream's time base, or a sample index at a sample rate).
    public func scaled(to timescale: Int64) -> Int64 { (self * Rational(timescale)).rounded }
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
