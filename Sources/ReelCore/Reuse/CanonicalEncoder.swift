/// The canonical byte form content keys are hashed from: named fields in the order the
/// caller writes them (a fixed order per key kind), each `name=<byte count>:<value>\n`, so no
/// value can run into the next and two different field lists never give the same bytes.
///
/// Values are written exactly: integers in decimal, rationals reduced as `num/den`, doubles as
/// the hexadecimal IEEE-754 bit pattern (never a rounded decimal), strings as UTF-8. Nothing
/// here iterates a dictionary; callers that must write a map sort its keys first.
///
/// A video chunk's key writes a dozen fields for each of its frames, so values are formatted
/// straight into bytes (no `String` per field); the bytes are those `String(value)` and
/// `String(bits, radix: 16)` would give.
struct CanonicalEncoder {
    private(set) var bytes: [UInt8] = []
    /// The value being written, until its length is known.
    private var value: [UInt8] = []

    init() {
        bytes.reserveCapacity(4096)
        value.reserveCapacity(256)
    }

    mutating func write(_ name: StaticString, _ value: String) {
        self.value.removeAll(keepingCapacity: true)
        self.value.append(contentsOf: value.utf8)
        endField(name)
    }

    mutating func write(_ name: StaticString, _ value: Int) {
        self.value.removeAll(keepingCapacity: true)
        Self.decimal(Int64(value), to: &self.value)
        endField(name)
    }

    mutating func write(_ name: StaticString, _ value: Int?) {
        guard let value else { return write(name, "none") }
        write(name, value)
    }

    mutating func write(_ name: StaticString, _ value: Double) {
        self.value.removeAll(keepingCapacity: true)
        Self.hex(value.bitPattern, to: &self.value)
        endField(name)
    }

    mutating func write(_ name: StaticString, _ value: Rational) {
        self.value.removeAll(keepingCapacity: true)
        Self.decimal(value.num, to: &self.value)
        self.value.append(UInt8(ascii: "/"))
        Self.decimal(value.den, to: &self.value)
        endField(name)
    }

    mutating func write(_ name: StaticString, _ value: PixelSize) {
        self.value.removeAll(keepingCapacity: true)
        Self.decimal(Int64(value.width), to: &self.value)
        self.value.append(UInt8(ascii: "x"))
        Self.decimal(Int64(value.height), to: &self.value)
        endField(name)
    }

    mutating func write(_ name: StaticString, _ value: RGBAColor) {
        self.value.removeAll(keepingCapacity: true)
        for (i, c) in [value.r, value.g, value.b, value.a].enumerated() {
            if i > 0 { self.value.append(UInt8(ascii: ",")) }
            Self.decimal(Int64(c), to: &self.value)
        }
        endField(name)
    }

    mutating func write(_ name: StaticString, _ value: AffineTransform) {
        self.value.removeAll(keepingCapacity: true)
        hexList(value.a, value.b, value.c, value.d)
        self.value.append(UInt8(ascii: ","))
        hexList(value.tx, value.ty)
        endField(name)
    }

    mutating func write(_ name: StaticString, _ value: Rect?) {
        guard let r = value else { return write(name, "none") }
        self.value.removeAll(keepingCapacity: true)
        hexList(r.x, r.y, r.width, r.height)
        endField(name)
    }

    /// A double under a name known only at run time (a filter parameter's path).
    mutating func write(named name: String, _ value: Double) {
        self.value.removeAll(keepingCapacity: true)
        Self.hex(value.bitPattern, to: &self.value)
        bytes.append(contentsOf: name.utf8)
        endValue()
    }

    /// Appends `name=<count>:<value>\n` for the value in `self.value`.
    private mutating func endField(_ name: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        endValue()
    }

    /// Appends `=<count>:<value>\n` for the value in `self.value` (the name is written).
    private mutating func endValue() {
        bytes.append(UInt8(ascii: "="))
        Self.decimal(Int64(value.count), to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        bytes.append(contentsOf: value)
        bytes.append(0x0A)
    }

    /// Bit patterns in hexadecimal, comma-separated (no allocation per value).
    private mutating func hexList(_ a: Double, _ b: Double, _ c: Double? = nil, _ d: Double? = nil) {
        Self.hex(a.bitPattern, to: &value)
        value.append(UInt8(ascii: ","))
        Self.hex(b.bitPattern, to: &value)
        if let c {
            value.append(UInt8(ascii: ","))
            Self.hex(c.bitPattern, to: &value)
        }
        if let d {
            value.append(UInt8(ascii: ","))
            Self.hex(d.bitPattern, to: &value)
        }
    }

    /// `String(v)`: optional minus, then decimal digits.
    static func decimal(_ v: Int64, to out: inout [UInt8]) {
        if v < 0 { out.append(UInt8(ascii: "-")) }
        var m = v.magnitude
        if m < 10 { out.append(UInt8(truncatingIfNeeded: m) &+ 48); return }
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: ≥ 20 decimal digits
        withUnsafeMutableBytes(of: &scratch) { buffer in
            var i = buffer.count
            repeat {
                i -= 1
                let q = m / 10  // a constant divisor: a multiply, not a division
                buffer[i] = UInt8(truncatingIfNeeded: m &- q &* 10) &+ 48
                m = q
            } while m != 0
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[i...]))
        }
    }

    /// `String(v, radix: 16)`: lower-case hexadecimal without leading zeros.
    static func hex(_ v: UInt64, to out: inout [UInt8]) {
        let count = v == 0 ? 1 : (67 - v.leadingZeroBitCount) / 4
        var scratch: (UInt64, UInt64) = (0, 0)  // 16 bytes: 16 hexadecimal digits
        withUnsafeMutableBytes(of: &scratch) { buffer in
            for k in 0..<count {
                let nibble = UInt8(truncatingIfNeeded: v >> UInt64(4 * (count - 1 - k))) & 0xF
                buffer[k] = nibble < 10 ? nibble &+ 48 : nibble &+ 87
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }
}
