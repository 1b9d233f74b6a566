/// The canonical byte form content keys are hashed from: named fields in the order the
/// caller writes them (a fixed order per key kind), each `name=<byte count>:<value>\n`, so no
/// value can run into the next and two different field lists never give the same bytes.
///
/// Values are written exactly: integers in decimal, rationals reduced as `num/den`, doubles as
/// the hexadecimal IEEE-754 bit pattern (never a rounded decimal), strings as UTF-8. Nothing
/// here iterates a dictionary; callers that must write a map sort its keys first.
struct CanonicalEncoder {
    private(set) var bytes: [UInt8] = []

    mutating func write(_ name: String, _ value: String) {
        let utf8 = Array(value.utf8)
        bytes += Array(name.utf8)
        bytes += Array("=\(utf8.count):".utf8)
        bytes += utf8
        bytes.append(0x0A)
    }

    mutating func write(_ name: String, _ value: Int) { write(name, String(value)) }
    mutating func write(_ name: String, _ value: Int?) { write(name, value.map { String($0) } ?? "none") }
    mutating func write(_ name: String, _ value: Double) { write(name, String(value.bitPattern, radix: 16)) }
    mutating func write(_ name: String, _ value: Rational) { write(name, "\(value.num)/\(value.den)") }

    mutating func write(_ name: String, _ value: PixelSize) { write(name, "\(value.width)x\(value.height)") }

    mutating func write(_ name: String, _ value: RGBAColor) { write(name, "\(value.r),\(value.g),\(value.b),\(value.a)") }

    mutating func write(_ name: String, _ value: AffineTransform) {
        write(name, [value.a, value.b, value.c, value.d, value.tx, value.ty].map { String($0.bitPattern, radix: 16) }.joined(separator: ","))
    }

    mutating func write(_ name: String, _ value: Rect?) {
        write(name, value.map { r in [r.x, r.y, r.width, r.height].map { String($0.bitPattern, radix: 16) }.joined(separator: ",") } ?? "none")
    }
}
