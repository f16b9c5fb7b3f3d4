"""The simulated phone's Lights Out screen: layout, the two light tiles, frames.

A frame is a cached background (gradient, header card, board panel) with one tile per
cell pasted on top. A light is a rounded button: off is a dark slate square, on a warm
yellow one glowing from the middle, so on and off differ by some 60 Lab units and a
half-faded light is plainly neither. A fading light is the pixel blend of the two tiles.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from agent.games.drawing import blend, rounded_mask

Box = tuple[int, int, int, int]  # x0, y0, x1, y1; x1/y1 exclusive

FONT = cv2.FONT_HERSHEY_SIMPLEX
TITLE = "LIGHTS OUT"
MIN_CELL_PX = 16
OFF_BGR = np.array((78, 58, 46), np.float32)  # dark slate blue
ON_BGR = np.array((70, 212, 255), np.float32)  # warm yellow
PANEL_BGR = (34, 24, 22)


@dataclass(frozen=True)
class Layout:
    width: int
    height: int
    rows: int
    cols: int
    cell_px: int
    board_bbox: Box  # exactly cols * cell_px by rows * cell_px
    panel_bbox: Box
    header_bbox: Box
    moves_box: Box  # where "MOVES n" / "SOLVED" is written

    def cell_box(self, r: int, c: int) -> Box:
        x0, y0, _, _ = self.board_bbox
        p = self.cell_px
        return (x0 + c * p, y0 + r * p, x0 + (c + 1) * p, y0 + (r + 1) * p)


@lru_cache(maxsize=16)
def layout_for(width: int, height: int, rows: int, cols: int) -> Layout:
    """Header on top, the board centred below it, sized by whichever side runs out first."""
    if rows < 1 or cols < 1:
        raise ValueError(f"a board has at least one row and column, got {rows}x{cols}")
    if width < 160 or height < 160:
        raise ValueError(f"screen {width}x{height} is too small for a game (at least 160x160)")
    u = min(width, height / 2)
    margin = max(6, round(width * 0.05))
    header = (margin, round(u * 0.08), width - margin, round(u * 0.08) + round(u * 0.24))
    top, bottom = header[3] + round(u * 0.06), height - round(u * 0.14)
    cell = int(min((width - 2 * margin) / (cols + 0.3), (bottom - top) / (rows + 0.3)))
    if cell < MIN_CELL_PX:
        raise ValueError(f"screen {width}x{height} leaves {cell}px cells for a {rows}x{cols} board")
    pad = max(3, round(cell * 0.15))
    bw, bh = cols * cell, rows * cell
    bx0 = (width - bw) // 2
    by0 = top + pad + int(((bottom - top) - bh - 2 * pad) * 0.4)
    hx0, hy0, hx1, hy1 = header
    moves = (hx0 + round(u * 0.05), hy0 + round(u * 0.13), hx1 - round(u * 0.05), hy1 - round(u * 0.02))
    return Layout(
        width, height, rows, cols, cell, (bx0, by0, bx0 + bw, by0 + bh),
        (bx0 - pad, by0 - pad, bx0 + bw + pad, by0 + bh + pad), header, moves,
    )  # fmt: skip


@lru_cache(maxsize=16)
def tiles(cell_px: int) -> tuple[np.ndarray, np.ndarray]:
    """(off, on) cell images, (cell_px, cell_px, 3) float32 BGR, panel colour in the gaps."""
    n = cell_px
    inset = max(1, round(n * 0.08))
    body = rounded_mask((n, n), (inset, inset, n - inset, n - inset), round(n * 0.18))
    ys, xs = np.mgrid[0:n, 0:n].astype(np.float32) / max(1, n - 1) * 2 - 1
    lit_from_top = (1 - 0.18 * ys)[..., None]  # lighter at the top edge, like a raised button
    glow = np.exp(-(xs**2 + ys**2) * 1.6)[..., None]  # on: brightest in the middle
    panel = np.array(PANEL_BGR, np.float32)
    off = OFF_BGR * lit_from_top
    on = ON_BGR * (0.82 + 0.18 * lit_from_top) + (255 - ON_BGR) * 0.35 * glow
    out = []
    for face in (off, on):
        img = panel * (1 - body[..., None]) + np.clip(face, 0, 255) * body[..., None]
        out.append(img.astype(np.float32))
    for img in out:
        img.setflags(write=False)
    return out[0], out[1]


@lru_cache(maxsize=16)
def tiles_u8(cell_px: int) -> tuple[np.ndarray, np.ndarray]:
    """The (off, on) tiles as they are pasted when a light is at rest."""
    out = tuple(np.clip(t + 0.5, 0, 255).astype(np.uint8) for t in tiles(cell_px))
    for img in out:
        img.setflags(write=False)
    return out  # type: ignore[return-value]


@lru_cache(maxsize=8)
def background(layout: Layout) -> np.ndarray:
    w, h = layout.width, layout.height
    u = min(w, h / 2)
    t = np.linspace(0, 1, h, dtype=np.float32)[:, None, None]
    top, bottom = np.array((70, 30, 20), np.float32), np.array((40, 22, 48), np.float32)
    img = np.broadcast_to(top * (1 - t) + bottom * t, (h, w, 3)).copy()
    for box, colour, opacity, radius in (
        (layout.header_bbox, (90, 50, 36), 0.8, round(u * 0.04)),
        (layout.panel_bbox, PANEL_BGR, 0.95, max(4, layout.cell_px // 4)),
    ):
        blend(img, rounded_mask((h, w), box, radius), colour, opacity)
    out = np.clip(img + 0.5, 0, 255).astype(np.uint8)
    x0, y0, x1, _ = layout.header_bbox
    scale = round(u * 0.05 / 22, 2)
    _text(out, TITLE, (x0 + x1) // 2, y0 + round(u * 0.1), scale, (120, 225, 255), max(1, round(scale * 2.2)))
    hint_scale = round(u * 0.03 / 22, 2)
    _text(out, "turn every light off", w // 2, layout.panel_bbox[3] + round(u * 0.07), hint_scale,
          (200, 190, 180), max(1, round(hint_scale * 2)))  # fmt: skip
    out.setflags(write=False)
    return out


def _text(
    img: np.ndarray, text: str, cx: int, baseline: int, scale: float, colour: tuple[int, int, int], thickness: int
) -> None:
    (tw, _), _ = cv2.getTextSize(text, FONT, scale, thickness)
    cv2.putText(img, text, (cx - tw // 2, baseline), FONT, scale, colour, thickness, cv2.LINE_AA)


def render(layout: Layout, levels: np.ndarray, moves: int, solved: bool, caption: str | None = None) -> np.ndarray:
    """A frame: `levels` (rows, cols) in [0, 1] is how lit each light is (0 off, 1 on).
    The header says MOVES n, or SOLVED!, or `caption` when given."""
    if levels.shape != (layout.rows, layout.cols):
        raise ValueError(f"levels are {levels.shape} but the layout is {layout.rows}x{layout.cols}")
    frame = background(layout).copy()
    off, on = tiles(layout.cell_px)
    off_u8, on_u8 = tiles_u8(layout.cell_px)
    for (r, c), level in np.ndenumerate(levels):
        x0, y0, x1, y1 = layout.cell_box(r, c)
        if level <= 0.0:
            frame[y0:y1, x0:x1] = off_u8
        elif level >= 1.0:
            frame[y0:y1, x0:x1] = on_u8
        else:
            frame[y0:y1, x0:x1] = np.clip(off + (on - off) * float(level) + 0.5, 0, 255).astype(np.uint8)
    x0, y0, x1, y1 = layout.moves_box
    u = min(layout.width, layout.height / 2)
    scale = round(u * 0.04 / 22, 2)
    text, colour = ("SOLVED!", (120, 255, 140)) if solved else (f"MOVES {moves}", (255, 255, 255))
    if caption is not None:
        text, colour = caption, (255, 255, 255)
    _text(frame, text, (x0 + x1) // 2, (y0 + y1) // 2 + round(u * 0.02), scale, colour, max(1, round(scale * 2)))
    return frame
