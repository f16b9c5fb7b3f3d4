"""Drawing primitives of the look-alike screens: sprites, masks, noise and outlined text.

Everything is float32 BGR in [0, 1] while a screen is composed (blends and lighting
stay linear and never clip half-way), and turned into uint8 once at the end. A sprite
is a colour image and an alpha coverage of the same size; masks are drawn with
OpenCV's anti-aliased lines into uint8 and scaled, which gives soft edges for free.
Noise is made at a low resolution and resized up, so a 1440x3200 texture costs a few
milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

Box = tuple[int, int, int, int]  # x0, y0, x1, y1; x1 and y1 exclusive
Colour = tuple[float, float, float]  # BGR in [0, 1]


@dataclass(frozen=True, eq=False)
class Sprite:
    """A picture to paste: colour (h, w, 3) and coverage (h, w), both float32."""

    bgr: np.ndarray
    alpha: np.ndarray

    @property
    def size(self) -> tuple[int, int]:
        return int(self.alpha.shape[1]), int(self.alpha.shape[0])


def poly_mask(shape: tuple[int, int], points: np.ndarray) -> np.ndarray:
    """Anti-aliased coverage of a polygon given in pixel coordinates (float allowed)."""
    m = np.zeros(shape, np.uint8)
    pts = np.round(np.asarray(points, np.float64) * 16).astype(np.int32).reshape(-1, 1, 2)
    cv2.fillPoly(m, [pts], 255, cv2.LINE_AA, shift=4)
    return m.astype(np.float32) / 255


def ellipse_mask(shape: tuple[int, int], centre: tuple[float, float], axes: tuple[float, float], angle: float = 0.0) -> np.ndarray:
    m = np.zeros(shape, np.uint8)
    c = (int(round(centre[0] * 16)), int(round(centre[1] * 16)))
    a = (max(1, int(round(axes[0] * 16))), max(1, int(round(axes[1] * 16))))
    cv2.ellipse(m, c, a, angle, 0, 360, 255, -1, cv2.LINE_AA, shift=4)
    return m.astype(np.float32) / 255


def rounded_box_mask(shape: tuple[int, int], box: Box, radius: int) -> np.ndarray:
    """Coverage of a rounded rectangle (radius clipped to half the short side)."""
    h, w = shape
    x0, y0, x1, y1 = box
    m = np.zeros((h, w), np.uint8)
    r = int(max(0, min(radius, (x1 - x0) // 2, (y1 - y0) // 2)))
    cv2.rectangle(m, (x0 + r, y0), (x1 - 1 - r, y1 - 1), 255, -1)
    cv2.rectangle(m, (x0, y0 + r), (x1 - 1, y1 - 1 - r), 255, -1)
    if r > 0:
        for cx, cy in ((x0 + r, y0 + r), (x1 - 1 - r, y0 + r), (x0 + r, y1 - 1 - r), (x1 - 1 - r, y1 - 1 - r)):
            cv2.circle(m, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return m.astype(np.float32) / 255


def star_points(cx: float, cy: float, outer: float, inner: float, n: int = 5, turn: float = -np.pi / 2) -> np.ndarray:
    a = turn + np.arange(2 * n) * np.pi / n
    r = np.where(np.arange(2 * n) % 2 == 0, outer, inner)
    return np.stack([cx + r * np.cos(a), cy + r * np.sin(a)], 1)


def regular_points(cx: float, cy: float, r: float, n: int, turn: float, squash: float = 1.0) -> np.ndarray:
    a = turn + np.arange(n) * 2 * np.pi / n
    return np.stack([cx + r * np.cos(a), cy + r * squash * np.sin(a)], 1)


def blend(img: np.ndarray, mask: np.ndarray, colour: Colour | np.ndarray, opacity: float = 1.0) -> None:
    """img = img * (1 - m) + colour * m with m = mask * opacity, in place; `colour` may be
    an image of img's shape."""
    m = (mask * np.float32(opacity))[..., None]
    img *= 1 - m
    img += np.asarray(colour, np.float32) * m


def paste(canvas: np.ndarray, sprite: Sprite, x: int, y: int, clip: Box | None = None, opacity: float = 1.0) -> None:
    """Alpha-blend `sprite` with its top-left corner at (x, y), inside `clip` (default the
    canvas)."""
    h, w = canvas.shape[:2]
    cx0, cy0, cx1, cy1 = clip if clip is not None else (0, 0, w, h)
    cx0, cy0, cx1, cy1 = max(cx0, 0), max(cy0, 0), min(cx1, w), min(cy1, h)
    sw, sh = sprite.size
    x0, y0, x1, y1 = max(x, cx0), max(y, cy0), min(x + sw, cx1), min(y + sh, cy1)
    if x1 <= x0 or y1 <= y0:
        return
    a = sprite.alpha[y0 - y : y1 - y, x0 - x : x1 - x]
    blend(canvas[y0:y1, x0:x1], a, sprite.bgr[y0 - y : y1 - y, x0 - x : x1 - x], opacity)


def fractal_noise(rng: np.random.Generator, shape: tuple[int, int], base: int, octaves: int = 4,
                  persistence: float = 0.55) -> np.ndarray:
    """Value noise in [0, 1], (h, w) float32: octaves of random grids resized up bicubically,
    the coarsest `base` pixels per step."""
    h, w = shape
    out = np.zeros((h, w), np.float32)
    amp, total = 1.0, 0.0
    step = float(max(2, base))
    for _ in range(octaves):
        gh, gw = max(2, int(h / step) + 2), max(2, int(w / step) + 2)
        grid = rng.random((gh, gw), dtype=np.float32)
        big = cv2.resize(grid, (int(gw * step), int(gh * step)), interpolation=cv2.INTER_CUBIC)
        out += amp * big[:h, :w]
        total += amp
        amp *= persistence
        step = max(1.0, step / 2)
    out /= total
    lo, hi = float(out.min()), float(out.max())
    return (out - lo) / max(hi - lo, 1e-6)


def vertical_ramp(h: int, w: int, top: float, bottom: float) -> np.ndarray:
    return np.repeat(np.linspace(top, bottom, h, dtype=np.float32)[:, None], w, 1)


FONTS = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_COMPLEX)


def text_size(text: str, font: int, scale: float, thickness: int) -> tuple[int, int]:
    (tw, th), base = cv2.getTextSize(text, font, scale, thickness)
    return tw, th + base


def outlined_text(img: np.ndarray, text: str, org: tuple[int, int], font: int, scale: float, fill: Colour,
                  outline: Colour | None = (0.05, 0.05, 0.08), thickness: int = 2) -> Box:
    """Text with a dark outline (as games draw scores over the board), blended into the
    float image in place; returns its box. `org` is the bottom-left of the text, as
    OpenCV has it (which draws text into 8-bit masks only, so it goes through a mask of
    the text's own box)."""
    x, y = org
    t = max(1, thickness)
    tw, th = text_size(text, font, scale, t)
    o = max(2, t * 2) if outline is not None else 0
    box = (x - o - 2, y - th - o - 2, x + tw + o + 2, y + th // 2 + o + 2)
    h, w = img.shape[:2]
    bx0, by0, bx1, by1 = max(0, box[0]), max(0, box[1]), min(w, box[2]), min(h, box[3])
    if bx1 <= bx0 or by1 <= by0:
        return box
    shape = (by1 - by0, bx1 - bx0)
    sub = img[by0:by1, bx0:bx1]
    if outline is not None:
        m = np.zeros(shape, np.uint8)
        cv2.putText(m, text, (x - bx0, y - by0), font, scale, 255, t + 2 * o, cv2.LINE_AA)
        blend(sub, m.astype(np.float32) / 255, outline)
    m = np.zeros(shape, np.uint8)
    cv2.putText(m, text, (x - bx0, y - by0), font, scale, 255, t, cv2.LINE_AA)
    blend(sub, m.astype(np.float32) / 255, fill)
    return box


def to_uint8(img: np.ndarray) -> np.ndarray:
    return np.clip(img * 255.0 + 0.5, 0, 255).astype(np.uint8)
