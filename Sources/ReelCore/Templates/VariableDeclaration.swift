/// One variable of a template, as declared under the composition's top-level `variables`
/// (docs/templates.md): its type, its default and its constraints.
///
/// A variable without a default is required: every render must give it a value. The
/// constraints that apply depend on the type (`min`/`max` for numbers and durations,
/// `maxLength`/`pattern` for text, `values` for enums); the parser reports any other.
public struct VariableDeclaration: Hashable, Sendable {
    /// The name placeholders use: `{{name}}`.
    public var name: String
    public var type: VariableType
    /// The value used when none is given, already checked against the type and constraints;
    /// nil for a required variable.
    public var defaultValue: JSONValue?
    /// What the variable is for (free text, for people and tools).
    public var description: String?
    /// Least and greatest allowed value (number and duration variables).
    public var min: VariableLimit?
    public var max: VariableLimit?
    /// Longest allowed text, in characters (text variables).
    public var maxLength: Int?
    /// A regular expression the whole text must match (text variables).
    public var pattern: String?
    /// The allowed values (enum variables; never empty).
    public var values: [String]?

    public init(name: String, type: VariableType, defaultValue: JSONValue? = nil, description: String? = nil,
                min: VariableLimit? = nil, max: VariableLimit? = nil, maxLength: Int? = nil, pattern: String? = nil,
                values: [String]? = nil) {
        self.name = name; self.type = type; self.defaultValue = defaultValue; self.description = description
        self.min = min; self.max = max; self.maxLength = maxLength; self.pattern = pattern; self.values = values
    }

    /// Whether every render must give a value.
    public var isRequired: Bool { defaultValue == nil }
}

/// What a variable holds, and so how its value is written and checked.
public enum VariableType: String, Hashable, Sendable, CaseIterable {
    /// Any string (`maxLength`, `pattern`).
    case text
    /// A JSON number (`min`, `max`).
    case number
    /// `"#RRGGBB"` or `"#RRGGBBAA"`, as colours are written everywhere in a composition.
    case color
    /// A media file's path or URL; on the command line a relative path is relative to the
    /// current directory.
    case asset
    /// A time as compositions write it: seconds with at most 6 decimals, or `"N/D"` (`min`, `max`).
    case duration
    /// `true` or `false`.
    case boolean
    /// One of the strings in `values`.
    case `enum`
}

/// A `min` or `max`: a number for number variables, an exact time for durations.
public enum VariableLimit: Hashable, Sendable, CustomStringConvertible {
    case number(Double)
    case time(Rational)

    public var description: String {
        switch self {
        case .number(let d): d == d.rounded() && d.magnitude < 1e15 ? String(Int64(d)) : String(d)
        case .time(let t): TimeFormatting.seconds(t)
        }
    }
}

extension VariableDeclaration {
    /// Letters, digits, `_` and `-`, starting with a letter or `_`: a name that reads the same in
    /// a placeholder, on the command line (`--set name=…`) and as a column heading.
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || first.properties.isAlphabetic else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || $0 == "-" || $0.properties.isAlphabetic || ("0"..."9").contains($0) }
    }
}
