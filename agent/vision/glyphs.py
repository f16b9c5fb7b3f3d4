"""Close controls drawn as glyphs: an X (bare, or on a round or square badge) or an arrow,
found where games put them (a dialog's top corners, the screen's corners for an ad).

Each spot is cut out and looked at in three views (bright ink, dark ink, and ink against the
spot's own dominant colour); every blob of a control's size in a view is tested as an X
(`agent.vision.screens.is_cross` logic: two crossing diagonals, nothing along the plus) or
as an arrow (a solid triangle pointing right). Sizes are shares of the frame's width.
"""

from __future__ import annotations

from typing import Literal

import cv2
import numpy as np

Box = tuple[int, int, int, int]
Glyph = Literal["x", "arrow"]

SIZE = (0.02, 0.12)  # of the frame's width: a glyph's ink's side


def is_cross(ink: np.ndarray) -> bool:
    """Whether a boolean ink mask (cropped to its blob) shows an X."""
    if not ink.any():
        return False
    ys, xs = np.nonzero(ink)
    x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
    bw, bh = x1 - x0, y1 - y0
    if bw < 5 or bh < 5 or not 0.6 <= bw / bh <= 1.6:
        return False
    patch = cv2.resize(ink[y0:y1, x0:x1].astype(np.float32), (32, 32), interpolation=cv2.INTER_AREA) > 0.5
    v, u = np.mgrid[-1:1:32j, -1:1:32j]
    r = np.maximum(np.abs(u), np.abs(v))
    diag = (np.abs(np.abs(u) - np.abs(v)) < 0.2) & (r < 0.85)
    plus = ((np.abs(u) < 0.15) & (np.abs(v) > 0.5)) | ((np.abs(v) < 0.15) & (np.abs(u) > 0.5))
    if patch[diag].mean() < 0.6 or patch[plus].mean() > 0.15:
        return False
    for su in (-1, 1):
        for sv in (-1, 1):
            arm = diag & (np.sign(u) == su) & (np.sign(v) == sv) & (r > 0.4)
            if patch[arm].mean() < 0.5:
                return False
    return True


def is_arrow(ink: np.ndarray) -> bool:
    """Whether a boolean ink mask shows a solid triangle pointing right (a "next"/"skip" arrow)."""
    m = ink.astype(np.uint8)
    contours, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return False
    c = max(contours, key=cv2.contourArea)
    x, y, w, h = cv2.boundingRect(c)
    if w < 6 or h < 6 or not 0.5 <= w / h <= 1.3:
        return False
    area = cv2.contourArea(c)
    if not 0.38 <= area / (w * h) <= 0.62:
        return False
    hull = cv2.contourArea(cv2.convexHull(c))
    # a solid triangle fills its hull; a letter (an L, a V, an A with its hole) does not
    if hull <= 0 or area / hull < 0.92 or float(m.sum()) < 0.88 * hull:
        return False
    approx = cv2.approxPolyDP(c, 0.08 * cv2.arcLength(c, True), True)
    if len(approx) != 3:
        return False
    # pointing right: one vertex at the right edge, two at the left
    xs = sorted(int(p[0][0]) for p in approx)
    return xs[2] - x >= 0.85 * w and xs[1] - x <= 0.25 * w


def _views(crop: np.ndarray) -> list[np.ndarray]:
    grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
    hsv = cv2.cvtColor(crop, cv2.COLOR_BGR2HSV)
    white = (grey > 200) & (hsv[..., 1] < 60)
    _, otsu = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    return [white, otsu > 0, otsu == 0]


def find_glyphs(frame: np.ndarray, spots: list[Box]) -> list[tuple[Box, Glyph]]:
    """The X and arrow glyphs in the spots (frame boxes), each once, with the box of its ink."""
    h, w = frame.shape[:2]
    lo, hi = SIZE[0] * w, SIZE[1] * w
    out: list[tuple[Box, Glyph]] = []
    for sx0, sy0, sx1, sy1 in spots:
        sx0, sy0, sx1, sy1 = max(0, sx0), max(0, sy0), min(w, sx1), min(h, sy1)
        if sx1 - sx0 < 8 or sy1 - sy0 < 8:
            continue
        crop = frame[sy0:sy1, sx0:sx1]
        for view in _views(crop):
            n, comp, stats, _ = cv2.connectedComponentsWithStats(view.astype(np.uint8), connectivity=8)
            for i in range(1, n):
                bx, by, bw, bh, _area = (int(v) for v in stats[i])
                if not lo <= max(bw, bh) <= hi:
                    continue
                if bx == 0 or by == 0 or bx + bw >= view.shape[1] or by + bh >= view.shape[0]:
                    continue  # cut by the spot's edge: a piece of something bigger (a letter, a picture)
                ink = comp[by : by + bh, bx : bx + bw] == i
                kind: Glyph | None = "x" if is_cross(ink) else "arrow" if is_arrow(ink) else None
                if kind is None:
                    continue
                box = (sx0 + bx, sy0 + by, sx0 + bx + bw, sy0 + by + bh)
                if all(_apart(box, o) for o, _ in out):
                    out.append((box, kind))
    return out


def _apart(a: Box, b: Box) -> bool:
    cx, cy = (a[0] + a[2]) / 2, (a[1] + a[3]) / 2
    return not (b[0] <= cx < b[2] and b[1] <= cy < b[3])
