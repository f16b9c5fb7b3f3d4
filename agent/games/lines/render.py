"""Drawing the simulated phone's Color Lines screen.

Grey bevelled cells (so an empty cell is plainly visible), balls as shaded discs, and
the rainbow ball as a disc of coloured wedges with a white rim, unlike any plain ball.
A selected ball gets a ring at the cell's edge, outside the part of a cell the reader
looks at. Sprites are drawn once per cell size; a frame is the static background plus
blitted sprites, so animation frames stay cheap at phone resolutions.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import cast

import cv2
import numpy as np

from agent.games.lines.board import EMPTY, WILD
from agent.vision.grid import BBox, cell_at, cell_centers, cell_edges

# BGR: red, green, blue, yellow, magenta, cyan, brown (the classic seven), orange, charcoal.
PALETTE: tuple[tuple[int, int, int], ...] = (
    (40, 40, 220), (60, 180, 60), (220, 90, 40), (40, 210, 230), (200, 60, 200),
    (210, 200, 40), (30, 70, 130), (30, 140, 250), (70, 70, 70),
)
BACKGROUND = (48, 40, 36)
CELL = (190, 190, 190)
SELECT = (0, 230, 255)


@dataclass(frozen=True)
class Layout:
    width: int
    height: int
    rows: int
    cols: int
    board_bbox: BBox
    preview_bbox: BBox  # where the next balls are shown (when the variant shows them)
    score_pos: tuple[int, int]

    @property
    def cell_px(self) -> int:
        x0, y0, x1, y1 = self.board_bbox
        return int(min((x1 - x0) / self.cols, (y1 - y0) / self.rows))

    def center(self, row: float, col: float) -> tuple[float, float]:
        x0, y0, x1, y1 = self.board_bbox
        return x0 + (col + 0.5) * (x1 - x0) / self.cols, y0 + (row + 0.5) * (y1 - y0) / self.rows

    def cell_at(self, x: float, y: float) -> tuple[int, int] | None:
        return cell_at(self.board_bbox, self.rows, self.cols, x, y)

    def centers(self) -> np.ndarray:
        return cell_centers(self.board_bbox, self.rows, self.cols)


def layout_for(width: int, height: int, rows: int, cols: int) -> Layout:
    """A square-celled board as wide as the screen allows, a header above it."""
    margin = max(4, width // 30)
    cell = min((width - 2 * margin) // cols, int(height * 0.6) // rows)
    bw, bh = cell * cols, cell * rows
    x0 = (width - bw) // 2
    y0 = max(int(height * 0.25), (height - bh) // 2 - int(height * 0.05))
    y0 = min(y0, height - bh - margin)
    header = max(cell, int(height * 0.05))
    score_y = max(cell // 2, y0 - 2 * header)
    # The preview sits on the score's line, right-aligned and small: balls one cell above
    # the board, on its pitch, would look like one more row of the board.
    pw = int(1.6 * cell)
    ph = max(4, int(0.5 * cell))
    px1 = x0 + bw
    preview = (px1 - pw, max(0, score_y - ph), px1, max(0, score_y - ph) + ph)
    return Layout(width, height, rows, cols, (x0, y0, x0 + bw, y0 + bh), preview, (margin, score_y))


@dataclass(frozen=True)
class Sprite:
    bgr: np.ndarray  # (n, n, 3) float32
    alpha: np.ndarray  # (n, n, 1) float32


def _disc_alpha(n: int, radius: float) -> np.ndarray:
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
    c = (n - 1) / 2.0
    d = np.sqrt((xx - c) ** 2 + (yy - c) ** 2)
    return cast(np.ndarray, np.clip(radius - d + 0.5, 0.0, 1.0)[..., None])


def _shading(n: int, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Diffuse light from the upper left, and a specular highlight."""
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
    c = (n - 1) / 2.0
    nx, ny = (xx - c) / max(radius, 1.0), (yy - c) / max(radius, 1.0)
    nz = np.sqrt(np.clip(1.0 - nx * nx - ny * ny, 0.0, 1.0))
    light = np.array([-0.45, -0.55, 0.7], dtype=np.float32)
    light /= np.linalg.norm(light)
    diffuse = np.clip(nx * light[0] + ny * light[1] + nz * light[2], 0.0, 1.0)
    spec = np.exp(-(((nx + 0.35) ** 2 + (ny + 0.4) ** 2) / 0.04))
    return (0.35 + 0.75 * diffuse)[..., None], spec[..., None]


@lru_cache(maxsize=64)
def ball_sprite(value: int, n: int) -> Sprite:
    radius = n * 0.40
    alpha = _disc_alpha(n, radius)
    shade, spec = _shading(n, radius)
    if value == WILD:
        yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
        c = (n - 1) / 2.0
        angle = (np.arctan2(yy - c, xx - c) + np.pi) / (2 * np.pi)
        wedge = (angle * 6).astype(np.int64) % 6
        colours = np.array([PALETTE[i] for i in (0, 7, 3, 1, 2, 4)], dtype=np.float32)
        base = colours[wedge]
        rim = np.sqrt((xx - c) ** 2 + (yy - c) ** 2) > radius * 0.78
        base[rim] = (250, 250, 250)
    else:
        base = np.broadcast_to(np.array(PALETTE[value - 1], dtype=np.float32), (n, n, 3))
    bgr = np.clip(base * shade + 255.0 * 0.8 * spec, 0, 255).astype(np.float32)
    return Sprite(bgr, alpha)


def blit(frame: np.ndarray, spr: Sprite, cx: float, cy: float, scale: float = 1.0) -> None:
    if scale <= 0.02:
        return
    n = spr.bgr.shape[0]
    if abs(scale - 1.0) > 1e-3:
        m = max(2, int(round(n * scale)))
        bgr = cv2.resize(spr.bgr, (m, m), interpolation=cv2.INTER_AREA)
        alpha = cv2.resize(spr.alpha, (m, m), interpolation=cv2.INTER_AREA)[..., None]
        spr, n = Sprite(bgr, alpha), m
    x0, y0 = int(round(cx - n / 2)), int(round(cy - n / 2))
    h, w = frame.shape[:2]
    sx0, sy0 = max(0, -x0), max(0, -y0)
    ex, ey = min(n, w - x0), min(n, h - y0)
    if ex <= sx0 or ey <= sy0:
        return
    region = frame[y0 + sy0 : y0 + ey, x0 + sx0 : x0 + ex].astype(np.float32)
    a = spr.alpha[sy0:ey, sx0:ex]
    out = region * (1.0 - a) + spr.bgr[sy0:ey, sx0:ex] * a
    frame[y0 + sy0 : y0 + ey, x0 + sx0 : x0 + ex] = out.astype(np.uint8)


@lru_cache(maxsize=8)
def background(layout: Layout) -> np.ndarray:
    img = np.empty((layout.height, layout.width, 3), dtype=np.uint8)
    img[:] = BACKGROUND
    xs, ys = cell_edges(layout.board_bbox, layout.rows, layout.cols)
    bevel = max(1, layout.cell_px // 20)
    for r in range(layout.rows):
        for c in range(layout.cols):
            x0, x1, y0, y1 = int(xs[c]), int(xs[c + 1]), int(ys[r]), int(ys[r + 1])
            img[y0:y1, x0:x1] = CELL
            img[y0 : y0 + bevel, x0:x1] = (235, 235, 235)
            img[y0:y1, x0 : x0 + bevel] = (235, 235, 235)
            img[y1 - bevel : y1, x0:x1] = (120, 120, 120)
            img[y0:y1, x1 - bevel : x1] = (120, 120, 120)
    img.setflags(write=False)
    return img


@dataclass(frozen=True)
class DrawBall:
    value: int
    row: float
    col: float
    scale: float = 1.0


def render(
    layout: Layout, balls: list[DrawBall], score: int, preview: tuple[int, ...] = (),
    selected: tuple[int, int] | None = None, game_over: bool = False,
) -> np.ndarray:
    frame = background(layout).copy()
    n = max(4, int(layout.cell_px))
    if selected is not None:
        xs, ys = cell_edges(layout.board_bbox, layout.rows, layout.cols)
        r, c = selected
        t = max(2, layout.cell_px // 16)
        cv2.rectangle(frame, (int(xs[c]), int(ys[r])), (int(xs[c + 1]) - 1, int(ys[r + 1]) - 1), SELECT, t)
    for b in balls:
        if b.value == EMPTY:
            continue
        cx, cy = layout.center(b.row, b.col)
        blit(frame, ball_sprite(int(b.value), n), cx, cy, b.scale)
    px0, py0, px1, py1 = layout.preview_bbox
    for i, v in enumerate(preview):
        blit(frame, ball_sprite(int(v), n), px0 + (i + 0.5) * (px1 - px0) / max(1, len(preview)), (py0 + py1) / 2,
             (py1 - py0) / n)
    scale = max(0.5, layout.cell_px / 60)
    text = f"SCORE {score}" + ("   GAME OVER" if game_over else "")
    cv2.putText(frame, text, layout.score_pos, cv2.FONT_HERSHEY_SIMPLEX, scale, (240, 240, 240), max(1, int(scale * 2)),
                cv2.LINE_AA)
    return frame


def board_balls(board: np.ndarray) -> list[DrawBall]:
    return [DrawBall(int(v), r, c) for (r, c), v in np.ndenumerate(board) if v != EMPTY]


def render_board(layout: Layout, board: np.ndarray, score: int = 0, preview: tuple[int, ...] = (),
                 selected: tuple[int, int] | None = None, game_over: bool = False) -> np.ndarray:
    return render(layout, board_balls(board), score, preview, selected, game_over)
