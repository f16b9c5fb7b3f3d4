"""The simulated phone's match-3 screen: layout, sprites, background and frames.

A frame is a cached static background, the tiles blitted on top (a still board and
an animation frame are both just a list of `DrawTile`s), the header numbers, and an
optional game-over card. Everything expensive (sprites at a cell size, the
background at a screen size) is rendered once and cached, so a full 1080x2400 frame
costs a few milliseconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from agent.games.drawing import blend, rounded_mask

from agent.games.match3.board import MAX_SIZE, MAX_TYPES, MIN_SIZE, Board
from agent.games.match3.hud import FONT, Hud, draw_value, hud_texts

Box = tuple[int, int, int, int]  # x0, y0, x1, y1; x1/y1 exclusive

TITLE = "GEM CASCADE"
MIN_CELL_PX = 12  # below this the tiles are unreadable blobs


# -- layout -----------------------------------------------------------------------
@dataclass(frozen=True)
class Layout:
    """Where everything is on a screen of one size, for a board of one shape."""

    width: int
    height: int
    rows: int
    cols: int
    cell_px: int
    board_bbox: Box  # exactly cols*cell_px by rows*cell_px
    panel_bbox: Box  # the rounded board panel: board_bbox plus padding
    header_bbox: Box  # title and both counters
    steps_panel: Box  # the STEPS card (label and value)
    score_panel: Box
    steps_box: Box  # where the steps value is drawn (what `read_hud` reads)
    score_box: Box
    hud_scale: float  # font scale / thickness of the values
    hud_thickness: int
    counter_label: str = "STEPS"  # what the left card counts down: STEPS, or MOVES (classic)

    @property
    def screen_size(self) -> tuple[int, int]:
        return self.width, self.height

    def cell_center(self, row: float, col: float) -> tuple[float, float]:
        """Screen centre of a cell; fractional and negative rows are fine (for animation)."""
        x0, y0, _, _ = self.board_bbox
        return x0 + (col + 0.5) * self.cell_px, y0 + (row + 0.5) * self.cell_px

    def cell_at(self, x: float, y: float) -> tuple[int, int] | None:
        x0, y0, x1, y1 = self.board_bbox
        if not (x0 <= x < x1 and y0 <= y < y1):
            return None
        return int((y - y0) // self.cell_px), int((x - x0) // self.cell_px)


def layout_for(
    width: int = 1080, height: int = 2400, rows: int = 8, cols: int = 8, counter_label: str = "STEPS"
) -> Layout:
    """Lay the game out like a phone game: status strip, header, then the board centred
    horizontally and sized by whichever of width or height runs out first."""
    if not (MIN_SIZE <= rows <= MAX_SIZE and MIN_SIZE <= cols <= MAX_SIZE):
        raise ValueError(f"board is {MIN_SIZE}..{MAX_SIZE} rows and columns, got {rows}x{cols}")
    if width < 160 or height < 160:
        raise ValueError(f"screen {width}x{height} is too small for a game (at least 160x160)")
    # One design unit scales the chrome: the width of a 1:2 phone, so a wide tablet's
    # header does not grow taller than a phone's relative to its height.
    u = min(width, height / 2)
    margin = max(6, round(width * 0.04))
    status_h = round(u * 0.06)
    header_y0, header_y1 = status_h, status_h + round(u * 0.27)

    top = header_y1 + round(u * 0.04)
    bottom = height - round(u * 0.12)
    # 0.3 of a cell goes to the panel's padding on either side.
    cell = int(min((width - 2 * margin) / (cols + 0.3), (bottom - top) / (rows + 0.3)))
    if cell < MIN_CELL_PX:
        raise ValueError(f"screen {width}x{height} leaves {cell}px cells for a {rows}x{cols} board")
    pad = max(2, round(cell * 0.15))
    bw, bh = cols * cell, rows * cell
    bx0 = (width - bw) // 2
    spare = (bottom - top) - bh - 2 * pad
    # A little above centre, where games put the board on a tall screen.
    by0 = top + pad + int(spare * 0.35)

    # The header is as wide as the panel, but never narrower than 0.9u (a narrow board on
    # a landscape screen must still leave room for a seven-digit score).
    hx0 = min(bx0 - pad, max(margin, (width - round(u * 0.9)) // 2))
    header = (hx0, header_y0, width - hx0, header_y1)
    hx1, hy0, hy1 = header[2], header_y0, header_y1
    gap = max(4, round(u * 0.03))
    card_w = (hx1 - hx0 - 3 * gap) // 2
    card_y0, card_y1 = hy0 + round(u * 0.11), hy1 - round(u * 0.025)
    steps_panel = (hx0 + gap, card_y0, hx0 + gap + card_w, card_y1)
    score_panel = (hx1 - gap - card_w, card_y0, hx1 - gap, card_y1)
    label_h = round(u * 0.045)
    value_pad = max(2, round(u * 0.006))

    def value_box(p: Box) -> Box:
        return (p[0] + value_pad, p[1] + label_h, p[2] - value_pad, p[3] - value_pad)

    steps_box, score_box = value_box(steps_panel), value_box(score_panel)
    value_h = score_box[3] - score_box[1]
    # Hershey simplex digits are ~22 px tall at scale 1; aim for half the value box.
    hud_scale = round(value_h * 0.5 / 22, 2)
    hud_thickness = max(1, round(hud_scale * 1.9))
    return Layout(
        width=width,
        height=height,
        rows=rows,
        cols=cols,
        cell_px=cell,
        board_bbox=(bx0, by0, bx0 + bw, by0 + bh),
        panel_bbox=(bx0 - pad, by0 - pad, bx0 + bw + pad, by0 + bh + pad),
        header_bbox=header,
        steps_panel=steps_panel,
        score_panel=score_panel,
        steps_box=steps_box,
        score_box=score_box,
        hud_scale=hud_scale,
        hud_thickness=hud_thickness,
        counter_label=counter_label,
    )


# -- sprites ----------------------------------------------------------------------
# BGR. Chosen to sit far apart in Lab (hue and lightness), so a classifier tells them
# apart even with JPEG noise; the shapes differ too, for people and for shape features.
TILE_COLORS: tuple[tuple[int, int, int], ...] = (
    (48, 48, 226),  # 0 red circle
    (70, 196, 58),  # 1 green rounded square
    (222, 112, 32),  # 2 blue diamond
    (40, 218, 248),  # 3 yellow triangle
    (196, 60, 150),  # 4 purple hexagon
    (20, 132, 255),  # 5 orange star
    (226, 222, 60),  # 6 cyan cross
    (196, 130, 255),  # 7 pink heart
)
TILE_NAMES = ("red circle", "green square", "blue diamond", "yellow triangle",
              "purple hexagon", "orange star", "cyan cross", "pink heart")  # fmt: skip

_SS = 4  # supersampling factor: sprites are drawn big once and shrunk, for clean edges


def _shape_points(kind: int, r: float) -> np.ndarray | None:
    """Outline of a tile of radius r around (0, 0), y down; None for the circle."""
    if kind == 0:
        return None
    if kind == 1:  # rounded square
        s, k = r * 0.86, r * 0.3
        pts = []
        for cx, cy, a0 in ((s - k, s - k, 0), (-s + k, s - k, 90), (-s + k, -s + k, 180), (s - k, -s + k, 270)):
            for a in np.linspace(a0, a0 + 90, 8):
                pts.append((cx + k * math.cos(math.radians(a)), cy + k * math.sin(math.radians(a))))
        return np.array(pts)
    if kind == 2:  # diamond
        return np.array([(0, -r), (r * 0.86, 0), (0, r), (-r * 0.86, 0)])
    if kind == 3:  # triangle, wider than tall so it fills a cell like the others
        return np.array([(0, -r), (r * 0.95, r * 0.72), (-r * 0.95, r * 0.72)])
    if kind == 4:  # hexagon
        return np.array([(r * math.cos(math.radians(a)), r * math.sin(math.radians(a))) for a in range(0, 360, 60)])
    if kind == 5:  # five-pointed star
        pts = []
        for i in range(10):
            rr = r if i % 2 == 0 else r * 0.48
            a = math.radians(-90 + 36 * i)
            pts.append((rr * math.cos(a), rr * math.sin(a) + r * 0.08))
        return np.array(pts)
    if kind == 6:  # plus / cross
        a, b = r * 0.36, r * 0.92
        return np.array([(-a, -b), (a, -b), (a, -a), (b, -a), (b, a), (a, a), (a, b), (-a, b),
                         (-a, a), (-b, a), (-b, -a), (-a, -a)])  # fmt: skip
    if kind == 7:  # heart
        t = np.linspace(0, 2 * math.pi, 60, endpoint=False)
        x = 16 * np.sin(t) ** 3
        y = -(13 * np.cos(t) - 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))
        return np.stack([x, y + 1.5], axis=1) * (r / 16.5)
    raise ValueError(f"tile type must be 0..{MAX_TYPES - 1}, got {kind}")


def _shape_mask(kind: int, n: int, r: float, dx: float = 0.0, dy: float = 0.0) -> np.ndarray:
    mask = np.zeros((n, n), np.uint8)
    c = n / 2
    shift = 4  # cv2 fixed-point bits, for sub-pixel vertices
    pts = _shape_points(kind, r)
    if pts is None:
        f = 1 << shift
        cv2.circle(mask, (round((c + dx) * f), round((c + dy) * f)), round(r * f), 255, -1, cv2.LINE_AA, shift)
    else:
        p = np.round((pts + (c + dx, c + dy)) * (1 << shift)).astype(np.int32)
        cv2.fillPoly(mask, [p], 255, cv2.LINE_AA, shift)
    return mask


@dataclass(frozen=True)
class Sprite:
    """A tile image with alpha, stored ready to blit: frame = frame * inv / 255 + premul.
    Two saturating 8-bit cv2 ops per tile are several times faster than float blending."""

    bgr: np.ndarray  # (n, n, 3) uint8, straight colour
    alpha: np.ndarray  # (n, n) float32 in [0, 1]
    premul: np.ndarray  # (n, n, 3) uint8, colour * alpha
    inv: np.ndarray  # (n, n, 3) uint8, 255 * (1 - alpha)


def _make_sprite(bgr: np.ndarray, alpha: np.ndarray) -> Sprite:
    a = np.clip(np.asarray(alpha, np.float32), 0, 1)
    premul = np.clip(bgr.astype(np.float32) * a[..., None] + 0.5, 0, 255).astype(np.uint8)
    inv = np.repeat(((1 - a) * 255 + 0.5).astype(np.uint8)[..., None], 3, axis=2)
    return Sprite(np.ascontiguousarray(bgr), a, premul, inv)


@lru_cache(maxsize=64)
def sprite(kind: int, cell_px: int) -> Sprite:
    """Tile `kind` drawn in a cell_px square: shaded shape, highlight, outline, drop shadow,
    and a transparent margin so neighbouring tiles have a gap between them."""
    n = cell_px * _SS
    r = n * 0.39
    base = np.array(TILE_COLORS[kind], np.float32)
    body = _shape_mask(kind, n, r).astype(np.float32) / 255
    shadow: np.ndarray = _shape_mask(kind, n, r, dx=n * 0.025, dy=n * 0.045).astype(np.float32) / 255
    shadow = cv2.GaussianBlur(shadow, (0, 0), n * 0.02) * 0.38

    # Lit from the top: lighter above, darker below.
    ys = np.linspace(-1, 1, n, dtype=np.float32)[:, None, None]
    color: np.ndarray = np.empty((n, n, 3), np.float32)
    top_mix = np.clip(-ys, 0, 1) * 0.35  # towards white at the top
    bottom_mix = np.clip(ys, 0, 1) * 0.35  # towards black at the bottom
    color[:] = base * (1 - bottom_mix)
    color += (255 - color) * top_mix
    # A rim a little darker than the body makes the shape read on any background.
    k = max(3, int(n * 0.05)) | 1
    inner = cv2.erode(body, np.ones((k, k), np.uint8))
    rim = np.clip(body - inner, 0, 1)[..., None]
    color = color * (1 - rim * 0.45)
    # A soft glossy highlight in the upper left, kept inside the shape.
    hl = np.zeros((n, n), np.float32)
    cv2.ellipse(hl, (int(n * 0.40), int(n * 0.33)), (int(n * 0.14), int(n * 0.08)), -35, 0, 360, 1.0, -1, cv2.LINE_AA)
    hl = cv2.GaussianBlur(hl, (0, 0), n * 0.025) * inner * 0.65
    color += (255 - color) * hl[..., None]

    # Composite body over shadow (premultiplied), then shrink to the cell size.
    a = body + shadow * (1 - body)
    premul = color * body[..., None]  # shadow is black, adds no colour
    small_a = cv2.resize(a, (cell_px, cell_px), interpolation=cv2.INTER_AREA)
    small_p = cv2.resize(premul, (cell_px, cell_px), interpolation=cv2.INTER_AREA)
    safe = np.maximum(small_a, 1e-4)[..., None]
    bgr = np.clip(small_p / safe + 0.5, 0, 255).astype(np.uint8)
    return _make_sprite(bgr, small_a)


def _scaled(kind: int, cell_px: int, scale: float, alpha: float) -> Sprite:
    s = sprite(kind, cell_px)
    if scale >= 0.999 and alpha >= 0.999:
        return s
    n = max(1, round(cell_px * scale))
    if n != cell_px:
        bgr = cv2.resize(s.bgr, (n, n), interpolation=cv2.INTER_AREA)
        a = cv2.resize(s.alpha, (n, n), interpolation=cv2.INTER_AREA)
    else:
        bgr, a = s.bgr, s.alpha
    return _make_sprite(bgr, a * np.float32(alpha))


# -- background -------------------------------------------------------------------
def _text_centered(img: np.ndarray, text: str, cx: int, baseline: int, scale: float, color: tuple[int, int, int],
                   thickness: int, font: int = FONT, outline: tuple[int, int, int] | None = None) -> None:  # fmt: skip
    (w, _), _ = cv2.getTextSize(text, font, scale, thickness)
    org = (cx - w // 2, baseline)
    if outline is not None:
        cv2.putText(img, text, org, font, scale, outline, thickness + max(2, thickness), cv2.LINE_AA)
    cv2.putText(img, text, org, font, scale, color, thickness, cv2.LINE_AA)


@lru_cache(maxsize=8)
def background(layout: Layout) -> np.ndarray:
    """Everything that does not move: gradient, pattern, header, labels, board panel."""
    w, h = layout.width, layout.height
    u = min(w, h / 2)
    # Deep violet at the top to teal at the bottom.
    t = np.linspace(0, 1, h, dtype=np.float32)[:, None, None]
    top, bottom = np.array((92, 36, 58), np.float32), np.array((120, 96, 28), np.float32)
    img = np.broadcast_to(top * (1 - t) + bottom * t, (h, w, 3)).copy()
    # A faint diamond lattice, the kind of texture game backgrounds carry.
    step = max(8, round(u * 0.06))
    yy, xx = np.mgrid[0:h, 0:w]
    lattice = (((xx + yy) // step + (xx - yy + h) // step) % 2).astype(np.float32)
    img += (lattice * 7 - 3.5)[..., None]
    del yy, xx, lattice

    # Header bar and its two counter cards.
    hb = layout.header_bbox
    blend(img, rounded_mask((h, w), hb, round(u * 0.04)), (40, 16, 30), 0.55)
    for panel in (layout.steps_panel, layout.score_panel):
        blend(img, rounded_mask((h, w), panel, round(u * 0.03)), (104, 50, 76), 0.75)

    # Board panel: rounded, darker, with a faint checker so empty cells still read as cells,
    # over a soft offset shadow of itself.
    px0, py0, px1, py1 = layout.panel_bbox
    pad = layout.board_bbox[0] - px0
    blend(img, rounded_mask((h, w), (px0 + pad // 3, py0 + pad // 2, px1 + pad // 3, py1 + pad // 2), pad),
           (10, 0, 10), 0.35)  # fmt: skip
    blend(img, rounded_mask((h, w), layout.panel_bbox, pad + layout.cell_px // 8), (60, 24, 34), 0.72)
    bx0, by0, bx1, by1 = layout.board_bbox
    c = layout.cell_px
    checker = np.indices((layout.rows, layout.cols)).sum(axis=0) % 2
    cells = np.kron(checker, np.ones((c, c))).astype(np.float32)
    img[by0:by1, bx0:bx1] += cells[..., None] * 10
    edge = rounded_mask((h, w), layout.panel_bbox, pad + c // 8) - rounded_mask(
        (h, w), (px0 + 2, py0 + 2, px1 - 2, py1 - 2), pad + c // 8 - 2
    )
    blend(img, np.clip(edge, 0, 1), (200, 150, 170), 0.5)
    out = np.clip(img + 0.5, 0, 255).astype(np.uint8)
    # Text last: cv2 draws text on 8-bit images only.
    for panel, label in ((layout.steps_panel, layout.counter_label), (layout.score_panel, "SCORE")):
        x0, y0, x1, _ = panel
        lscale = round(u * 0.028 / 22, 2)
        _text_centered(out, label, (x0 + x1) // 2, y0 + round(u * 0.04), lscale, (170, 200, 255),
                       max(1, round(lscale * 2)))  # fmt: skip
    tscale = round(u * 0.05 / 22, 2)
    _text_centered(out, TITLE, w // 2, hb[1] + round(u * 0.085), tscale, (80, 215, 255),
                   max(1, round(tscale * 2.2)), outline=(60, 20, 40))  # fmt: skip
    out.setflags(write=False)  # shared by every frame: never draw on it
    return out


# -- frames -----------------------------------------------------------------------
@dataclass(frozen=True)
class DrawTile:
    """One tile to draw: its type, screen centre (sub-pixel), size and opacity."""

    kind: int
    x: float
    y: float
    scale: float = 1.0
    alpha: float = 1.0


def _blit(frame: np.ndarray, spr: Sprite, cx: float, cy: float, clip: Box) -> None:
    n = spr.bgr.shape[0]
    x0 = int(math.floor(cx - n / 2 + 0.5))
    y0 = int(math.floor(cy - n / 2 + 0.5))
    cx0, cy0 = max(x0, clip[0]), max(y0, clip[1])
    cx1, cy1 = min(x0 + n, clip[2]), min(y0 + n, clip[3])
    if cx0 >= cx1 or cy0 >= cy1:
        return
    sx, sy = cx0 - x0, cy0 - y0
    sw, sh = cx1 - cx0, cy1 - cy0
    roi = frame[cy0:cy1, cx0:cx1]
    cv2.multiply(roi, spr.inv[sy : sy + sh, sx : sx + sw], dst=roi, scale=1 / 255)
    cv2.add(roi, spr.premul[sy : sy + sh, sx : sx + sw], dst=roi)


def _draw_game_over(frame: np.ndarray, layout: Layout) -> None:
    bx0, by0, bx1, by1 = layout.board_bbox
    c = layout.cell_px
    cx, cy = (bx0 + bx1) // 2, (by0 + by1) // 2
    half_w, half_h = int((bx1 - bx0) * 0.4), int(c * 1.1)
    box = (cx - half_w, cy - half_h, cx + half_w, cy + half_h)
    x0, y0, x1, y1 = box
    roi = frame[y0:y1, x0:x1].astype(np.float32)
    mask = rounded_mask((y1 - y0, x1 - x0), (0, 0, x1 - x0, y1 - y0), c // 3)
    blend(roi, mask, (34, 20, 26), 0.95)
    frame[y0:y1, x0:x1] = np.clip(roi + 0.5, 0, 255).astype(np.uint8)
    cv2.rectangle(frame, (x0 + 3, y0 + 3), (x1 - 4, y1 - 4), (120, 220, 255), max(1, c // 30), cv2.LINE_AA)
    scale = round(c * 0.55 / 22, 2)
    _text_centered(frame, "GAME OVER", cx, cy + int(c * 0.28), scale, (255, 255, 255), max(1, round(scale * 2.2)))


def render(layout: Layout, tiles: list[DrawTile], hud: Hud, game_over: bool = False) -> np.ndarray:
    """A full frame: background, `tiles` clipped to the board, header values, game-over card."""
    frame = background(layout).copy()
    clip = layout.board_bbox  # tiles sliding in from above stay under the header
    for t in tiles:
        if t.scale <= 0 or t.alpha <= 0:
            continue
        spr = _scaled(t.kind, layout.cell_px, min(1.0, t.scale), min(1.0, t.alpha))
        _blit(frame, spr, t.x, t.y, clip)
    steps_text, score_text = hud_texts(hud)
    draw_value(frame, layout.steps_box, steps_text, layout.hud_scale, layout.hud_thickness)
    draw_value(frame, layout.score_box, score_text, layout.hud_scale, layout.hud_thickness)
    if game_over:
        _draw_game_over(frame, layout)
    return frame


def board_tiles(layout: Layout, board: Board) -> list[DrawTile]:
    """The still board as draw calls; empty (and unknown) cells draw nothing."""
    out = []
    for (r, c), v in np.ndenumerate(board.cells):
        if v >= 0:  # EMPTY and UNKNOWN show the bare panel
            x, y = layout.cell_center(r, c)
            out.append(DrawTile(int(v), x, y))
    return out


def render_board(layout: Layout, board: Board, hud: Hud, game_over: bool = False) -> np.ndarray:
    if board.shape != (layout.rows, layout.cols):
        raise ValueError(f"board is {board.rows}x{board.cols} but the layout is for {layout.rows}x{layout.cols}")
    return render(layout, board_tiles(layout, board), hud, game_over)
