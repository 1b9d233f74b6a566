import ReelScheduling

/// A value bound to a statement parameter (`$n`), in PostgreSQL's text format: the one way a
/// Swift value becomes a parameter, so a statement's binds are typed values (`[job, lease.epoch,
/// kinds]`) and never strings assembled at the call site. `nil` is SQL NULL.
///
/// Arrays bind as array literals with every element quoted (`{"1","2",NULL}`), which
/// PostgreSQL reads as `bigint[]`, `text[]`, … by the statement's cast, whatever the text.
public protocol PGBindable: Sendable {
    /// The parameter's text, or nil for NULL.
    var pgText: String? { get }
}

extension String: PGBindable { public var pgText: String? { self } }
extension Int64: PGBindable { public var pgText: String? { String(self) } }
extension Int: PGBindable { public var pgText: String? { String(self) } }
extension Bool: PGBindable { public var pgText: String? { self ? "true" : "false" } }
extension Double: PGBindable { public var pgText: String? { "\(self)" } }

extension Optional: PGBindable where Wrapped: PGBindable {
    // A switch, not `flatMap(\.pgText)`: a key path costs a lookup per element, and task
    // inserts bind arrays of 15,000 optional keys.
    public var pgText: String? {
        switch self {
        case .some(let value): value.pgText
        case .none: nil
        }
    }
}

extension Array: PGBindable where Element: PGBindable {
    /// Built in one string, escaping only elements that hold `\` or `"`: claims and results
    /// bind arrays of hundreds of ids and hashes, and Foundation's `replacingOccurrences` per
    /// element was a tenth of the coordinator's CPU time under load.
    public var pgText: String? {
        var text = "{"
        text.reserveCapacity(2 + count * 24)
        for (index, element) in enumerated() {
            if index > 0 { text.append(",") }
            guard let value = element.pgText else { text.append("NULL"); continue }
            text.append("\"")
            if value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") }) {
                for character in value.unicodeScalars {
                    if character == "\\" || character == "\"" { text.append("\\") }
                    text.unicodeScalars.append(character)
                }
            } else {
                text.append(value)
            }
            text.append("\"")
        }
        text.append("}")
        return text
    }
}

/// The store's vocabulary binds as its raw value (the text in its column).
extension PGBindable where Self: RawRepresentable, RawValue == String {
    public var pgText: String? { rawValue }
}
extension TaskKind: PGBindable {}
extension TaskState: PGBindable {}
extension JobState: PGBindable {}
extension AgentState: PGBindable {}
