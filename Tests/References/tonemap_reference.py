#!/usr/bin/env python3
"""ITU-R BT.2390's EETF as a tone mapper, in numpy (float64), written from the Recommendation
(BT.2390-10, section 5.4.1), not from Reel's code.

Reads one frame of planar float RGB (ffmpeg's gbrpf32le: G, B, R planes) from --input and
writes the tone-mapped frame to --output as linear light (1.0 = 100 cd/m2, BT.709 primaries) in
the same layout. The input is linear light in BT.709 primaries (--input-transfer linear, the
default), or the non-linear R'G'B' of a BT.2020 PQ or HLG picture (--input-transfer pq|hlg,
--input-primaries bt2020), which this script takes to linear light itself: SMPTE ST 2084's EOTF,
or BT.2100's HLG EOTF (inverse OETF, then the OOTF on the scene luminance Ys with system gamma
1.2 for a 1000 cd/m2 display), then the primaries' RGB-to-RGB matrix derived from their
chromaticities (both D65). Like ffmpeg's tonemap filter, each pixel is first desaturated towards its luma
(weights --luma KR,KG,KB) by how far luma exceeds --desat, then its brightest component is
mapped and all three are scaled by the same factor. The EETF maps the source range
[0, --peak x 100 cd/m2] onto [0, 100 cd/m2] in the PQ domain: source and target black 0.

    tonemap_reference.py --size WxH --peak P --desat D --luma KR,KG,KB --input in.raw --output out.raw
                         [--input-transfer linear|pq|hlg] [--input-primaries bt709|bt2020]
"""
import argparse

import numpy as np

M1 = 2610 / 16384
M2 = 2523 / 4096 * 128
C1 = 3424 / 4096
C2 = 2413 / 4096 * 32
C3 = 2392 / 4096 * 32


def pq_from_linear(y):
    """SMPTE ST 2084 inverse EOTF: luminance / 10000 cd/m2 -> signal."""
    p = np.power(np.maximum(y, 0), M1)
    return np.power((C1 + C2 * p) / (1 + C3 * p), M2)


def linear_from_pq(e):
    """SMPTE ST 2084 EOTF: signal -> luminance / 10000 cd/m2."""
    p = np.power(np.maximum(e, 0), 1 / M2)
    return np.power(np.maximum(p - C1, 0) / (C2 - C3 * p), 1 / M1)


# HLG (ARIB STD-B67 / BT.2100) constants.
HLG_A = 0.17883277
HLG_B = 1 - 4 * HLG_A
HLG_C = 0.5 - HLG_A * np.log(4 * HLG_A)

# CIE 1931 xy of the red, green, blue primaries and the white point.
PRIMARIES = {
    "bt709": ((0.640, 0.330), (0.300, 0.600), (0.150, 0.060), (0.3127, 0.3290)),
    "bt2020": ((0.708, 0.292), (0.170, 0.797), (0.131, 0.046), (0.3127, 0.3290)),
}


def rgb_to_xyz(name):
    """The RGB-to-XYZ matrix of a set of primaries (SMPTE RP 177)."""
    (rx, ry), (gx, gy), (bx, by), (wx, wy) = PRIMARIES[name]
    xyz = lambda x, y: np.array([x / y, 1.0, (1 - x - y) / y])
    m = np.stack([xyz(rx, ry), xyz(gx, gy), xyz(bx, by)], axis=1)
    s = np.linalg.solve(m, xyz(wx, wy))
    return m * s


def linear_from_hlg(r, g, b, luma):
    """BT.2100 HLG EOTF for a 1000 cd/m2 display, in units of 100 cd/m2."""
    def inverse_oetf(e):
        e = np.clip(e, 0, None)
        return np.where(e <= 0.5, e * e / 3, (np.exp((e - HLG_C) / HLG_A) + HLG_B) / 12)
    r, g, b = inverse_oetf(r), inverse_oetf(g), inverse_oetf(b)
    ys = luma[0] * r + luma[1] * g + luma[2] * b
    gain = 1000 / 100 * np.power(np.maximum(ys, 1e-12), 1.2 - 1)
    return r * gain, g * gain, b * gain


def eetf(sig, peak):
    """sig in units of 100 cd/m2; returns the mapped value in the same units."""
    lb, lw, lmin, lmax = 0.0, peak * 100, 0.0, 100.0
    black, white = pq_from_linear(lb / 10000), pq_from_linear(lw / 10000)
    min_lum = (pq_from_linear(lmin / 10000) - black) / (white - black)
    max_lum = (pq_from_linear(lmax / 10000) - black) / (white - black)
    if max_lum >= 1:
        return sig
    e1 = np.clip((pq_from_linear(sig * 100 / 10000) - black) / (white - black), 0, 1)
    ks = 1.5 * max_lum - 0.5
    t = (e1 - ks) / (1 - ks)
    p = (2 * t**3 - 3 * t**2 + 1) * ks + (t**3 - 2 * t**2 + t) * (1 - ks) + (-2 * t**3 + 3 * t**2) * max_lum
    e2 = np.where(e1 < ks, e1, p)
    e3 = e2 + min_lum * (1 - e2) ** 4
    e4 = e3 * (white - black) + black
    return linear_from_pq(e4) * 10000 / 100


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", required=True)
    ap.add_argument("--peak", type=float, required=True)
    ap.add_argument("--desat", type=float, default=2.0)
    ap.add_argument("--luma", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--input-transfer", choices=["linear", "pq", "hlg"], default="linear")
    ap.add_argument("--input-primaries", choices=sorted(PRIMARIES), default="bt709")
    a = ap.parse_args()
    w, h = (int(v) for v in a.size.split("x"))
    kr, kg, kb = (float(v) for v in a.luma.split(","))
    planes = np.fromfile(a.input, dtype="<f4").astype(np.float64).reshape(3, h, w)
    g, b, r = planes
    if a.input_transfer == "pq":
        r, g, b = (linear_from_pq(c) * 10000 / 100 for c in (r, g, b))
    elif a.input_transfer == "hlg":
        # Ys is the scene luminance in the source's own primaries.
        source_luma = rgb_to_xyz(a.input_primaries)[1]
        r, g, b = linear_from_hlg(r, g, b, source_luma)
    if a.input_primaries != "bt709":
        m = np.linalg.solve(rgb_to_xyz("bt709"), rgb_to_xyz(a.input_primaries))
        r, g, b = (m[i, 0] * r + m[i, 1] * g + m[i, 2] * b for i in range(3))
    if a.desat > 0:
        luma = kr * r + kg * g + kb * b
        over = np.maximum(luma - a.desat, 1e-6) / np.maximum(luma, 1e-6)
        r, g, b = (c * (1 - over) + luma * over for c in (r, g, b))
    sig = np.maximum(np.maximum(r, g), np.maximum(b, 1e-6))
    scale = eetf(sig, a.peak) / sig
    out = np.stack([g * scale, b * scale, r * scale]).astype("<f4")
    out.tofile(a.output)


if __name__ == "__main__":
    main()
