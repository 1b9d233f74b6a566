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
    public var pgText: String? { flatMap(\.pgText) }
}

extension Array: PGBindable where Element: PGBindable {
    public var pgText: String? {
        "{" + map { element in
            element.pgText.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
                ?? "NULL"
        }.joined(separator: ",") + "}"
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
