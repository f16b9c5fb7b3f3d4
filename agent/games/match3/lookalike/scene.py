"""A look-alike screen from its description: layout, slots, pieces, effects, overlays.

A `Scene` says what is where: the screen and board layout, the style of the board
(tile look, slot background, gaps, background kind, a frosted panel or a plain one),
one `Piece` per cell (a tile, a special, a blocker or a hole, with its light, glow,
wiggle or fall), score popups, and what covers the board (a dialog, or a dim with a
popup). `render` paints it, in this order: background, the panel behind the board,
the HUD, slots, halos of glowing pieces, the pieces (a falling piece is drawn up from
its cell, clipped to the board, and blurred along the fall), popups and overlays, then
sensor noise and, sometimes, a JPEG round trip. The random parts of the painting
(noise, textures) come from the Generator passed in, so a scene and a seed give the
same screen.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from agent.games.match3.lookalike.backdrop import background, frost, hud, popup, random_colour
from agent.games.match3.lookalike.paint import (
    Box, Colour, Sprite, blend, outlined_text, paste, rounded_box_mask, text_size, to_uint8,
)  # fmt: skip
from agent.games.match3.lookalike.pieces import (
    TileLook, blocker_sprite, colourless_sprite, glowing, lit, mark, span_sprite, tile_sprite, wiggled,
)  # fmt: skip

SLOTS = ("plain", "checkered", "translucent")
TILE, SPECIAL, COLOURLESS, BLOCKER, HOLE = "tile", "special", "colourless", "blocker", "hole"
SPANNED = "spanned"  # a cell under an obstacle over several cells (Scene.spans): its slot, no piece of its own


@dataclass(frozen=True)
class Layout:
    width: int
    height: int
    rows: int
    cols: int
    cell: int  # pitch, pixels
    bbox: Box  # the cell area: exactly cols*cell by rows*cell

    def cell_box(self, r: int, c: int) -> Box:
        x0, y0 = self.bbox[0] + c * self.cell, self.bbox[1] + r * self.cell
        return x0, y0, x0 + self.cell, y0 + self.cell


@dataclass(frozen=True)
class Piece:
    """What one cell holds and how it is drawn."""

    kind: str = TILE  # TILE, SPECIAL, COLOURLESS, BLOCKER, HOLE or SPANNED
    colour: int = -1  # index into the look's colours (tiles and specials)
    mark: str = ""  # the special's mark, the colourless special's kind, or the blocker's
    brightness: float = 1.0
    gradient: float = 0.0  # brighter at the top by this share
    glow: float = 0.0  # blended toward white by this, with a halo
    wiggle: tuple[float, float, float] | None = None  # degrees, dx, dy
    fall: float = 0.0  # drawn this share of a cell above its cell
    blur: int = 0  # motion blur along the fall, pixels


@dataclass(frozen=True)
class Style:
    look: TileLook
    slots: str  # one of SLOTS
    slot_colours: tuple[Colour, Colour]
    slot_opacity: float
    gap: int  # pixels between slots
    background: str
    frosted: float = 0.0  # the frosted panel's margin around the board, in cells (0: none)
    panel: float = 0.0  # a plain dark panel's margin around the board, in cells (0: none)
    soft_frost: bool = False  # the frosted panel barely tinted, with no rim and a feathered edge
    outline: bool = False  # the panel follows the board's cells (cut corners and notches), not its box


@dataclass(frozen=True)
class Span:
    """An obstacle drawn as one object over rows x cols cells from (r, c)."""

    kind: str  # see pieces.SPANS
    r: int
    c: int
    rows: int
    cols: int


@dataclass(frozen=True)
class Scene:
    layout: Layout
    style: Style
    pieces: tuple[tuple[Piece, ...], ...]
    texts: tuple[tuple[str, int, int, float], ...] = ()  # score popups: text, centre x, y, height px
    dialog: Box | None = None  # a popup over the board
    dim: float = 0.0  # the screen dimmed by this share under the dialog
    jpeg: int = 0  # JPEG quality of a round trip (0: none)
    hud_boxes: tuple[Box, Box] = field(default=((0, 0, 1, 1), (0, 0, 1, 1)))
    spans: tuple[Span, ...] = ()  # obstacles over several cells, drawn over their SPANNED cells


def place(rng: np.random.Generator, width: int, height: int, rows: int, cols: int, cell: int) -> Layout:
    """Centre the board horizontally, somewhere in the middle band vertically."""
    bw, bh = cols * cell, rows * cell
    x0 = (width - bw) // 2 + int(rng.integers(-1, 2)) * int(min((width - bw) // 4, cell // 4))
    lo, hi = int(height * 0.2), int(height * 0.8) - bh
    y0 = int(rng.integers(lo, hi + 1)) if hi > lo else max(0, (height - bh) // 2)
    return Layout(width, height, rows, cols, cell, (x0, y0, x0 + bw, y0 + bh))


def _sprite(style: Style, p: Piece, n: int, rng: np.random.Generator, cache: dict[tuple[object, ...], Sprite]) -> Sprite:
    key = (p.kind, p.colour, p.mark)
    base = cache.get(key)
    if base is None:
        if p.kind == BLOCKER:
            base = blocker_sprite(p.mark, n, rng)
        elif p.kind == COLOURLESS:
            base = colourless_sprite(p.mark, n, rng)
        else:
            base = tile_sprite(style.look, p.colour, n)
            if p.kind == SPECIAL:
                base = mark(base, p.mark, style.look.colours[p.colour], rng)
        cache[key] = base
    s = base
    if p.brightness != 1.0 or p.gradient != 0.0:
        s = lit(s, p.brightness, p.gradient)
    if p.wiggle is not None:
        s = wiggled(s, *p.wiggle)
    return s


def _blurred(s: Sprite, length: int) -> Sprite:
    k = np.full((max(1, length), 1), 1.0 / max(1, length), np.float32)
    pre = cv2.filter2D(s.bgr * s.alpha[..., None], -1, k, borderType=cv2.BORDER_CONSTANT)
    a = cv2.filter2D(s.alpha, -1, k, borderType=cv2.BORDER_CONSTANT)
    return Sprite((pre / np.maximum(a, 1e-4)[..., None]).clip(0, 1).astype(np.float32), a)


def _outline_mask(scene: Scene, origin: tuple[int, int], shape: tuple[int, int], margin: int) -> np.ndarray:
    """A panel that follows the board's cells (holes left out), `margin` pixels past
    them with rounded corners, in the frame of a sub-image at `origin` of `shape`."""
    lay = scene.layout
    m: np.ndarray = np.zeros(shape, np.uint8)
    for r in range(lay.rows):
        for c in range(lay.cols):
            if scene.pieces[r][c].kind != HOLE:
                bx0, by0, bx1, by1 = lay.cell_box(r, c)
                cv2.rectangle(m, (bx0 - origin[0], by0 - origin[1]), (bx1 - 1 - origin[0], by1 - 1 - origin[1]), 255, -1)
    if margin > 0:
        k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * margin + 1, 2 * margin + 1))
        m = np.asarray(cv2.dilate(m, k))
    soft = cv2.GaussianBlur(m.astype(np.float32) / 255, (0, 0), max(1.0, lay.cell / 10))
    return np.clip((soft - 0.5) * 4 + 0.5, 0, 1).astype(np.float32)


def render(scene: Scene, rng: np.random.Generator) -> np.ndarray:
    """The screen, BGR uint8 (height, width, 3)."""
    lay, st = scene.layout, scene.style
    img = background(rng, lay.width, lay.height, st.background)
    x0, y0, x1, y1 = lay.bbox
    cell = lay.cell
    if st.frosted > 0:
        m = int(round(st.frosted * cell))
        fb = (max(0, x0 - m), max(0, y0 - m), min(lay.width, x1 + m), min(lay.height, y1 + m))
        frost(img, fb, rng, cell // 3, soft=st.soft_frost)
    elif st.panel > 0:
        m = int(round(st.panel * cell))
        sub = img[max(0, y0 - m) : y1 + m, max(0, x0 - m) : x1 + m]
        h, w = sub.shape[:2]
        mask = _outline_mask(scene, (max(0, x0 - m), max(0, y0 - m)), (h, w), m) if st.outline else rounded_box_mask((h, w), (0, 0, w, h), cell // 3)
        blend(sub, mask, random_colour(rng, (20, 120), (20, 70)), 0.75)
    hud(img, rng, *scene.hud_boxes)
    g = st.gap
    n = cell - g
    for r in range(lay.rows):
        for c in range(lay.cols):
            if scene.pieces[r][c].kind == HOLE:
                continue
            bx0, by0, _, _ = lay.cell_box(r, c)
            colour = st.slot_colours[(r + c) % 2] if st.slots == "checkered" else st.slot_colours[0]
            sub = img[by0 + g // 2 : by0 + g // 2 + n, bx0 + g // 2 : bx0 + g // 2 + n]
            opacity = st.slot_opacity if st.slots != "translucent" else st.slot_opacity * 0.5
            blend(sub, rounded_box_mask(sub.shape[:2], (0, 0, n, n), n // 8 if g else 0), colour, opacity)
    cache: dict[tuple[object, ...], Sprite] = {}
    drawn: list[tuple[Sprite, int, int]] = []
    for r in range(lay.rows):
        for c in range(lay.cols):
            p = scene.pieces[r][c]
            if p.kind in (HOLE, SPANNED):
                continue
            s = _sprite(st, p, n, rng, cache)
            bx0, by0, _, _ = lay.cell_box(r, c)
            x, y = bx0 + g // 2, by0 + g // 2 - int(round(p.fall * cell))
            if p.glow > 0:
                s, halo = glowing(s, p.glow)
                paste(img, halo, x, y, lay.bbox)
            if p.blur > 1:
                s = _blurred(s, p.blur)
            drawn.append((s, x, y))
    for s, x, y in drawn:
        paste(img, s, x, y, lay.bbox)
    for sp in scene.spans:  # one sprite per kind and size, as games draw them
        key = ("span", sp.kind, sp.rows, sp.cols)
        if key not in cache:
            cache[key] = span_sprite(sp.kind, sp.cols * cell - g, sp.rows * cell - g, rng)
        bx0, by0, _, _ = lay.cell_box(sp.r, sp.c)
        paste(img, cache[key], bx0 + g // 2, by0 + g // 2, lay.bbox)
    for text, cx, cy, px in scene.texts:
        t = max(2, int(px / 8))
        scale = px / max(1, text_size(text, cv2.FONT_HERSHEY_DUPLEX, 1.0, t)[1])
        tw, th = text_size(text, cv2.FONT_HERSHEY_DUPLEX, scale, t)
        outlined_text(img, text, (int(cx - tw / 2), int(cy + th / 2)), cv2.FONT_HERSHEY_DUPLEX, scale,
                      (0.55, 0.95, 1.0), (0.08, 0.05, 0.1), t)  # fmt: skip
    if scene.dim > 0:
        img *= np.float32(1 - scene.dim)
    if scene.dialog is not None:
        popup(img, rng, scene.dialog)
    img += rng.normal(0, 0.008, img.shape[:2]).astype(np.float32)[..., None]
    out = to_uint8(img)
    if scene.jpeg:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, scene.jpeg])
        back = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
        if back is not None:
            out = np.asarray(back, np.uint8)
    return out
