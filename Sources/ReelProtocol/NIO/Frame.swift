/// One protocol unit as the framer delivers it: a line (without `\n`) and, when the line
/// declared `size=N`, exactly `N` payload bytes.
public struct Frame: Hashable, Sendable {
    public var line: String
    public var payload: [UInt8]?

    public init(line: String, payload: [UInt8]? = nil) {
        self.line = line
        self.payload = payload
    }

    /// The payload length a header line declares (§1): the value of a `size=` argument on any
    /// line but `ERR` (whose free text could contain anything).
    /// - Throws: `.malformed` for a non-decimal size, `.payloadTooLarge` above `maxPayloadLength`.
    static func declaredPayloadLength(of line: String, maxPayloadLength: Int) throws(ReelProtocolError) -> Int? {
        guard let text = sizeArgument(of: line) else { return nil }
        guard let size = ProtocolLine.canonicalInteger(text) else {
            throw ReelProtocolError(.malformed, "size=\(text) is not a byte count")
        }
        guard size <= maxPayloadLength else {
            throw ReelProtocolError(.payloadTooLarge, "size=\(size) exceeds \(maxPayloadLength) bytes")
        }
        return Int(size)
    }

    /// The raw text of a line's `size=` argument, if it has one (any line but `ERR`): the one
    /// thing that makes a line declare a payload (§1).
    static func sizeArgument(of line: String) -> String? {
        guard !(line == "ERR" || line.hasPrefix("ERR ")) else { return nil }
        for token in line.split(separator: " ").dropFirst() where token.hasPrefix("size=") {
            return String(token.dropFirst(5))
        }
        return nil
    }
}
