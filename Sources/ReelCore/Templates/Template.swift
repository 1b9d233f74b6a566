/// A composition with a top-level `variables` object: one design, rendered with different
/// values (docs/templates.md).
///
/// `parse` reads the declarations once; `resolve` gives the variables their values (the
/// defaults, then `--set`), checks them, replaces every `{{name}}` placeholder and decodes
/// the result as a plain composition. Every problem is named by its JSON path in the
/// template file and names the variable, as `reel validate` prints them. Pure: asset
/// values are only strings here; they are probed with the rest of the composition.
public struct Template: Sendable {
    /// The usable declarations, in file order.
    public private(set) var declarations: [VariableDeclaration]
    /// Problems of the `variables` object itself; part of every resolution's problems.
    public private(set) var declarationProblems: [Problem]
    /// Every name under `variables`, usable or not, in file order.
    let names: [String]
    /// The names written with a `default` (a bad default is a problem, not a missing value).
    let namesWithDefault: Set<String>
    /// The composition without its `variables` member, placeholders as written.
    let body: JSONValue

    /// Reads `bytes` as a template. Nil when they are not a JSON object with a top-level
    /// `variables` key: a plain composition (or not JSON at all), which
    /// `Composition.parse` reads exactly as before templates existed.
    public static func parse(_ bytes: [UInt8]) -> Template? {
        guard case .object(let object)? = try? JSONParser.parse(bytes), let variables = object["variables"] else { return nil }
        let reader = JSONFieldReader()
        let declarations = VariableDeclarationDecoding(reader: reader).declarations(variables, at: "variables")
        var names: [String] = [], withDefault = Set<String>()
        if case .object(let members) = variables {
            for member in members {
                names.append(member.key)
                if case .object(let declaration) = member.value, declaration.contains(key: "default") { withDefault.insert(member.key) }
            }
        }
        return Template(declarations: declarations, declarationProblems: reader.problems, names: names, namesWithDefault: withDefault,
                        body: .object(JSONObject(object.members.filter { $0.key != "variables" })))
    }

    /// Parses the UTF-8 encoding of `text`.
    public static func parse(_ text: String) -> Template? { parse(Array(text.utf8)) }

    /// The declaration named `name`.
    public func declaration(named name: String) -> VariableDeclaration? { declarations.first { $0.name == name } }

    /// The composition these values make, or every problem: of the declarations, of each
    /// value (`--set` or default), of each placeholder, each unused variable, and of the
    /// composition's structure after substitution (the checks of `Composition.parse`).
    /// `currentDirectory` makes relative asset paths given in `assignments` absolute.
    public func resolve(_ assignments: [VariableAssignment] = [], currentDirectory: String) -> Result<ResolvedTemplate, CompositionError> {
        var problems = declarationProblems
        let values = assignedValues(assignments, currentDirectory: currentDirectory, problems: &problems)
        return substituted(values, problems: problems)
    }

    /// The composition these values make, for values read and checked already (a batch row's,
    /// each through `VariableDeclaration.value(fromText:currentDirectory:)` or as a JSON value,
    /// then `problems(of:)`): a declared variable missing from `given` takes its default, and
    /// one without a default is a problem. Every other problem is as for `resolve(_:currentDirectory:)`;
    /// those that no value can cause are `structureProblems`, checked once for a whole batch.
    public func resolve(values given: [String: JSONValue]) -> Result<ResolvedTemplate, CompositionError> {
        var problems = declarationProblems
        var values: [String: JSONValue] = [:]
        for declaration in declarations {
            values[declaration.name] = given[declaration.name] ?? declaration.defaultValue
            if values[declaration.name] == nil && !namesWithDefault.contains(declaration.name) {
                problems.append(Problem(path: JSONFieldReader.child("variables", declaration.name),
                                        message: "has no default, so it needs a value"))
            }
        }
        return substituted(values, problems: problems)
    }

    /// What is wrong with the template whatever values it is given: its declarations, placeholders
    /// that are malformed or name no declared variable, asset variables inside longer strings and
    /// variables no placeholder uses. Each is named by its JSON path, as `reel validate` prints them.
    public var structureProblems: [Problem] {
        var substitution = TemplateSubstitution(declarations: declarationsByName, names: names, values: [:])
        _ = substitution.substitute(body, at: "")
        return declarationProblems + substitution.problems + unusedProblems(used: substitution.used)
    }

    /// The JSON path of each string that has placeholders → their variables, in order. A
    /// problem found at such a path after substitution comes from those variables' values.
    public var placeholderOrigins: [String: [String]] {
        var substitution = TemplateSubstitution(declarations: declarationsByName, names: names, values: [:])
        _ = substitution.substitute(body, at: "")
        return substitution.origins
    }

    private var declarationsByName: [String: VariableDeclaration] {
        Dictionary(declarations.map { ($0.name, $0) }) { first, _ in first }
    }

    private func unusedProblems(used: Set<String>) -> [Problem] {
        names.filter { !used.contains($0) && VariableDeclaration.isValidName($0) }.map { name in
            Problem(path: JSONFieldReader.child("variables", name),
                    message: "is declared but no string uses {{\(name)}}: use it, or remove the declaration")
        }
    }

    /// Substitutes `values` and decodes the result; `problems`: those found so far.
    private func substituted(_ values: [String: JSONValue], problems: [Problem]) -> Result<ResolvedTemplate, CompositionError> {
        var problems = problems
        var substitution = TemplateSubstitution(declarations: declarationsByName, names: names, values: values)
        let json = substitution.substitute(body, at: "")
        problems += substitution.problems
        problems += unusedProblems(used: substitution.used)

        let reader = JSONFieldReader()
        let composition = CompositionDecoding(reader: reader).composition(json)
        problems += reader.problems.filter { !substitution.unresolved.contains($0.path) }
            .map { ResolvedTemplate.relabel($0, origins: substitution.origins) }
        guard problems.isEmpty else { return .failure(CompositionError(problems: problems)) }
        guard let composition else { return .failure(CompositionError(problems: [Problem(path: "", message: "not a composition")])) }
        return .success(ResolvedTemplate(composition: composition, json: json, values: values, origins: substitution.origins))
    }

    /// Each declared variable's value: its default, replaced by its `--set`. A variable whose
    /// value is wrong, or that is required and not given, has none (and a problem).
    private func assignedValues(_ assignments: [VariableAssignment], currentDirectory: String,
                                problems: inout [Problem]) -> [String: JSONValue] {
        var values: [String: JSONValue] = [:]
        for declaration in declarations { values[declaration.name] = declaration.defaultValue }
        var given = Set<String>()
        for assignment in assignments {
            let name = assignment.name
            let path = JSONFieldReader.child("variables", name)
            guard given.insert(name).inserted else {
                problems.append(Problem(path: path, message: "--set \(name) is given more than once: give each variable one value"))
                continue
            }
            guard let declaration = declaration(named: name) else {
                if names.contains(name) { values[name] = nil; continue } // its declaration's problem is reported
                let declared = names.isEmpty ? "it declares none" : "it declares \(names.joined(separator: ", "))"
                problems.append(Problem(path: "variables", message: "--set \(assignment): the template has no variable \"\(name)\" (\(declared)): "
                                        + "check the name, or declare it"))
                continue
            }
            values[name] = nil
            switch declaration.value(fromText: assignment.value, currentDirectory: currentDirectory) {
            case .failure(let error):
                problems.append(Problem(path: path, message: "--set \(assignment): \(error.message)"))
            case .success(let value):
                let valueProblems = declaration.problems(of: value)
                problems += valueProblems.map { Problem(path: path, message: "--set \(assignment): \($0)") }
                if valueProblems.isEmpty { values[name] = value }
            }
        }
        for declaration in declarations where declaration.isRequired && !given.contains(declaration.name)
            && !namesWithDefault.contains(declaration.name) {
            problems.append(Problem(path: JSONFieldReader.child("variables", declaration.name),
                                    message: "has no default, so it needs a value: give one with --set \(declaration.name)=…, or declare a default"))
        }
        return values
    }
}

/// A template with its values in place: a plain composition, and what each placeholder became.
public struct ResolvedTemplate: Sendable {
    /// The composition the values make (no `variables`, no placeholders).
    public var composition: Composition
    /// Its JSON, in the template's order: what a farm is sent.
    public var json: JSONValue
    /// Each variable's value (those without a usable value are absent).
    public var values: [String: JSONValue]
    /// Path of each string that had placeholders → their variables.
    let origins: [String: [String]]

    /// The composition's JSON text (`JSONWriter`), which `Composition.parse` reads back to `composition`.
    public var text: String { JSONWriter.text(json) }

    /// `problem` with the variables its value came from named, when its path is a string
    /// that had placeholders (the asset URL of a voice-over that does not exist, a text
    /// variable used where a number belongs…): `… (from {{voice}})`.
    public func relabel(_ problem: Problem) -> Problem { Self.relabel(problem, origins: origins) }

    static func relabel(_ problem: Problem, origins: [String: [String]]) -> Problem {
        guard let names = origins[problem.path] else { return problem }
        return Problem(path: problem.path, message: problem.message + " (from " + names.map { "{{\($0)}}" }.joined(separator: ", ") + ")")
    }
}
