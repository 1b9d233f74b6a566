import Crypto

/// Reading a batch row's cells as its variables' values, and the hash that tells whether a row
/// is still the one rendered before.
public enum RowValues {
    /// The value `cell` gives the variable `declaration`, or what is wrong with it. Text is read
    /// exactly as `--set` reads it, an asset's relative path against `rowsDirectory` (the rows
    /// file's folder); a JSON value (JSON Lines) is taken as written. Then the type and the
    /// constraints are checked (`VariableDeclaration.problems(of:)`).
    public static func value(of cell: BatchRows.Cell, for declaration: VariableDeclaration,
                             rowsDirectory: String) -> (value: JSONValue?, problems: [String]) {
        let value: JSONValue
        switch cell {
        case .text(let text):
            switch declaration.value(fromText: text, currentDirectory: rowsDirectory) {
            case .failure(let error): return (nil, [error.message])
            case .success(let v): value = v
            }
        case .json(.null):
            return (nil, ["is null: give a value, or leave the key out to take the variable's default"])
        case .json(let v):
            value = v
        }
        let problems = declaration.problems(of: value)
        return problems.isEmpty ? (value, []) : (nil, problems)
    }

    /// SHA-256 (64 lower-case hex digits) of a canonical encoding of every declared variable's
    /// value — the row's, or the default — so a row whose values mean the same has the same
    /// hash however they were written: variables by name in code-point order, each with its
    /// type and its value in one form per type (a number as its IEEE-754 bits, a time as a
    /// reduced fraction, a colour in capitals, other values as their text).
    public static func sha256(_ values: [String: JSONValue], declarations: [VariableDeclaration]) -> String {
        var out = CanonicalEncoder()
        out.write("kind", "reel-batch-row-values")
        out.write("version", 1)
        for declaration in declarations.sorted(by: { $0.name.unicodeScalars.map(\.value).lexicographicallyPrecedes($1.name.unicodeScalars.map(\.value)) }) {
            out.write("variable", declaration.name)
            out.write("type", declaration.type.rawValue)
            guard let value = values[declaration.name] else {
                out.write("value", "none")
                continue
            }
            switch (declaration.type, value) {
            case (.number, .number(let text)):
                if let number = Double(text) { out.write("number", number) } else { out.write("text", text) }
            case (.duration, _):
                if let time = JSONFieldReader().time(value, at: "") { out.write("time", time) } else { out.write("json", JSONWriter.compact(value)) }
            case (.color, .string(let text)):
                out.write("text", text.uppercased())
            case (_, .string(let text)):
                out.write("text", text)
            default:
                out.write("json", JSONWriter.compact(value))
            }
        }
        return ContentKey.digest(out)
    }

    /// SHA-256 of `bytes` in lower-case hexadecimal (a template file's, for a manifest).
    public static func sha256(of bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
        }.joined()
    }
}
