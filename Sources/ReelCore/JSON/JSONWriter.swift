/// Writes a `JSONValue` as RFC 8259 text that `JSONParser` reads back to the same value.
///
/// Laid out for people: a container whose one-line form fits in `lineWidth` characters stays
/// on one line (a segment, a time range), larger ones take a line per member, indented by two
/// spaces. Numbers are written as their stored text; members in their order.
public enum JSONWriter {
    public static func text(_ value: JSONValue, lineWidth: Int = 100) -> String {
        var out = ""
        write(value, indent: 0, lineWidth: lineWidth, into: &out)
        out.append("\n")
        return out
    }

    private static func write(_ value: JSONValue, indent: Int, lineWidth: Int, into out: inout String) {
        let inline = compact(value)
        if inline.count + indent <= lineWidth { out += inline; return }
        let pad = String(repeating: " ", count: indent + 2)
        switch value {
        case .array(let items) where !items.isEmpty:
            out += "[\n"
            for (i, item) in items.enumerated() {
                out += pad
                write(item, indent: indent + 2, lineWidth: lineWidth, into: &out)
                out += i + 1 < items.count ? ",\n" : "\n"
            }
            out += String(repeating: " ", count: indent) + "]"
        case .object(let object) where !object.members.isEmpty:
            out += "{\n"
            for (i, member) in object.members.enumerated() {
                out += pad + quoted(member.key) + ": "
                write(member.value, indent: indent + 2, lineWidth: lineWidth, into: &out)
                out += i + 1 < object.members.count ? ",\n" : "\n"
            }
            out += String(repeating: " ", count: indent) + "}"
        default:
            out += inline
        }
    }

    /// The one-line form.
    public static func compact(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let b): b ? "true" : "false"
        case .number(let text): text
        case .string(let s): quoted(s)
        case .array(let items): "[" + items.map(compact).joined(separator: ", ") + "]"
        case .object(let object):
            "{" + object.members.map { quoted($0.key) + ": " + compact($0.value) }.joined(separator: ", ") + "}"
        }
    }

    static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
