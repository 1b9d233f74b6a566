#!/usr/bin/env python3
"""Reference implementations of Reel's filters and blend modes, in numpy (float64).

The tests run this on raw yuv420p frames that ffmpeg extracted, and compare what it computes
with what Reel rendered. Each formula is written here from its definition (docs/composition.md,
"Filters" and "Blend modes"; W3C Compositing and Blending Level 1), not from Reel's code.

Conventions (the "rounding of 4:2:0 output"): a pixel's RGB comes from its own luma and the
chroma sample of its 2x2 block (limited range, the inputs' matrix: --source-matrix, BT.601 by
default, what an untagged SD clip is read as); after the formula, luma is converted per pixel
and chroma from the mean of each 2x2 block's RGB (the output's matrix: --output-matrix, BT.709
by default, what an output is tagged with unless its composition says otherwise), rounded to
8 bits. When the two matrices differ, each input frame is first taken into the output's matrix
by that same convention and rounded to 8 bits, then computed on in the output's matrix: the
picture a filter sees is a source as it enters the frame, 8-bit Y'CbCr in the output's matrix.
(A posterising filter such as toon jumps a whole step where a colour sits on a step's edge, as
the 75 % bars do, so which of the two pictures it sees decides whole steps.)

    filter_reference.py filters  --size WxH --input in.yuv --filters JSON --output ref.yuv [--source-matrix M] [--output-matrix M]
    filter_reference.py blend    --size WxH --bottom b.yuv --top t.yuv --mode MODE --opacity O --output ref.yuv [...]
    filter_reference.py blend    ... [--unsettled mask.yuv]
    filter_reference.py psnr     --size WxH --a a.yuv --b b.yuv [--margin M] [--skip mask.yuv]

`psnr` prints one JSON object: per-plane PSNR over all frames (inside the margin, leaving out
the samples `--skip` marks) and `compared`, the share of samples compared.

`blend --unsettled` writes a mask (raw yuv420p, 255 where set) of the pixels, and of the 2x2
blocks holding one, where colour dodge or burn is unsettled: a channel where they jump between
their extremes, within 3e-4 (about a tenth of an 8-bit step) of it. Dodge of a backdrop of 0
is 0 and of anything above 0 under a source of 1 is 1; burn of a backdrop of 1 is 1 and of
anything below under a source of 0 is 0. There the 8-bit rounding of the inputs decides the
result. For the other modes the mask is empty.
"""
import argparse
import json
import math
import sys

import numpy as np


def read_frames(path, w, h):
    data = np.fromfile(path, dtype=np.uint8)
    size = w * h * 3 // 2
    n = data.size // size
    frames = []
    for k in range(n):
        f = data[k * size:(k + 1) * size]
        y = f[:w * h].reshape(h, w).astype(np.float64)
        u = f[w * h:w * h + w * h // 4].reshape(h // 2, w // 2).astype(np.float64)
        v = f[w * h + w * h // 4:].reshape(h // 2, w // 2).astype(np.float64)
        frames.append((y, u, v))
    return frames


def write_frames(path, frames):
    with open(path, "wb") as out:
        for y, u, v in frames:
            for p in (y, u, v):
                out.write(np.clip(np.rint(p), 0, 255).astype(np.uint8).tobytes())


# Luma weights (KR, KB) of the Y'CbCr matrices: ITU-R BT.601 and BT.709.
MATRICES = {"bt601": (0.299, 0.114), "bt709": (0.2126, 0.0722)}
SOURCE_MATRIX, OUTPUT_MATRIX = "bt601", "bt709"


def to_rgb(y, u, v, matrix=None):
    """0..1 RGB, unclamped, each pixel with its block's chroma."""
    kr, kb = MATRICES[matrix or SOURCE_MATRIX]
    kg = 1 - kr - kb
    cu = np.repeat(np.repeat(u, 2, axis=0), 2, axis=1) - 128
    cv = np.repeat(np.repeat(v, 2, axis=0), 2, axis=1) - 128
    l = (y - 16) / 219
    r = l + 2 * (1 - kr) / 224 * cv
    b = l + 2 * (1 - kb) / 224 * cu
    g = (l - kr * r - kb * b) / kg
    return np.stack([r, g, b], axis=-1)


# How near 0 or 1 an input channel makes colour dodge and burn unsettled (`blend --unsettled`).
UNSETTLED = 3e-4


def into_output(y, u, v):
    """A frame in the inputs' matrix as 8-bit Y'CbCr in the output's (4:2:0 as above)."""
    if SOURCE_MATRIX == OUTPUT_MATRIX:
        return y, u, v
    return tuple(np.clip(np.rint(p), 0, 255) for p in to_yuv(to_rgb(y, u, v, SOURCE_MATRIX), OUTPUT_MATRIX))


def read_inputs(path, w, h):
    """The frames of `path`, in the output's matrix, and that matrix to read them with."""
    return [into_output(*f) for f in read_frames(path, w, h)], OUTPUT_MATRIX


def to_yuv(rgb, matrix=None):
    kr, kb = MATRICES[matrix or OUTPUT_MATRIX]
    kg = 1 - kr - kb
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    y = 16 + 219 * (kr * r + kg * g + kb * b)
    h, w = y.shape
    m = rgb.reshape(h // 2, 2, w // 2, 2, 3).mean(axis=(1, 3))
    luma = kr * m[..., 0] + kg * m[..., 1] + kb * m[..., 2]
    u = 128 + 224 * (m[..., 2] - luma) / (2 * (1 - kb))
    v = 128 + 224 * (m[..., 0] - luma) / (2 * (1 - kr))
    return y, u, v


LUMA = np.array([0.2126, 0.7152, 0.0722])
SEPIA = np.array([[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]])
AFFINE = {"brightness", "contrast", "saturation", "exposure", "hue", "grayscale", "invert", "sepia", "colorMatrix"}


def affine_filter(rgb, f):
    t = f["type"]
    if t == "brightness":
        return rgb + f.get("brightness", 0)
    if t == "contrast":
        return (rgb - 0.5) * f.get("contrast", 1) + 0.5
    if t == "saturation":
        luma = (rgb @ LUMA)[..., None]
        return luma + f.get("saturation", 1) * (rgb - luma)
    if t == "exposure":
        return rgb * 2.0 ** f.get("exposure", 0)
    if t == "hue":
        # Rotation of each colour vector about the grey axis k = (1,1,1)/sqrt(3), right-handed:
        # v cos + (k x v) sin + k (k.v)(1 - cos).
        theta = math.radians(f.get("degrees", 0))
        k = np.ones(3) / math.sqrt(3)
        cross = np.cross(np.broadcast_to(k, rgb.shape), rgb)
        dot = (rgb @ k)[..., None]
        return rgb * math.cos(theta) + cross * math.sin(theta) + k * dot * (1 - math.cos(theta))
    if t == "grayscale":
        return np.repeat((rgb @ LUMA)[..., None], 3, axis=-1)
    if t == "invert":
        return 1 - rgb
    if t == "sepia":
        i = f.get("intensity", 1)
        return rgb + i * (rgb @ SEPIA.T - rgb)
    if t == "colorMatrix":
        m = np.array(f["matrix"], dtype=np.float64)
        i = f.get("intensity", 1)
        out = rgb @ m[:, :3].T + m[:, 3]
        return rgb + i * (out - rgb)
    raise ValueError(t)


def pointwise(rgb, filters):
    """A run of consecutive affine filters is evaluated formula by formula without clamping
    in between and clamped at its end; gamma clamps its input and output."""
    in_affine_run = True  # the picture's RGB enters unclamped
    for f in filters:
        t = f["type"]
        if t in AFFINE:
            rgb = affine_filter(rgb, f)
            in_affine_run = True
            continue
        rgb = np.clip(rgb, 0, 1)
        in_affine_run = False
        if t == "gamma":
            rgb = np.clip(rgb ** f.get("gamma", 1), 0, 1)
        else:
            raise ValueError("no pointwise reference for " + t)
    return np.clip(rgb, 0, 1)


def gaussian_kernel(sigma):
    r = max(1, int(math.ceil(4 * sigma)))
    x = np.arange(-r, r + 1, dtype=np.float64)
    k = np.exp(-x * x / (2 * sigma * sigma))
    return k / k.sum(), r


def gaussian_blur(rgb, sigma):
    """Separable Gaussian, edges clamped (repeated)."""
    k, r = gaussian_kernel(sigma)
    out = rgb
    for axis in (0, 1):
        pad = [(0, 0)] * out.ndim
        pad[axis] = (r, r)
        p = np.pad(out, pad, mode="edge")
        acc = np.zeros_like(out)
        n = out.shape[axis]
        for i, w in enumerate(k):
            acc += w * np.take(p, np.arange(i, i + n), axis=axis)
        out = acc
    return out


def smoothstep(e0, e1, x):
    t = np.clip((x - e0) / (e1 - e0), 0, 1)
    return t * t * (3 - 2 * t)


def vignette(rgb, f):
    """GPUImage: mix(rgb, color, smoothstep(start, end, distance(texcoord, center)))."""
    h, w = rgb.shape[:2]
    cx, cy = f.get("center", {}).get("x", 0.5), f.get("center", {}).get("y", 0.5)
    color = f.get("color", "#000000")
    c = np.array([int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    ty, tx = np.mgrid[0:h, 0:w]
    d = np.hypot((tx + 0.5) / w - cx, (ty + 0.5) / h - cy)
    t = smoothstep(f.get("start", 0.3), f.get("end", 0.75), d)[..., None]
    return rgb + t * (c - rgb)


def pixellate(rgb, size):
    """Each size x size block from the top-left corner takes its mean colour."""
    h, w = rgb.shape[:2]
    out = np.empty_like(rgb)
    for y in range(0, h, size):
        for x in range(0, w, size):
            out[y:y + size, x:x + size] = rgb[y:y + size, x:x + size].reshape(-1, 3).mean(axis=0)
    return out


def sobel_magnitude(plane):
    p = np.pad(plane, 1, mode="edge")
    tl, t, tr = p[:-2, :-2], p[:-2, 1:-1], p[:-2, 2:]
    l, r = p[1:-1, :-2], p[1:-1, 2:]
    bl, b, br = p[2:, :-2], p[2:, 1:-1], p[2:, 2:]
    h = -tl - 2 * t - tr + bl + 2 * b + br
    v = -bl - 2 * l - tl + br + 2 * r + tr
    return np.hypot(h, v)


def apply_filters(rgb, filters):
    run = []
    for f in filters + [None]:
        if f is not None and (f["type"] in AFFINE or f["type"] == "gamma"):
            run.append(f)
            continue
        if run:
            rgb = pointwise(rgb, run)
            run = []
        if f is None:
            break
        t = f["type"]
        if t == "gaussianBlur":
            rgb = np.clip(gaussian_blur(rgb, f.get("sigma", 2)), 0, 1)
        elif t == "vignette":
            rgb = np.clip(vignette(rgb, f), 0, 1)
        elif t == "pixellate":
            rgb = np.clip(pixellate(rgb, int(f.get("size", 16))), 0, 1)
        elif t in ("sobelEdge", "sketch"):
            # GPUImage: a luminance pass (its 8-bit texture clamps it), then the Sobel magnitude.
            luminance = np.clip(np.clip(rgb, 0, 1) @ np.array([0.2125, 0.7154, 0.0721]), 0, 1)
            mag = sobel_magnitude(luminance) * f.get("edgeStrength", 1)
            grey = np.clip(mag if t == "sobelEdge" else 1 - mag, 0, 1)
            rgb = np.repeat(grey[..., None], 3, axis=-1)
        elif t == "toon":
            # GPUImage's toon shader: the Sobel magnitude of the red channel; below the
            # threshold the colour posterised, floor(c·levels + 0.5)/levels; black elsewhere.
            c = np.clip(rgb, 0, 1)
            mag = sobel_magnitude(c[..., 0])
            levels = f.get("levels", 10)
            keep = (mag < f.get("threshold", 0.2))[..., None]
            rgb = np.clip(np.floor(c * levels + 0.5) / levels * keep, 0, 1)
        else:
            raise ValueError("no reference for " + f["type"])
    return rgb


def blend_channel(mode, cb, cs):
    """B(Cb, Cs) of W3C Compositing and Blending Level 1 (add: min(1, Cb + Cs))."""
    if mode == "normal":
        return cs
    if mode == "multiply":
        return cb * cs
    if mode == "screen":
        return cb + cs - cb * cs
    if mode == "overlay":
        return blend_channel("hardLight", cs, cb)
    if mode == "darken":
        return np.minimum(cb, cs)
    if mode == "lighten":
        return np.maximum(cb, cs)
    if mode == "colorDodge":
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(cs >= 1, 1.0, np.minimum(1.0, cb / np.where(cs >= 1, 1, 1 - cs)))
        return np.where(cb <= 0, 0.0, out)
    if mode == "colorBurn":
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(cs <= 0, 0.0, 1 - np.minimum(1.0, (1 - cb) / np.where(cs <= 0, 1, cs)))
        return np.where(cb >= 1, 1.0, out)
    if mode == "hardLight":
        return np.where(cs <= 0.5, cb * 2 * cs, cb + (2 * cs - 1) - cb * (2 * cs - 1))
    if mode == "softLight":
        d = np.where(cb <= 0.25, ((16 * cb - 12) * cb + 4) * cb, np.sqrt(cb))
        return np.where(cs <= 0.5, cb - (1 - 2 * cs) * cb * (1 - cb), cb + (2 * cs - 1) * (d - cb))
    if mode == "difference":
        return np.abs(cb - cs)
    if mode == "exclusion":
        return cb + cs - 2 * cb * cs
    if mode == "add":
        return np.minimum(1.0, cb + cs)
    raise ValueError(mode)


def psnr(a, b):
    mse = np.mean((a - b) ** 2)
    return 999.0 if mse == 0 else 10 * math.log10(255 * 255 / mse)  # 999: identical (JSON has no infinity)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("command", choices=["filters", "blend", "psnr"])
    p.add_argument("--size", required=True)
    p.add_argument("--input"); p.add_argument("--filters"); p.add_argument("--output")
    p.add_argument("--bottom"); p.add_argument("--top"); p.add_argument("--mode"); p.add_argument("--opacity", type=float, default=1)
    p.add_argument("--a"); p.add_argument("--b"); p.add_argument("--margin", type=int, default=0)
    p.add_argument("--unsettled"); p.add_argument("--skip")
    p.add_argument("--source-matrix", choices=sorted(MATRICES), default="bt601")
    p.add_argument("--output-matrix", choices=sorted(MATRICES), default="bt709")
    args = p.parse_args()
    global SOURCE_MATRIX, OUTPUT_MATRIX  # noqa: PLW0603 (one run, one pair of matrices)
    SOURCE_MATRIX, OUTPUT_MATRIX = args.source_matrix, args.output_matrix
    w, h = (int(s) for s in args.size.split("x"))

    if args.command == "filters":
        filters = json.loads(args.filters)
        frames, matrix = read_inputs(args.input, w, h)
        out = [to_yuv(apply_filters(to_rgb(*f, matrix), filters)) for f in frames]
        write_frames(args.output, out)
    elif args.command == "blend":
        out, masks = [], []
        (bottom, matrix), (top, _) = read_inputs(args.bottom, w, h), read_inputs(args.top, w, h)
        for fb, ft in zip(bottom, top):
            cb = np.clip(to_rgb(*fb, matrix), 0, 1)
            cs = np.clip(to_rgb(*ft, matrix), 0, 1)
            blended = blend_channel(args.mode, cb, cs)
            out.append(to_yuv(cb + args.opacity * (blended - cb)))
            if args.unsettled:
                near = np.zeros(cb.shape[:2], dtype=bool)
                if args.mode == "colorDodge":
                    near = ((cb < UNSETTLED) & (cs > 1 - UNSETTLED)).any(axis=-1)
                elif args.mode == "colorBurn":
                    near = ((cb > 1 - UNSETTLED) & (cs < UNSETTLED)).any(axis=-1)
                block = near.reshape(h // 2, 2, w // 2, 2).any(axis=(1, 3))
                masks.append([near * 255.0, block * 255.0, block * 255.0])
        write_frames(args.output, out)
        if args.unsettled:
            write_frames(args.unsettled, masks)
    else:
        fa, fb = read_frames(args.a, w, h), read_frames(args.b, w, h)
        if len(fa) != len(fb) or not fa:
            print(json.dumps({"error": f"{len(fa)} frames against {len(fb)}"}))
            sys.exit(1)
        m = args.margin
        skip = read_frames(args.skip, w, h) if args.skip else None
        planes, compared, total = {}, 0, 0
        for i, name in enumerate("yuv"):
            c = m if i == 0 else m // 2
            crop = lambda p: p[c:p.shape[0] - c, c:p.shape[1] - c].ravel()  # noqa: E731
            a = np.concatenate([crop(f[i]) for f in fa])
            b = np.concatenate([crop(f[i]) for f in fb])
            keep = np.concatenate([crop(f[i]) == 0 for f in skip]) if skip else np.ones(a.shape, dtype=bool)
            planes[name] = psnr(a[keep], b[keep])
            compared += int(keep.sum()); total += keep.size
        planes["compared"] = compared / total
        print(json.dumps(planes))


if __name__ == "__main__":
    main()
