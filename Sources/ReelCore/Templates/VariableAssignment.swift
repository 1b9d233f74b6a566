/// One `--set name=value` of the command line: a variable's name and its value as text,
/// read by the variable's declared type when the template is resolved
/// (`VariableDeclaration.value(fromText:currentDirectory:)`).
public struct VariableAssignment: Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public var value: String

    public init(name: String, value: String) { self.name = name; self.value = value }

    /// Splits `name=value` at the first `=` (the value may contain more, and may be empty);
    /// nil without a `=` or with an empty name.
    public init?(parsing text: String) {
        guard let equals = text.firstIndex(of: "=") else { return nil }
        let name = String(text[..<equals])
        guard !name.isEmpty else { return nil }
        self.init(name: name, value: String(text[text.index(after: equals)...]))
    }

    /// `name=value`, as written on the command line.
    public var description: String { "\(name)=\(value)" }
}
