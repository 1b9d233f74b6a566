import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A parsed XML document of S3's answers (`ListBucketResult`, `ListPartsResult`, `Error`, …):
/// elements with their text and children, namespaces ignored. S3 uses no attributes that matter
/// to a client, so they are dropped.
struct S3XMLElement: Equatable {
    var name: String
    var text: String = ""
    var children: [S3XMLElement] = []

    /// The first child named `name`.
    func child(_ name: String) -> S3XMLElement? { children.first { $0.name == name } }
    /// Every child named `name`, in order.
    func all(_ name: String) -> [S3XMLElement] { children.filter { $0.name == name } }
    /// The text of the first child named `name`.
    func value(_ name: String) -> String? { child(name)?.text }

    /// Parses a document; `nil` when it is not well-formed XML.
    static func parse(_ bytes: [UInt8]) -> S3XMLElement? {
        let parser = XMLParser(data: Data(bytes))
        parser.shouldProcessNamespaces = true
        let builder = Builder()
        parser.delegate = builder
        guard parser.parse(), let root = builder.root else { return nil }
        return root
    }

    /// `text` escaped for an element's content.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var stack: [S3XMLElement] = []
        var root: S3XMLElement?

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName: String?, attributes: [String: String] = [:]) {
            stack.append(S3XMLElement(name: elementName))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += string
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            guard let element = stack.popLast() else { return }
            if stack.isEmpty {
                root = element
            } else {
                stack[stack.count - 1].children.append(element)
            }
        }
    }
}
