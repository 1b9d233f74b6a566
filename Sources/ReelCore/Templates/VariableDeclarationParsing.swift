/// Reads the top-level `variables` object of a template (docs/templates.md) from a
/// `JSONFieldReader`, reporting every problem with its path under `variables`.
struct VariableDeclarationDecoding {
    let reader: JSONFieldReader

    static let keys = ["type", "default", "description", "min", "max", "maxLength", "pattern", "values"]

    /// The declarations in file order (unusable ones reported and left out).
    func declarations(_ value: JSONValue, at path: String) -> [VariableDeclaration] {
        guard case .object(let object) = value else {
            reader.report(path, "must be an object mapping variable names to {\"type\": …}, not \(value.typeName)")
            return []
        }
        return object.compactMap { declaration($0.key, $0.value, at: JSONFieldReader.child(path, $0.key)) }
    }

    func declaration(_ name: String, _ value: JSONValue, at path: String) -> VariableDeclaration? {
        let r = reader
        let nameIsValid = VariableDeclaration.isValidName(name)
        if !nameIsValid {
            r.report(path, "\"\(name)\" cannot be a variable name: use letters, digits, _ and -, starting with a letter or _ (like first_name)")
        }
        guard let o = r.object(value, at: path, keys: Self.keys) else { return nil }
        let type = r.required(o, "type", at: path) { r.choice($0, at: $1, VariableType.self) }
        let description = r.optional(o, "description", at: path, r.string)
        guard let type else { return nil }
        var declaration = VariableDeclaration(name: name, type: type, description: description)
        readLimits(o, into: &declaration, at: path)
        readTextConstraints(o, into: &declaration, at: path)
        readValues(o, into: &declaration, at: path)
        if let value = o["default"] {
            let defaultPath = JSONFieldReader.child(path, "default")
            let problems = declaration.problems(of: value)
            problems.forEach { r.report(defaultPath, $0) }
            if problems.isEmpty { declaration.defaultValue = value }
        }
        return nameIsValid ? declaration : nil
    }

    /// `min` and `max`: numbers for number variables, times for durations, and min ≤ max.
    private func readLimits(_ o: JSONObject, into declaration: inout VariableDeclaration, at path: String) {
        let r = reader
        let type = declaration.type
        func limit(_ key: String) -> VariableLimit? {
            guard o.contains(key: key) else { return nil }
            switch type {
            case .number: return r.optional(o, key, at: path, r.double).map(VariableLimit.number)
            case .duration: return r.optional(o, key, at: path, r.time).map(VariableLimit.time)
            default:
                r.report(JSONFieldReader.child(path, key), "only number and duration variables have \(key); this one is \(type.rawValue): remove it")
                return nil
            }
        }
        declaration.min = limit("min")
        declaration.max = limit("max")
        if let min = declaration.min, let max = declaration.max, max.isBelow(min) {
            r.report(JSONFieldReader.child(path, "max"), "is below min (\(min)): make max at least min")
        }
    }

    /// `maxLength` (≥ 1) and `pattern` (a regular expression), for text variables only.
    private func readTextConstraints(_ o: JSONObject, into declaration: inout VariableDeclaration, at path: String) {
        let r = reader
        for key in ["maxLength", "pattern"] where o.contains(key: key) && declaration.type != .text {
            r.report(JSONFieldReader.child(path, key), "only text variables have \(key); this one is \(declaration.type.rawValue): remove it")
        }
        guard declaration.type == .text else { return }
        if let length = r.optional(o, "maxLength", at: path, r.int) {
            if length >= 1 { declaration.maxLength = length } else {
                r.report(JSONFieldReader.child(path, "maxLength"), "must be at least 1, not \(length)")
            }
        }
        if let pattern = r.optional(o, "pattern", at: path, r.string) {
            if let problem = TextPattern.problem(compiling: pattern) {
                r.report(JSONFieldReader.child(path, "pattern"), "is not a regular expression Reel can read (\(problem)): fix its syntax")
            } else {
                declaration.pattern = pattern
            }
        }
    }

    /// `values`: required for enum variables (a non-empty array of distinct strings), refused elsewhere.
    private func readValues(_ o: JSONObject, into declaration: inout VariableDeclaration, at path: String) {
        let r = reader
        let valuesPath = JSONFieldReader.child(path, "values")
        guard declaration.type == .enum else {
            if o.contains(key: "values") { r.report(valuesPath, "only enum variables have values; this one is \(declaration.type.rawValue): remove it") }
            return
        }
        guard o.contains(key: "values") else {
            r.report(valuesPath, "is required for an enum variable: list the allowed strings, like [\"en\", \"fr\"]")
            return
        }
        guard let values = r.optional(o, "values", at: path, { r.array($0, at: $1, r.string) }) else { return }
        if values.isEmpty { r.report(valuesPath, "must list at least one allowed string"); return }
        var seen = Set<String>()
        for (i, value) in values.enumerated() where !seen.insert(value).inserted {
            r.report(JSONFieldReader.element(valuesPath, i), "\"\(value)\" is listed twice: list each value once")
        }
        declaration.values = values
    }
}

extension VariableLimit {
    /// Whether `self` is less than `other` (limits of one variable have the same kind).
    func isBelow(_ other: VariableLimit) -> Bool {
        switch (self, other) {
        case (.number(let a), .number(let b)): a < b
        case (.time(let a), .time(let b)): a < b
        default: false
        }
    }
}
