"""Tile looks of the look-alike screens: pieces, the marks of specials, blockers.

Real games draw their pieces in a few families of style, and calibration has to cope
with all of them, so a screen picks one:

- *gem*: a faceted polygon (octagon, diamond, hexagon...), each facet shaded by how it
  faces a light from the upper left, a lighter table in the middle and a sparkle;
- *candy*: a round or oval body with a radial shading, a dark rim and a specular spot;
- *square*: a rounded square with a bevel (lit top edge, shaded bottom edge) and an
  embossed glyph that differs by colour;
- *icon*: a flat shape (star, heart, drop, moon...) with a thick dark outline and a
  white shine, as cartoon games draw them.

Within a style each colour has its own shape where the style has shapes, as games do
for colour-blind players. A *special of a colour* is its tile with a mark drawn over it
(stripes, a flame ring, a star, a glowing core): it matches as its colour but looks
different. A *colourless special* (a rainbow ball, a dark sphere with sparks) has no
colour. A *blocker* (crate, stone, a jar on a shelf) fills its cell and is no tile.

Colours are BGR in [0, 1]; every random choice comes from the caller's Generator, and
the same arguments draw the same sprite.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from agent.games.match3.lookalike.paint import (
    Colour, Sprite, blend, ellipse_mask, fractal_noise, poly_mask, regular_points, rounded_box_mask, star_points,
)  # fmt: skip

# Colours games use for their pieces (BGR); a screen takes 4..7 of them and shifts each a
# little, so no two screens share exact values.
PALETTE: tuple[tuple[str, Colour], ...] = (
    ("red", (0.15, 0.15, 0.86)),
    ("orange", (0.10, 0.52, 0.98)),
    ("yellow", (0.12, 0.86, 0.97)),
    ("green", (0.22, 0.74, 0.20)),
    ("blue", (0.90, 0.45, 0.10)),
    ("purple", (0.74, 0.20, 0.58)),
    ("white", (0.92, 0.92, 0.92)),
    ("cyan", (0.86, 0.80, 0.20)),
    ("pink", (0.70, 0.42, 0.98)),
)
STYLES = ("gem", "candy", "square", "icon")
MARKS = ("striped", "ring", "star", "core")  # specials of a colour
COLOURLESS = ("rainbow", "sphere")  # colourless specials
BLOCKERS = ("crate", "stone", "jar")
# blockers of the uneven-edge families: the ones above, and a block of ice
EDGE_BLOCKERS = ("crate", "stone", "ice")
# obstacles drawn as one object over several cells: (kind, rows, cols)
SPANS = (("crate", 2, 2), ("shelf", 1, 2), ("shelf", 2, 1), ("slab", 2, 2), ("slab", 1, 2))

GEM_SHAPES = ("octagon", "diamond", "hexagon", "triangle", "square", "round", "pentagon")
CANDY_SHAPES = ("circle", "wide", "tall", "bean", "drop", "circle2", "wide2")
ICON_SHAPES = ("star", "heart", "drop", "circle", "square", "triangle", "moon")

LIGHT = np.array([-0.55, -0.83])  # from the upper left, in image coordinates (y down)
WHITE: Colour = (1.0, 1.0, 1.0)
INK: Colour = (0.07, 0.06, 0.10)


@dataclass(frozen=True)
class TileLook:
    """How one screen draws its tiles: style, the shape of each colour, the size of the
    piece in its cell, and the colours."""

    style: str
    colours: tuple[Colour, ...]
    shapes: tuple[str, ...]  # one per colour
    fill: float  # piece width / cell


def shaded(c: Colour, k: float) -> np.ndarray:
    return np.clip(np.asarray(c, np.float32) * np.float32(k), 0, 1)


def toward(c: Colour | np.ndarray, target: Colour, t: float) -> np.ndarray:
    a = np.asarray(c, np.float32)
    return a + (np.asarray(target, np.float32) - a) * np.float32(t)


def _shape_points(shape: str, n: int, r: float) -> np.ndarray:
    c = n / 2
    if shape == "octagon":
        return regular_points(c, c, r, 8, np.pi / 8)
    if shape == "diamond":
        return np.array([[c, c - r], [c + 0.78 * r, c], [c, c + r], [c - 0.78 * r, c]])
    if shape == "hexagon":
        return regular_points(c, c, r, 6, 0.0)
    if shape == "triangle":
        return regular_points(c, c + 0.15 * r, 1.1 * r, 3, -np.pi / 2)
    if shape == "square":
        return regular_points(c, c, 1.2 * r, 4, np.pi / 4)
    if shape == "pentagon":
        return regular_points(c, c + 0.05 * r, r, 5, -np.pi / 2)
    return regular_points(c, c, r, 14, 0.0)  # round: many facets


def _gem(colour: Colour, shape: str, n: int, fill: float) -> Sprite:
    r = n * fill / 2
    outer = _shape_points(shape, n, r)
    centre = outer.mean(0) + np.array([0.0, -0.06 * r])
    inner = centre + (outer - outer.mean(0)) * 0.5
    bgr = np.zeros((n, n, 3), np.float32)
    alpha = poly_mask((n, n), outer)
    k = len(outer)
    for i in range(k):
        j = (i + 1) % k
        mid = (outer[i] + outer[j]) / 2 - centre
        normal = mid / (np.linalg.norm(mid) + 1e-6)
        shade = 0.72 + 0.45 * float(-normal @ LIGHT)
        facet = np.array([outer[i], outer[j], inner[j], inner[i]])
        m = poly_mask((n, n), facet)
        blend(bgr, m, shaded(colour, shade))
    blend(bgr, poly_mask((n, n), inner), toward(shaded(colour, 1.08), WHITE, 0.18))
    # facet edges, a shade darker, so the gem reads as cut
    edges = np.zeros((n, n), np.uint8)
    t = max(1, n // 60)
    for i in range(k):
        p, q = outer[i], inner[i]
        cv2.line(edges, (int(p[0]), int(p[1])), (int(q[0]), int(q[1])), 255, t, cv2.LINE_AA)
    blend(bgr, edges.astype(np.float32) / 255, shaded(colour, 0.55), 0.6)
    sx, sy = centre + np.array([-0.22 * r, -0.22 * r])
    blend(bgr, ellipse_mask((n, n), (sx, sy), (0.09 * r, 0.05 * r), -35), WHITE, 0.9)
    return Sprite(bgr, alpha)


def _candy_mask(shape: str, n: int, r: float) -> np.ndarray:
    c = n / 2
    if shape in ("wide", "wide2"):
        return ellipse_mask((n, n), (c, c), (r, 0.72 * r))
    if shape == "tall":
        return ellipse_mask((n, n), (c, c), (0.74 * r, r))
    if shape == "bean":
        return np.maximum(ellipse_mask((n, n), (c - 0.3 * r, c), (0.65 * r, 0.7 * r)),
                          ellipse_mask((n, n), (c + 0.3 * r, c), (0.65 * r, 0.7 * r)))  # fmt: skip
    if shape == "drop":
        m = ellipse_mask((n, n), (c, c + 0.25 * r), (0.75 * r, 0.75 * r))
        return np.maximum(m, poly_mask((n, n), np.array([[c, c - r], [c + 0.7 * r, c + 0.2 * r], [c - 0.7 * r, c + 0.2 * r]])))
    return ellipse_mask((n, n), (c, c), (r, r))


def _candy(colour: Colour, shape: str, n: int, fill: float) -> Sprite:
    r = n * fill / 2
    alpha = _candy_mask(shape, n, r)
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
    c = n / 2
    lx, ly = c + LIGHT[0] * 0.35 * r, c + LIGHT[1] * 0.35 * r
    d = np.sqrt((xx - lx) ** 2 + (yy - ly) ** 2) / (1.45 * r)
    k = np.clip(1.18 - 0.75 * d**2, 0.35, 1.25)
    bgr = np.clip(np.asarray(colour, np.float32)[None, None, :] * k[..., None], 0, 1)
    rim = alpha - cv2.erode(alpha, np.ones((3, 3), np.uint8), iterations=max(1, n // 40))
    blend(bgr, np.clip(rim, 0, 1), shaded(colour, 0.45), 0.8)
    blend(bgr, ellipse_mask((n, n), (c - 0.35 * r, c - 0.42 * r), (0.28 * r, 0.14 * r), -30), WHITE, 0.75)
    if shape.endswith("2"):  # a wrapper twist on either side
        for s in (-1, 1):
            tip = np.array([[c + s * 0.9 * r, c], [c + s * 1.3 * r, c - 0.35 * r], [c + s * 1.3 * r, c + 0.35 * r]])
            m = poly_mask((n, n), np.clip(tip, 0, n - 1))
            blend(bgr, m, shaded(colour, 0.85))
            alpha = np.maximum(alpha, m)
    return Sprite(bgr, alpha)


def _glyph_mask(index: int, n: int, r: float) -> np.ndarray:
    c = n / 2
    kinds = (
        lambda: ellipse_mask((n, n), (c, c), (0.32 * r, 0.32 * r)),
        lambda: poly_mask((n, n), regular_points(c, c, 0.42 * r, 4, 0.0)),
        lambda: poly_mask((n, n), star_points(c, c, 0.45 * r, 0.2 * r)),
        lambda: poly_mask((n, n), regular_points(c, c, 0.4 * r, 3, -np.pi / 2)),
        lambda: np.clip(ellipse_mask((n, n), (c, c), (0.42 * r, 0.42 * r)) - ellipse_mask((n, n), (c, c), (0.24 * r, 0.24 * r)), 0, 1),
        lambda: poly_mask((n, n), regular_points(c, c, 0.4 * r, 6, 0.0)),
        lambda: rounded_box_mask((n, n), (int(c - 0.45 * r), int(c - 0.15 * r), int(c + 0.45 * r), int(c + 0.15 * r)), 3),
    )  # fmt: skip
    return kinds[index % len(kinds)]()


def _square(colour: Colour, index: int, n: int, fill: float) -> Sprite:
    r = n * fill / 2
    c = n / 2
    box = (int(c - r), int(c - r), int(c + r), int(c + r))
    alpha = rounded_box_mask((n, n), box, int(0.28 * r))
    bgr = np.empty((n, n, 3), np.float32)
    bgr[:] = np.asarray(colour, np.float32)
    band = max(2, int(0.16 * r))
    top = rounded_box_mask((n, n), (box[0] + band // 2, box[1] + band // 3, box[2] - band // 2, box[1] + band + band // 3), band // 2)
    bottom = rounded_box_mask((n, n), (box[0] + band // 2, box[3] - band - band // 3, box[2] - band // 2, box[3] - band // 3), band // 2)
    blend(bgr, top, toward(colour, WHITE, 0.55), 0.8)
    blend(bgr, bottom, shaded(colour, 0.6), 0.8)
    g = _glyph_mask(index, n, r)
    blend(bgr, cv2.GaussianBlur(g, (0, 0), max(0.8, n / 80)), shaded(colour, 0.62), 0.8)
    blend(bgr, g, toward(colour, WHITE, 0.3), 0.8)
    return Sprite(bgr, alpha)


def _icon_mask(shape: str, n: int, r: float) -> np.ndarray:
    c = n / 2
    if shape == "star":
        return poly_mask((n, n), star_points(c, c + 0.08 * r, 1.05 * r, 0.5 * r))
    if shape == "heart":
        lobes = np.maximum(ellipse_mask((n, n), (c - 0.45 * r, c - 0.3 * r), (0.52 * r, 0.52 * r)),
                           ellipse_mask((n, n), (c + 0.45 * r, c - 0.3 * r), (0.52 * r, 0.52 * r)))  # fmt: skip
        return np.maximum(lobes, poly_mask((n, n), np.array([[c - 0.93 * r, c - 0.15 * r], [c + 0.93 * r, c - 0.15 * r], [c, c + 0.95 * r]])))
    if shape == "drop":
        m = ellipse_mask((n, n), (c, c + 0.3 * r), (0.68 * r, 0.68 * r))
        return np.maximum(m, poly_mask((n, n), np.array([[c, c - r], [c + 0.62 * r, c + 0.1 * r], [c - 0.62 * r, c + 0.1 * r]])))
    if shape == "square":
        return rounded_box_mask((n, n), (int(c - 0.8 * r), int(c - 0.8 * r), int(c + 0.8 * r), int(c + 0.8 * r)), int(0.15 * r))
    if shape == "triangle":
        return poly_mask((n, n), regular_points(c, c + 0.2 * r, 1.05 * r, 3, -np.pi / 2))
    if shape == "moon":
        return np.clip(ellipse_mask((n, n), (c, c), (0.95 * r, 0.95 * r))
                       - ellipse_mask((n, n), (c + 0.45 * r, c - 0.3 * r), (0.7 * r, 0.7 * r)), 0, 1)  # fmt: skip
    return ellipse_mask((n, n), (c, c), (0.9 * r, 0.9 * r))


def _icon(colour: Colour, shape: str, n: int, fill: float) -> Sprite:
    r = n * fill / 2
    body = _icon_mask(shape, n, r * 0.9)
    t = max(2, int(round(n * 0.05)))
    outline = cv2.dilate(body, np.ones((2 * t + 1, 2 * t + 1), np.uint8))
    bgr = np.empty((n, n, 3), np.float32)
    bgr[:] = np.asarray(INK, np.float32)
    ramp = np.linspace(1.12, 0.82, n, dtype=np.float32)[:, None, None]
    blend(bgr, body, np.clip(np.asarray(colour, np.float32) * ramp, 0, 1))
    c = n / 2
    blend(bgr, ellipse_mask((n, n), (c - 0.3 * r, c - 0.35 * r), (0.2 * r, 0.09 * r), -40) * body, WHITE, 0.85)
    return Sprite(bgr, outline)


def tile_sprite(look: TileLook, colour: int, n: int) -> Sprite:
    """Tile `colour` (an index into look.colours) of `look`, in an n x n square."""
    c, shape = look.colours[colour], look.shapes[colour]
    if look.style == "gem":
        return _gem(c, shape, n, look.fill)
    if look.style == "candy":
        return _candy(c, shape, n, look.fill)
    if look.style == "square":
        return _square(c, colour, n, look.fill)
    return _icon(c, shape, n, look.fill)


def shapes_for(style: str, k: int, rng: np.random.Generator) -> tuple[str, ...]:
    pool = {"gem": GEM_SHAPES, "candy": CANDY_SHAPES, "icon": ICON_SHAPES}.get(style, ("square",) * 7)
    order = rng.permutation(len(pool))
    return tuple(pool[i] for i in order[:k])


# -- specials -------------------------------------------------------------------------------


def mark(base: Sprite, kind: str, colour: Colour, rng: np.random.Generator) -> Sprite:
    """`base` with a special's mark: stripes, a flame ring, a star or a glowing core."""
    n = base.size[0]
    bgr, alpha = base.bgr.copy(), base.alpha.copy()
    c = n / 2
    if kind == "striped":
        m = np.zeros((n, n), np.uint8)
        w = max(2, n // 14)
        for k in (-1, 0, 1):
            p = int(c + k * n * 0.2)
            if rng.random() < 0.5:
                cv2.line(m, (0, p), (n - 1, p), 255, w, cv2.LINE_AA)
            else:
                cv2.line(m, (p, 0), (p, n - 1), 255, w, cv2.LINE_AA)
        blend(bgr, m.astype(np.float32) / 255 * alpha, WHITE, 0.8)
    elif kind == "ring":
        ring = np.clip(ellipse_mask((n, n), (c, c), (0.49 * n, 0.49 * n)) - ellipse_mask((n, n), (c, c), (0.4 * n, 0.4 * n)), 0, 1)
        flicker = 0.6 + 0.4 * fractal_noise(rng, (n, n), max(3, n // 6), 2)
        flame = toward((0.10, 0.55, 1.0), (0.5, 0.95, 1.0), 0.5)
        blend(bgr, ring * flicker, flame)
        alpha = np.maximum(alpha, ring * flicker)
    elif kind == "star":
        s = poly_mask((n, n), star_points(c, c, 0.26 * n, 0.11 * n))
        o = cv2.dilate(s, np.ones((3, 3), np.uint8), iterations=max(1, n // 50))
        blend(bgr, o, INK, 0.8)
        blend(bgr, s, (0.75, 0.97, 1.0))
    else:  # core: a glowing centre
        yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
        g = np.exp(-((xx - c) ** 2 + (yy - c) ** 2) / (2 * (0.16 * n) ** 2))
        blend(bgr, g * alpha, toward(colour, WHITE, 0.85), 0.95)
    return Sprite(bgr, alpha)


def colourless_sprite(kind: str, n: int, rng: np.random.Generator) -> Sprite:
    """A special with no colour of its own."""
    c = n / 2
    r = 0.42 * n
    alpha = ellipse_mask((n, n), (c, c), (r, r))
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
    if kind == "rainbow":
        ang = (np.degrees(np.arctan2(yy - c, xx - c)) + 360.0 + float(rng.uniform(0, 360))) % 360.0
        hsv = np.stack([ang / 2, np.full_like(ang, 220), np.full_like(ang, 240)], -1).astype(np.uint8)
        bgr = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR).astype(np.float32) / 255
    else:
        bgr = np.empty((n, n, 3), np.float32)
        bgr[:] = (0.16, 0.13, 0.14)
        for _ in range(9):
            a, d = rng.uniform(0, 2 * np.pi), rng.uniform(0.1, 0.8) * r
            hue = int(rng.integers(0, 180))
            col = cv2.cvtColor(np.array([[[hue, 230, 255]]], np.uint8), cv2.COLOR_HSV2BGR)[0, 0] / 255.0
            blend(bgr, ellipse_mask((n, n), (c + d * np.cos(a), c + d * np.sin(a)), (0.06 * n, 0.06 * n)), col)
    d2 = ((xx - c + 0.3 * r) ** 2 + (yy - c + 0.3 * r) ** 2) / (1.6 * r) ** 2
    bgr = np.clip(bgr * np.clip(1.15 - d2, 0.45, 1.15)[..., None], 0, 1)
    blend(bgr, ellipse_mask((n, n), (c - 0.35 * r, c - 0.4 * r), (0.25 * r, 0.13 * r), -30), WHITE, 0.8)
    return Sprite(bgr.astype(np.float32), alpha)


# -- blockers -------------------------------------------------------------------------------


def blocker_sprite(kind: str, n: int, rng: np.random.Generator) -> Sprite:
    """An obstacle that fills its cell."""
    grain = fractal_noise(rng, (n, n), max(3, n // 5), 3)
    if kind == "crate":
        wood = np.array([0.16, 0.36, 0.62], np.float32)
        bgr = wood[None, None, :] * (0.8 + 0.4 * cv2.resize(grain[:, : max(2, n // 8)], (n, n)))[..., None]
        alpha = rounded_box_mask((n, n), (1, 1, n - 1, n - 1), max(1, n // 16))
        t = max(2, n // 9)
        frame = np.ones((n, n), np.float32)
        frame[t:-t, t:-t] = 0
        m = np.zeros((n, n), np.uint8)
        cv2.line(m, (t, n - t), (n - t, t), 255, t, cv2.LINE_AA)
        blend(bgr, np.maximum(frame, m.astype(np.float32) / 255), wood * 0.62)
        for x, y in ((t // 2, t // 2), (n - t // 2, t // 2), (t // 2, n - t // 2), (n - t // 2, n - t // 2)):
            blend(bgr, ellipse_mask((n, n), (x, y), (t / 4, t / 4)), (0.55, 0.55, 0.6))
        return Sprite(np.clip(bgr, 0, 1).astype(np.float32), alpha)
    if kind == "ice":
        return _ice(n, n, grain, rng)
    if kind == "stone":
        k = 9
        ang = np.sort(rng.uniform(0, 2 * np.pi, k))
        rad = n * rng.uniform(0.4, 0.5, k)
        pts = np.stack([n / 2 + rad * np.cos(ang), n / 2 + rad * np.sin(ang)], 1)
        alpha = poly_mask((n, n), pts)
        g = np.float32(0.42) + np.float32(0.3) * grain
        bgr = np.stack([g * 1.02, g, g * 0.96], -1)
        bgr *= np.linspace(1.15, 0.8, n, dtype=np.float32)[:, None, None]
        m = np.zeros((n, n), np.uint8)
        p = (int(n * rng.uniform(0.3, 0.7)), int(n * 0.2))
        for _ in range(3):
            q = (int(np.clip(p[0] + rng.uniform(-0.2, 0.2) * n, 0, n - 1)), int(min(n - 1, p[1] + 0.2 * n)))
            cv2.line(m, p, q, 255, max(1, n // 40), cv2.LINE_AA)
            p = q
        blend(bgr, m.astype(np.float32) / 255, (0.18, 0.18, 0.2))
        return Sprite(np.clip(bgr, 0, 1).astype(np.float32), alpha)
    # a jar on a shelf: the shelf spans the whole cell so a row of them reads as one shelf
    bgr = np.zeros((n, n, 3), np.float32)
    alpha = np.zeros((n, n), np.float32)
    shelf = np.zeros((n, n), np.float32)
    shelf[int(0.78 * n):, :] = 1
    wood = np.array([0.20, 0.42, 0.66], np.float32)
    blend(bgr, shelf, wood * (0.85 + 0.3 * grain)[..., None])
    alpha = np.maximum(alpha, shelf)
    body = rounded_box_mask((n, n), (int(0.2 * n), int(0.28 * n), int(0.8 * n), int(0.8 * n)), int(0.12 * n))
    glass = np.array([0.85, 0.78, 0.62], np.float32)
    blend(bgr, body, glass * np.linspace(1.1, 0.8, n, dtype=np.float32)[:, None, None], 1.0)
    alpha = np.maximum(alpha, body * 0.92)
    lid = rounded_box_mask((n, n), (int(0.24 * n), int(0.18 * n), int(0.76 * n), int(0.3 * n)), int(0.04 * n) + 1)
    blend(bgr, lid, (0.15, 0.2, 0.7))
    alpha = np.maximum(alpha, lid)
    blend(bgr, rounded_box_mask((n, n), (int(0.28 * n), int(0.34 * n), int(0.36 * n), int(0.7 * n)), 2), WHITE, 0.6)
    return Sprite(bgr, alpha)


def _ice(w: int, h: int, grain: np.ndarray, rng: np.random.Generator) -> Sprite:
    """A block of ice: pale cyan, lighter to the upper left, a bright bevel and cracks."""
    base = np.array([0.96, 0.86, 0.70], np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    ramp = 1.08 - 0.22 * (xx / max(1, w) + yy / max(1, h)) / 2
    g = cv2.resize(grain, (w, h))
    bgr = np.clip(base[None, None, :] * (ramp * (0.9 + 0.15 * g))[..., None], 0, 1)
    n = min(w, h)
    alpha = rounded_box_mask((h, w), (1, 1, w - 1, h - 1), max(2, n // 8)) * np.float32(0.93)
    t = max(2, n // 12)
    bevel = rounded_box_mask((h, w), (1, 1, w - 1, h - 1), max(2, n // 8))
    bevel = np.clip(bevel - rounded_box_mask((h, w), (1 + t, 1 + t, w - 1 - t, h - 1 - t), max(1, n // 10)), 0, 1)
    blend(bgr, bevel, WHITE, 0.7)
    m = np.zeros((h, w), np.uint8)
    p = (int(w * rng.uniform(0.2, 0.5)), int(h * rng.uniform(0.2, 0.4)))
    for _ in range(4):
        q = (int(np.clip(p[0] + rng.uniform(-0.25, 0.3) * w, 0, w - 1)), int(np.clip(p[1] + rng.uniform(0.05, 0.25) * h, 0, h - 1)))
        cv2.line(m, p, q, 255, max(1, n // 45), cv2.LINE_AA)
        p = q
    blend(bgr, m.astype(np.float32) / 255, WHITE, 0.85)
    blend(bgr, ellipse_mask((h, w), (0.3 * w, 0.25 * h), (0.12 * w, 0.05 * h), -30), WHITE, 0.8)
    return Sprite(bgr.astype(np.float32), alpha.astype(np.float32))


def span_sprite(kind: str, w: int, h: int, rng: np.random.Generator) -> Sprite:
    """An obstacle drawn as one object over several cells, w x h pixels: a big crate
    (planks, a frame, corner bolts), a shelf (a board with jars standing on it), or a
    stone slab (one rock, cracks across it)."""
    n = min(w, h)
    grain = fractal_noise(rng, (h, w), max(3, n // 5), 3)
    if kind == "crate":
        wood = np.array([0.14, 0.34, 0.58], np.float32) * np.float32(rng.uniform(0.85, 1.15))
        planks = cv2.resize(grain[:, : max(2, w // 10)], (w, h))
        bgr = wood[None, None, :] * (0.8 + 0.4 * planks)[..., None]
        alpha = rounded_box_mask((h, w), (1, 1, w - 1, h - 1), max(2, n // 14))
        t = max(3, n // 11)
        frame = np.ones((h, w), np.float32)
        frame[t:-t, t:-t] = 0
        m = np.zeros((h, w), np.uint8)
        for k in range(1, 4):  # seams between planks
            y = int(t + k * (h - 2 * t) / 4)
            cv2.line(m, (t, y), (w - t, y), 255, max(1, n // 50), cv2.LINE_AA)
        cv2.line(m, (t, h - t), (w - t, t), 255, t, cv2.LINE_AA)
        blend(bgr, np.maximum(frame, m.astype(np.float32) / 255), wood * 0.6)
        for x, y in ((t, t), (w - t, t), (t, h - t), (w - t, h - t)):
            blend(bgr, ellipse_mask((h, w), (x, y), (t / 3, t / 3)), (0.6, 0.6, 0.65))
        return Sprite(np.clip(bgr, 0, 1).astype(np.float32), alpha)
    if kind == "shelf":
        bgr = np.zeros((h, w, 3), np.float32)
        horizontal = w >= h
        board = np.zeros((h, w), np.float32)
        if horizontal:
            board[int(0.74 * h) :, :] = 1
        else:
            board[:, : max(3, int(0.16 * w))] = 1  # a wall plank, with a shelf per cell
            for k in range(max(1, round(h / w))):
                board[int((k + 0.78) * h / max(1, round(h / w))) : int((k + 1) * h / max(1, round(h / w))) - 1, :] = 1
        wood = np.array([0.18, 0.40, 0.64], np.float32)
        blend(bgr, board, wood * (0.8 + 0.35 * grain)[..., None])
        alpha = board.copy()
        glass = np.array([0.86, 0.80, 0.66], np.float32)
        slots = max(1, int(round((w if horizontal else h) / n)))
        for k in range(slots):
            if horizontal:
                bx0, by0, bx1, by1 = int((k + 0.18) * w / slots), int(0.22 * h), int((k + 0.82) * w / slots), int(0.74 * h)
            else:
                bx0, by0 = int(0.26 * w), int((k + 0.22) * h / slots)
                bx1, by1 = int(0.84 * w), int((k + 0.78) * h / slots)
            body = rounded_box_mask((h, w), (bx0, by0, bx1, by1), max(2, (bx1 - bx0) // 5))
            blend(bgr, body, glass * np.float32(rng.uniform(0.85, 1.1)))
            alpha = np.maximum(alpha, body * 0.92)
            lid = rounded_box_mask((h, w), (bx0 + 2, by0 - max(2, n // 14), bx1 - 2, by0 + max(2, n // 20)), 2)
            blend(bgr, lid, random_lid(rng))
            alpha = np.maximum(alpha, lid)
        return Sprite(np.clip(bgr, 0, 1).astype(np.float32), alpha)
    # slab: one big rock
    k = 14
    ang = np.sort(rng.uniform(0, 2 * np.pi, k))
    rad = rng.uniform(0.44, 0.5, k)
    pts = np.stack([w / 2 + rad * w * np.cos(ang), h / 2 + rad * h * np.sin(ang)], 1)
    alpha = poly_mask((h, w), pts)
    g = np.float32(0.40) + np.float32(0.3) * grain
    bgr = np.stack([g * 1.03, g, g * 0.95], -1) * np.linspace(1.15, 0.8, h, dtype=np.float32)[:, None, None]
    m = np.zeros((h, w), np.uint8)
    p = (int(w * rng.uniform(0.2, 0.4)), int(h * 0.15))
    for _ in range(5):
        q = (int(np.clip(p[0] + rng.uniform(-0.1, 0.25) * w, 0, w - 1)), int(min(h - 1, p[1] + 0.16 * h)))
        cv2.line(m, p, q, 255, max(1, n // 40), cv2.LINE_AA)
        p = q
    blend(bgr, m.astype(np.float32) / 255, (0.16, 0.16, 0.18))
    return Sprite(np.clip(bgr, 0, 1).astype(np.float32), alpha)


def random_lid(rng: np.random.Generator) -> np.ndarray:
    return np.asarray(((0.15, 0.2, 0.7), (0.6, 0.3, 0.15), (0.2, 0.55, 0.2))[int(rng.integers(3))], np.float32)


# -- per-piece light ------------------------------------------------------------------------


def lit(sprite: Sprite, brightness: float, gradient: float) -> Sprite:
    """`sprite` under a light of `brightness`, brighter at the top by `gradient`."""
    n = sprite.alpha.shape[0]
    ramp = np.float32(brightness) * (1 + np.float32(gradient) * np.linspace(0.5, -0.5, n, dtype=np.float32))
    return Sprite(np.clip(sprite.bgr * ramp[:, None, None], 0, 1), sprite.alpha)


def glowing(sprite: Sprite, strength: float) -> tuple[Sprite, Sprite]:
    """A glowing piece (blended toward white) and its halo (to paste under it)."""
    bgr = toward(sprite.bgr, WHITE, strength).astype(np.float32)
    n = sprite.alpha.shape[0]
    halo_a = np.clip(cv2.GaussianBlur(sprite.alpha, (0, 0), max(1.0, n / 10)) * 1.6, 0, 1) * 0.8
    mean = (sprite.bgr * sprite.alpha[..., None]).sum((0, 1)) / max(1.0, float(sprite.alpha.sum()))
    halo = np.empty_like(sprite.bgr)
    halo[:] = toward(mean, WHITE, 0.6)
    return Sprite(bgr, sprite.alpha), Sprite(halo, halo_a.astype(np.float32))


def wiggled(sprite: Sprite, degrees: float, dx: float, dy: float) -> Sprite:
    n = sprite.alpha.shape[0]
    m = np.asarray(cv2.getRotationMatrix2D((n / 2, n / 2), degrees, 1.0), np.float64)
    m[:, 2] += np.array([dx, dy])
    bgr = cv2.warpAffine(sprite.bgr, m, (n, n), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0))
    a = cv2.warpAffine(sprite.alpha, m, (n, n), flags=cv2.INTER_LINEAR, borderValue=0)
    return Sprite(bgr, a)
