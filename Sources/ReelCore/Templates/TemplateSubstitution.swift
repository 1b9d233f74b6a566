/// Replaces the `{{name}}` placeholders in every string value of a template's body
/// (docs/templates.md, "Placeholders"), collecting every problem with the JSON path of the
/// string it is in.
///
/// A string that is exactly one placeholder becomes the variable's typed value (a number
/// stays a JSON number, a boolean a boolean); a placeholder inside a longer string is
/// replaced by its value as text. Object keys are never substituted. Used once, for one
/// resolution.
struct TemplateSubstitution {
    /// Usable declarations by name.
    let declarations: [String: VariableDeclaration]
    /// Every name under `variables`, usable or not (a broken declaration is reported there,
    /// not again at each placeholder).
    let names: [String]
    /// The value of each declared variable that has a good one.
    let values: [String: JSONValue]

    private(set) var problems: [Problem] = []
    /// The variables some placeholder names.
    private(set) var used: Set<String> = []
    /// Path of each string that had placeholders → their variables, in order.
    private(set) var origins: [String: [String]] = [:]
    /// Paths of strings left as written because a placeholder could not be replaced (their
    /// problem is already reported; the composition's own complaint about them would be noise).
    private(set) var unresolved: Set<String> = []

    init(declarations: [String: VariableDeclaration], names: [String], values: [String: JSONValue]) {
        self.declarations = declarations; self.names = names; self.values = values
    }

    mutating func substitute(_ value: JSONValue, at path: String) -> JSONValue {
        switch value {
        case .string(let s):
            return string(s, at: path)
        case .array(let items):
            var out: [JSONValue] = []
            for (i, item) in items.enumerated() { out.append(substitute(item, at: JSONFieldReader.element(path, i))) }
            return .array(out)
        case .object(let object):
            var members: [JSONObject.Member] = []
            for member in object { members.append(.init(key: member.key, value: substitute(member.value, at: JSONFieldReader.child(path, member.key)))) }
            return .object(JSONObject(members))
        case .null, .bool, .number:
            return value
        }
    }

    private mutating func string(_ s: String, at path: String) -> JSONValue {
        let pieces: [PlaceholderText.Piece]
        switch PlaceholderText.pieces(of: s) {
        case .failure(let error):
            report(path, error.message)
            unresolved.insert(path)
            return .string(s)
        case .success(let p):
            pieces = p
        }
        var placeholders: [String] = []
        for case .placeholder(let name) in pieces where !placeholders.contains(name) { placeholders.append(name) }
        guard !placeholders.isEmpty else { return .string(s) }
        origins[path] = placeholders

        var resolvable = true
        for name in placeholders {
            guard names.contains(name) else {
                let declared = names.isEmpty ? "it declares none" : "it declares \(names.joined(separator: ", "))"
                report(path, "{{\(name)}} is not a declared variable: declare \"\(name)\" under variables, or use a declared one (\(declared))")
                resolvable = false
                continue
            }
            used.insert(name)
            // A variable without a usable value has its problem reported under `variables`.
            if values[name] == nil { resolvable = false }
        }
        if pieces.count == 1, case .placeholder(let name) = pieces[0], resolvable, let value = values[name] {
            return value
        }
        // (A string that is exactly one placeholder is whole, even when it has no value.)
        for name in placeholders where pieces.count > 1 && declarations[name]?.type == .asset {
            report(path, "{{\(name)}} is an asset variable, so it must be the whole string, \"{{\(name)}}\" "
                   + "(its path is resolved on its own): use a text variable for part of a path")
            resolvable = false
        }
        guard resolvable else {
            unresolved.insert(path)
            return .string(s)
        }
        var text = ""
        for piece in pieces {
            switch piece {
            case .text(let literal): text += literal
            case .placeholder(let name): text += values[name].map(PlaceholderText.text) ?? ""
            }
        }
        return .string(text)
    }

    private mutating func report(_ path: String, _ message: String) {
        problems.append(Problem(path: path, message: message))
    }
}
