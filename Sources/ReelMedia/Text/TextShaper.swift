import CFreeType

/// Splits a paragraph into runs of one font, one script and one bidi level, and shapes runs with
/// HarfBuzz: Arabic letters take their joined forms, Devanagari reorders and forms conjuncts,
/// Latin gets the font's kerning and ligatures.
enum TextShaper {
    /// A maximal stretch of a paragraph's scalars (logical indices) with one font, script and level.
    struct Run {
        var range: Range<Int>
        let face: FontFace
        let script: hb_script_t
        let level: UInt8
        var isRightToLeft: Bool { level % 2 == 1 }
    }

    /// One glyph of a shaped run, in visual order. Distances are 26.6 pixels at the requested
    /// size (bitmap strikes already scaled); `cluster` is the logical index of the first scalar
    /// of the characters it draws.
    struct Glyph {
        let face: FontFace
        let glyph: UInt32
        let cluster: Int
        let xAdvance: Int
        let xOffset: Int
        let yOffset: Int
    }

    /// The runs of `range` in logical order. `faces[i]` is the font chosen for scalar `i`,
    /// `levels` the bidi levels; characters of the Common and Inherited scripts (spaces,
    /// punctuation, digits, combining marks) belong to the run around them.
    static func runs(scalars: [UInt32], faces: [FontFace], levels: [UInt8], in range: Range<Int>) -> [Run] {
        guard !range.isEmpty else { return [] }
        let scripts = resolvedScripts(scalars, in: range)
        var runs: [Run] = []
        for i in range {
            let script = scripts[i - range.lowerBound]
            if let last = runs.last, last.face === faces[i], last.script == script, last.level == levels[i] {
                runs[runs.count - 1].range = last.range.lowerBound..<(i + 1)
            } else {
                runs.append(Run(range: i..<(i + 1), face: faces[i], script: script, level: levels[i]))
            }
        }
        return runs
    }

    /// Each scalar's script, with Common and Inherited taking the script before them (or, at the
    /// start, the first real script after them, or Common when there is none).
    private static func resolvedScripts(_ scalars: [UInt32], in range: Range<Int>) -> [hb_script_t] {
        let funcs = hb_unicode_funcs_get_default()
        var scripts = range.map { hb_unicode_script(funcs, scalars[$0]) }
        func isNeutral(_ s: hb_script_t) -> Bool { s == HB_SCRIPT_COMMON || s == HB_SCRIPT_INHERITED || s == HB_SCRIPT_UNKNOWN }
        var current: hb_script_t? = nil
        for k in scripts.indices {
            if isNeutral(scripts[k]) { if let current { scripts[k] = current } } else { current = scripts[k] }
        }
        // Leading neutrals join the first real script; with none at all (emoji, digits) the run
        // is Common throughout, so a ZWJ (Inherited) does not split an emoji sequence.
        let first = scripts.first(where: { !isNeutral($0) }) ?? HB_SCRIPT_COMMON
        for k in scripts.indices { if isNeutral(scripts[k]) { scripts[k] = first } else { break } }
        return scripts
    }

    /// Shapes one run (its font must already be at the wanted size). The whole paragraph is
    /// given as context, so letters join across run boundaries (e.g. where the font changes).
    static func shape(_ run: Run, scalars: [UInt32]) -> [Glyph] {
        let buffer = hb_buffer_create()
        defer { hb_buffer_destroy(buffer) }
        scalars.withUnsafeBufferPointer { text in
            hb_buffer_add_utf32(buffer, text.baseAddress, Int32(text.count), UInt32(run.range.lowerBound), Int32(run.range.count))
        }
        hb_buffer_guess_segment_properties(buffer)
        // The bidi algorithm, not the script, decides direction: digits inside Arabic stay LTR.
        hb_buffer_set_script(buffer, run.script)
        hb_buffer_set_direction(buffer, run.isRightToLeft ? HB_DIRECTION_RTL : HB_DIRECTION_LTR)
        hb_shape(run.face.hbFont, buffer, nil, 0)

        var count: UInt32 = 0
        guard let infos = hb_buffer_get_glyph_infos(buffer, &count),
              let positions = hb_buffer_get_glyph_positions(buffer, &count) else { return [] }
        let scale = run.face.bitmapScale
        func scaled(_ v: hb_position_t) -> Int { scale == 1 ? Int(v) : Int((Double(v) * scale).rounded()) }
        return (0..<Int(count)).map { k in
            Glyph(face: run.face, glyph: infos[k].codepoint, cluster: Int(infos[k].cluster),
                  xAdvance: scaled(positions[k].x_advance), xOffset: scaled(positions[k].x_offset), yOffset: scaled(positions[k].y_offset))
        }
    }
}
