extension VariableDeclaration {
    /// What is wrong with `value` as this variable's value: its type, then its constraints.
    /// Each problem is a sentence that says what to write instead; empty when the value is good.
    public func problems(of value: JSONValue) -> [String] {
        switch type {
        case .text:
            guard case .string(let text) = value else { return ["must be text (a JSON string), not \(value.typeName)"] }
            var problems: [String] = []
            if let maxLength, text.count > maxLength {
                problems.append("is \(text.count) characters long; at most \(maxLength) are allowed (maxLength): shorten it")
            }
            if let pattern, !TextPattern.matches(text, pattern: pattern) {
                problems.append("\(Self.quoted(text)) does not match the pattern \(pattern): give a value that matches it as a whole")
            }
            return problems
        case .number:
            guard case .number = value else { return ["must be a number, like 42 or -2.5, not \(value.typeName)"] }
            let reader = JSONFieldReader()
            guard let number = reader.double(value, at: "") else { return reader.problems.map(\.message) }
            return limitProblems(.number(number))
        case .duration:
            let reader = JSONFieldReader()
            guard let time = reader.time(value, at: "") else { return reader.problems.map(\.message) }
            return limitProblems(.time(time))
        case .color:
            guard case .string(let text) = value, text.dropFirst().allSatisfy(\.isHexDigit), RGBAColor(hex: text) != nil else {
                return ["must be a colour \"#RRGGBB\" or \"#RRGGBBAA\", like \"#FF8800\", not \(Self.describe(value))"]
            }
            return []
        case .asset:
            guard case .string(let text) = value else { return ["must be a media file's path or URL (a string), not \(value.typeName)"] }
            return text.isEmpty ? ["must not be empty: give a media file's path or URL"] : []
        case .boolean:
            guard case .bool = value else { return ["must be true or false, not \(Self.describe(value))"] }
            return []
        case .enum:
            // Without usable `values` the declaration's problem is reported already.
            guard let values, !values.isEmpty else { return [] }
            let allowed = values.map(Self.quoted).joined(separator: ", ")
            guard case .string(let text) = value, values.contains(text) else {
                return ["must be one of \(allowed), not \(Self.describe(value))"]
            }
            return []
        }
    }

    private func limitProblems(_ value: VariableLimit) -> [String] {
        var problems: [String] = []
        if let min, value.isBelow(min) { problems.append("\(value) is below the minimum \(min) (min): give at least \(min)") }
        if let max, max.isBelow(value) { problems.append("\(value) is above the maximum \(max) (max): give at most \(max)") }
        return problems
    }

    /// The JSON value that the text `text` (given on the command line, `--set name=text`)
    /// means for this variable, or what is wrong with it. The value still has to pass
    /// `problems(of:)`. An asset's relative path is made absolute against `currentDirectory`,
    /// as every other path on the command line is; URLs and absolute paths stay as given.
    public func value(fromText text: String, currentDirectory: String) -> Result<JSONValue, VariableTextError> {
        switch type {
        case .text, .color, .enum:
            return .success(.string(text))
        case .asset:
            guard !text.isEmpty else { return .failure(VariableTextError("must not be empty: give a media file's path or URL")) }
            return .success(.string(Self.absolutePath(text, currentDirectory: currentDirectory)))
        case .boolean:
            switch text {
            case "true": return .success(.bool(true))
            case "false": return .success(.bool(false))
            default: return .failure(VariableTextError("must be true or false, not \(Self.quoted(text))"))
            }
        case .number:
            guard case .number(let number)? = try? JSONParser.parse(text) else {
                return .failure(VariableTextError("must be a number, like 42 or -2.5, not \(Self.quoted(text))"))
            }
            return .success(.number(number))
        case .duration:
            // Written as in a composition: a decimal number of seconds, or "N/D".
            if text.contains("/") { return .success(.string(text)) }
            guard case .number(let number)? = try? JSONParser.parse(text) else {
                return .failure(VariableTextError("must be a time in seconds, like 2.5 or 1001/30000, not \(Self.quoted(text))"))
            }
            return .success(.number(number))
        }
    }

    /// `path` made absolute against `directory`; an absolute path or a URL (`scheme://…`) is kept.
    static func absolutePath(_ path: String, currentDirectory directory: String) -> String {
        if path.hasPrefix("/") || path.contains("://") { return path }
        var relative = Substring(path)
        while relative.hasPrefix("./") { relative = relative.dropFirst(2) }
        return directory.hasSuffix("/") ? directory + relative : directory + "/" + relative
    }

    static func quoted(_ text: String) -> String { JSONWriter.quoted(text) }

    /// A value as it reads in a message: strings quoted, numbers and booleans as written.
    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .string(let s): quoted(s)
        case .number(let n): n
        case .bool(let b): b ? "true" : "false"
        default: value.typeName
        }
    }
}

/// Why a `--set` text cannot be a variable's value: a sentence that says what to write.
public struct VariableTextError: Error, Hashable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}
