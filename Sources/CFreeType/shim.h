#ifndef REEL_CFREETYPE_SHIM_H
#define REEL_CFREETYPE_SHIM_H
// Text stack: FreeType (glyphs), fontconfig (font lookup and fallback), HarfBuzz (shaping
// on FreeType faces) and FriBidi (the Unicode bidirectional algorithm).
#include <ft2build.h>
#include FT_FREETYPE_H
#include <fontconfig/fontconfig.h>
#include <hb.h>
#include <hb-ft.h>
#include <fribidi.h>

// FriBidi's paragraph directions are macros over bit masks, which Swift does not import.
static inline FriBidiParType reel_fribidi_par_auto(void) { return FRIBIDI_PAR_ON; }
static inline int reel_fribidi_par_is_rtl(FriBidiParType t) { return FRIBIDI_IS_RTL(t) ? 1 : 0; }
#endif
