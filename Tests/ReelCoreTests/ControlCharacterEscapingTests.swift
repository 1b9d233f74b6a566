import Testing
import ReelCore
import ReelThreadTesting

/// `String.escapingControlCharacters`: what reaches a terminal or a log from a peer-chosen name.
@Suite(.blocking) struct ControlCharacterEscapingTests {
    static func hex(_ value: UInt32) -> String { "\\u{\(String(value, radix: 16, uppercase: true))}" }

    @Test func everyC0ControlDELAndC1ControlIsEscaped() {
        for value in Array(UInt32(0x00)...0x1F) + Array(UInt32(0x7F)...0x9F) {
            let scalar = Unicode.Scalar(value)!
            let text = "a" + String(Character(scalar)) + "b"
            #expect(text.escapingControlCharacters == "a" + Self.hex(value) + "b", "U+\(String(value, radix: 16))")
        }
    }

    @Test func lineSeparatorsAndBidiControlsAreEscaped() {
        let values: [UInt32] = [0x2028, 0x2029, 0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
                                0x2066, 0x2067, 0x2068, 0x2069]
        for value in values {
            let text = "x" + String(Character(Unicode.Scalar(value)!))
            #expect(text.escapingControlCharacters == "x" + Self.hex(value))
        }
        // "Trojan source": an RLO makes "exe.txt" display reversed; escaped, it shows what it is.
        #expect("invoice\u{202E}txt.exe".escapingControlCharacters == "invoice\\u{202E}txt.exe")
    }

    @Test func escapeSequencesAndNewlinesBecomeVisibleText() {
        #expect("\u{1B}[31mred\u{1B}[0m".escapingControlCharacters == "\\u{1B}[31mred\\u{1B}[0m")
        #expect("\u{1B}]0;pwned\u{07}".escapingControlCharacters == "\\u{1B}]0;pwned\\u{7}")
        #expect("\u{9B}2J".escapingControlCharacters == "\\u{9B}2J") // 8-bit CSI
        #expect("a\r\nlevel=error forged".escapingControlCharacters == "a\\u{D}\\u{A}level=error forged")
        #expect("tab\there".escapingControlCharacters == "tab\\u{9}here")
        #expect("\u{0}".escapingControlCharacters == "\\u{0}")
        // Every result is free of anything it escapes.
        let nasty = (UInt32(0)...0x2070).compactMap(Unicode.Scalar.init).map { String(Character($0)) }.joined()
        let escaped = nasty.escapingControlCharacters
        #expect(!escaped.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.properties.isBidiControl
                                                    || $0.value == 0x2028 || $0.value == 0x2029 })
    }

    @Test func ordinaryNamesAreUnchanged() {
        for name in ["render-01", "张伟的工作室", "Zoë Müller@studio #1", "emoji 🎬 name", "C:\\renders\\a", "", "שלום", "مرحبا"] {
            #expect(name.escapingControlCharacters == name)
        }
    }
}
