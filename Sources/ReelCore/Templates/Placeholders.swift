/// A string value of a template cut into literal text and `{{name}}` placeholders.
///
/// Inside the braces, spaces around the name are allowed (`{{ name }}`). In a template every
/// `{{` opens a placeholder: one that is never closed, or whose content is not a variable
/// name, is a problem (a typo must not be rendered as text).
enum PlaceholderText {
    enum Piece: Hashable {
        case text(String)
        case placeholder(String)
    }

    /// The pieces of `string` in order (one `.text` piece when it has no placeholder), or what
    /// is wrong with its first malformed placeholder.
    static func pieces(of string: String) -> Result<[Piece], VariableTextError> {
        let scalars = Array(string.unicodeScalars)
        var pieces: [Piece] = []
        var literal = String.UnicodeScalarView()
        var i = 0
        while i < scalars.count {
            guard scalars[i] == "{", i + 1 < scalars.count, scalars[i + 1] == "{" else {
                literal.append(scalars[i])
                i += 1
                continue
            }
            var end = i + 2
            while end + 1 < scalars.count, !(scalars[end] == "}" && scalars[end + 1] == "}") { end += 1 }
            guard end + 1 < scalars.count else {
                return .failure(VariableTextError("a \"{{\" opens a placeholder that is never closed: write {{name}}, with the name of a declared variable"))
            }
            var inner = String.UnicodeScalarView(scalars[(i + 2)..<end])
            while inner.first == " " { inner.removeFirst() }
            while inner.last == " " { inner.removeLast() }
            let name = String(inner)
            guard VariableDeclaration.isValidName(name) else {
                return .failure(VariableTextError("{{\(name)}} is not a placeholder: write {{name}}, with the name of a declared variable "
                                                  + "(letters, digits, _ and -)"))
            }
            if !literal.isEmpty { pieces.append(.text(String(literal))); literal = String.UnicodeScalarView() }
            pieces.append(.placeholder(name))
            i = end + 2
        }
        if !literal.isEmpty || pieces.isEmpty { pieces.append(.text(String(literal))) }
        return .success(pieces)
    }

    /// How a typed value reads inside a longer string: text as is, numbers and times as
    /// written, booleans as `true`/`false`.
    static func text(of value: JSONValue) -> String {
        switch value {
        case .string(let s): s
        case .number(let n): n
        case .bool(let b): b ? "true" : "false"
        case .null: "null"
        case .array, .object: JSONWriter.compact(value)
        }
    }
}
