/// A parsed JSON document as Reel reads it.
///
/// Unlike `JSONSerialization`/`JSONDecoder` this keeps what a composition needs to be read
/// exactly and reported precisely: numbers stay as their source text (so `0.1` becomes the
/// exact time 1/10, never a binary approximation), and objects keep their members in source
/// order (so problems are reported in the order the user wrote things).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number exactly as written in the source (already checked against the JSON grammar).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// A short name of the value's type, for error messages ("an object", "a string", …).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A JSON object: members in source order; keys are unique (the parser rejects duplicates).
public struct JSONObject: Sendable, Hashable, Sequence {
    /// One `"key": value` pair.
    public struct Member: Sendable, Hashable {
        public var key: String
        public var value: JSONValue
        public init(key: String, value: JSONValue) { self.key = key; self.value = value }
    }

    /// Members in source order.
    public private(set) var members: [Member]

    /// Builds an object; `members` must not repeat a key.
    public init(_ members: [Member] = []) {
        self.members = members
    }

    /// The keys in source order.
    public var keys: [String] { members.map(\.key) }

    /// The value for `key`, or nil when absent. Linear: objects in compositions are small.
    public subscript(key: String) -> JSONValue? {
        members.first { $0.key == key }?.value
    }

    public func contains(key: String) -> Bool { members.contains { $0.key == key } }

    public func makeIterator() -> IndexingIterator<[Member]> { members.makeIterator() }
}
