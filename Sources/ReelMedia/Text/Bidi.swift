import CFreeType

/// The Unicode bidirectional algorithm (UAX #9) through FriBidi: which characters of a
/// paragraph run right to left, and the order in which runs appear on a line.
enum Bidi {
    /// Resolved embedding levels of one paragraph, one per scalar (even: left to right, odd:
    /// right to left). The paragraph direction comes from its first strong character (rule P2),
    /// so a Hebrew caption is a right-to-left paragraph and digits inside it stay left to right.
    struct Paragraph {
        var levels: [UInt8]
        var isRightToLeft: Bool
    }

    static func paragraph(_ scalars: [UInt32]) -> Paragraph {
        let count = scalars.count
        guard count > 0 else { return Paragraph(levels: [], isRightToLeft: false) }
        var types = [FriBidiCharType](repeating: FriBidiCharType(rawValue: 0), count: count)
        var brackets = [FriBidiBracketType](repeating: 0, count: count)
        var levels = [FriBidiLevel](repeating: 0, count: count)
        var direction = reel_fribidi_par_auto()
        let ok = scalars.withUnsafeBufferPointer { text -> Bool in
            fribidi_get_bidi_types(text.baseAddress, FriBidiStrIndex(count), &types)
            fribidi_get_bracket_types(text.baseAddress, FriBidiStrIndex(count), types, &brackets)
            return fribidi_get_par_embedding_levels_ex(types, brackets, FriBidiStrIndex(count), &direction, &levels) != 0
        }
        // FriBidi fails only when it cannot allocate; plain left to right is then the best guess.
        guard ok else { return Paragraph(levels: [UInt8](repeating: 0, count: count), isRightToLeft: false) }
        return Paragraph(levels: levels.map { UInt8(bitPattern: $0) }, isRightToLeft: reel_fribidi_par_is_rtl(direction) != 0)
    }

    /// Rule L2: the visual order (left to right) of items with the given levels, as indices
    /// into `levels`. From the highest level down to the lowest odd level, every maximal
    /// sequence at that level or higher is reversed.
    static func visualOrder(levels: [UInt8]) -> [Int] {
        var order = Array(levels.indices)
        guard let highest = levels.max(), let lowestOdd = levels.filter({ $0 % 2 == 1 }).min() else { return order }
        var level = highest
        while level >= lowestOdd {
            var k = 0
            while k < order.count {
                guard levels[order[k]] >= level else { k += 1; continue }
                var end = k
                while end < order.count && levels[order[end]] >= level { end += 1 }
                order[k..<end].reverse()
                k = end
            }
            level -= 1
        }
        return order
    }
}
