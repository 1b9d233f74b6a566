/// The canonical byte form content keys are hashed from: named fields in the order the
/// caller writes them (a fixed order per key kind), each `name=<byte count>:<value>\n`, so no
/// value can run into the next and two different field lists never give the same bytes.
///
/// Values are written exactly: integers in decimal, rationals reduced as `num/den`, doubles as
/// the hexadecimal IEEE-754 bit pattern (never a rounded decimal), strings as UTF-8. Nothing
/// here iterates a dictionary; callers that must write a map sort its keys first.
///
/// A video chunk's key writes a dozen fields for each of its frames (a 16-hour timeline is
/// 1.7 million frames), so this is written for speed: each value's length is worked out from
/// the value first (digit counts), then the whole field is formatted straight into the buffer
/// through one pointer access — no `String`, no intermediate value buffer, no per-byte append.
/// The bytes are those `String(value)` and `String(bits, radix: 16)` would give
/// (`ContentKeyTests.fieldsAreTheirStringForms`, `ContentKeyReferenceTests`).
struct CanonicalEncoder {
    /// The bytes written are `storage[0..<count]`; the array itself is kept at its capacity
    /// (zero-filled beyond `count`) so fields are written in place.
    private var storage: [UInt8]
    private var count = 0

    init() {
        storage = Array(repeating: 0, count: 4096)
    }

    /// Everything written so far.
    var bytes: [UInt8] { Array(storage[0..<count]) }

    /// How many bytes have been written.
    var byteCount: Int { count }

    /// The bytes written from offset `start` on.
    func bytes(from start: Int) -> [UInt8] { Array(storage[start..<count]) }

    /// Forgets everything written, keeping the memory for the next key.
    mutating func removeAll() { count = 0 }

    /// Appends bytes this encoder wrote before (`bytes(from:)`): a field that repeats.
    mutating func append(_ field: [UInt8]) {
        if count + field.count > storage.count { grow(to: count + field.count) }
        let start = count
        storage.withUnsafeMutableBufferPointer { buffer in
            field.withUnsafeBufferPointer { (buffer.baseAddress! + start).update(from: $0.baseAddress!, count: $0.count) }
        }
        count += field.count
    }

    /// Calls `body` with the bytes written so far, without copying them.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }

    mutating func write(_ name: StaticString, _ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            field(name, length: utf8.count) { p in
                if let base = utf8.baseAddress { p.update(from: base, count: utf8.count) }
            }
        }
    }

    mutating func write(_ name: StaticString, _ value: Int) {
        let v = Int64(value)
        field(name, length: Self.decimalLength(v)) { p in _ = Self.decimal(v, at: p) }
    }

    mutating func write(_ name: StaticString, _ value: Int?) {
        guard let value else { return write(name, "none") }
        write(name, value)
    }

    mutating func write(_ name: StaticString, _ value: Double) {
        let bits = value.bitPattern
        field(name, length: Self.hexLength(bits)) { p in _ = Self.hex(bits, at: p) }
    }

    mutating func write(_ name: StaticString, _ value: Rational) {
        let n = value.num, d = value.den
        field(name, length: Self.decimalLength(n) + 1 + Self.decimalLength(d)) { p in
            let p = Self.decimal(n, at: p)
            p.pointee = UInt8(ascii: "/")
            _ = Self.decimal(d, at: p + 1)
        }
    }

    mutating func write(_ name: StaticString, _ value: PixelSize) {
        let w = Int64(value.width), h = Int64(value.height)
        field(name, length: Self.decimalLength(w) + 1 + Self.decimalLength(h)) { p in
            let p = Self.decimal(w, at: p)
            p.pointee = UInt8(ascii: "x")
            _ = Self.decimal(h, at: p + 1)
        }
    }

    mutating func write(_ name: StaticString, _ value: RGBAColor) {
        let c = (Int64(value.r), Int64(value.g), Int64(value.b), Int64(value.a))
        let length = Self.decimalLength(c.0) + Self.decimalLength(c.1) + Self.decimalLength(c.2) + Self.decimalLength(c.3) + 3
        field(name, length: length) { p in
            var p = Self.decimal(c.0, at: p)
            p.pointee = UInt8(ascii: ","); p = Self.decimal(c.1, at: p + 1)
            p.pointee = UInt8(ascii: ","); p = Self.decimal(c.2, at: p + 1)
            p.pointee = UInt8(ascii: ","); _ = Self.decimal(c.3, at: p + 1)
        }
    }

    mutating func write(_ name: StaticString, _ value: AffineTransform) {
        hexList(name, value.a, value.b, value.c, value.d, value.tx, value.ty)
    }

    mutating func write(_ name: StaticString, _ value: Rect?) {
        guard let r = value else { return write(name, "none") }
        hexList(name, r.x, r.y, r.width, r.height)
    }

    /// A double under a name known only at run time (a filter parameter's path).
    mutating func write(named name: String, _ value: Double) {
        var name = name
        let bits = value.bitPattern
        name.withUTF8 { utf8 in
            field(UnsafeRawBufferPointer(utf8), length: Self.hexLength(bits)) { p in _ = Self.hex(bits, at: p) }
        }
    }

    /// Bit patterns in hexadecimal, comma-separated (four or six of them; no array per call).
    private mutating func hexList(_ name: StaticString, _ a: Double, _ b: Double, _ c: Double, _ d: Double,
                                  _ e: Double? = nil, _ f: Double? = nil) {
        let bits = (a.bitPattern, b.bitPattern, c.bitPattern, d.bitPattern, e?.bitPattern, f?.bitPattern)
        var length = Self.hexLength(bits.0) + Self.hexLength(bits.1) + Self.hexLength(bits.2) + Self.hexLength(bits.3) + 3
        if let e = bits.4 { length += Self.hexLength(e) + 1 }
        if let f = bits.5 { length += Self.hexLength(f) + 1 }
        field(name, length: length) { p in
            var p = Self.hex(bits.0, at: p)
            p.pointee = UInt8(ascii: ","); p = Self.hex(bits.1, at: p + 1)
            p.pointee = UInt8(ascii: ","); p = Self.hex(bits.2, at: p + 1)
            p.pointee = UInt8(ascii: ","); p = Self.hex(bits.3, at: p + 1)
            if let e = bits.4 { p.pointee = UInt8(ascii: ","); p = Self.hex(e, at: p + 1) }
            if let f = bits.5 { p.pointee = UInt8(ascii: ","); p = Self.hex(f, at: p + 1) }
        }
    }

    @inline(__always)
    private mutating func field(_ name: StaticString, length: Int, _ value: (UnsafeMutablePointer<UInt8>) -> Void) {
        field(UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount), length: length, value)
    }

    /// Appends `name=<length>:<value>\n`, where `value` writes exactly `length` bytes at the
    /// pointer it is given.
    @inline(__always)
    private mutating func field(_ name: UnsafeRawBufferPointer, length: Int, _ value: (UnsafeMutablePointer<UInt8>) -> Void) {
        let total = name.count + Self.decimalLength(Int64(length)) + length + 3
        if count + total > storage.count { grow(to: count + total) }
        let start = count
        storage.withUnsafeMutableBufferPointer { buffer in
            var p = buffer.baseAddress! + start
            if let n = name.baseAddress { UnsafeMutableRawPointer(p).copyMemory(from: n, byteCount: name.count) }
            p += name.count
            p.pointee = UInt8(ascii: "=")
            p = Self.decimal(Int64(length), at: p + 1)
            p.pointee = UInt8(ascii: ":")
            value(p + 1)
            p[length + 1] = 0x0A
        }
        count += total
    }

    private mutating func grow(to needed: Int) {
        storage.append(contentsOf: repeatElement(0, count: max(needed, 2 * storage.count) - storage.count))
    }

    /// The length of `String(v)`.
    @inline(__always) static func decimalLength(_ v: Int64) -> Int {
        var m = v.magnitude, n = v < 0 ? 2 : 1
        while m >= 10 { m /= 10; n += 1 }
        return n
    }

    /// The length of `String(v, radix: 16)`.
    @inline(__always) static func hexLength(_ v: UInt64) -> Int {
        v == 0 ? 1 : (67 - v.leadingZeroBitCount) / 4
    }

    /// Writes `String(v)` (optional minus, then decimal digits) at `p`; returns the end.
    @inline(__always) static func decimal(_ v: Int64, at p: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        let end = p + decimalLength(v)
        if v < 0 { p.pointee = UInt8(ascii: "-") }
        var m = v.magnitude, q = end
        repeat {
            q -= 1
            let d = m / 10  // a constant divisor: a multiply, not a division
            q.pointee = UInt8(truncatingIfNeeded: m &- d &* 10) &+ 48
            m = d
        } while m != 0
        return end
    }

    /// Writes `String(v, radix: 16)` (lower case, no leading zeros) at `p`; returns the end.
    @inline(__always) static func hex(_ v: UInt64, at p: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        let count = hexLength(v)
        for k in 0..<count {
            let nibble = UInt8(truncatingIfNeeded: v >> UInt64(4 * (count - 1 - k))) & 0xF
            p[k] = nibble < 10 ? nibble &+ 48 : nibble &+ 87
        }
        return p + count
    }
}
