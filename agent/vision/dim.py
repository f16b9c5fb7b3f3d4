"""The dialog that matters on a screen, and whether what is around it is dimmed.

A card or dialog is a flat panel holding words and buttons (its title band, when it has one,
is a shape of its width just on top of it, and belongs to it). Games darken the screen behind
a card: its words stay readable but dim, and they belong to what is behind, not to the card.
Whether the outside is dimmed is judged by its brightest light: a dim overlay takes the white
of text and highlights down with everything else, while the card keeps its whites.
"""

from __future__ import annotations

import cv2
import numpy as np

from agent.vision.ocr import Region, Word

Box = tuple[int, int, int, int]

PANEL_AREA = (0.04, 0.85)  # of the frame: a panel's size
PANEL_SIDE = (0.4, 0.08)  # of the frame's width and height: a panel is at least this big (a button is not)
BUTTON_AREA = 0.08
BAND_GAP = 0.02  # of the frame's height: a title band this close above the panel is its own
BAND_EDGE = 0.04  # of the frame's width: its sides line up with the panel's within this
DIM_RATIO = 0.82  # the outside's brightest light under this share of the panel's: dimmed
BRIGHT_PERCENTILE = 99.5
FULL_SCREEN = 0.95  # of the frame's width and height: a box this big is the screen, not a panel


def _inside(point: tuple[float, float], box: Box) -> bool:
    return box[0] <= point[0] < box[2] and box[1] <= point[1] < box[3]


def _contains(outer: Box, inner: Box, slack: int = 2) -> bool:
    return (outer[0] - slack <= inner[0] and outer[1] - slack <= inner[1] and inner[2] <= outer[2] + slack
            and inner[3] <= outer[3] + slack)  # fmt: skip


def find_panel(frame: np.ndarray, regions: list[Region], words: list[Word], extra: tuple[Box, ...] = ()) -> Box | None:
    """The box of the dialog with the most words and buttons on it (its title band
    included), or None when no panel holds at least two words."""
    h, w = frame.shape[:2]
    area = float(w * h)
    cands = [r.box for r in regions if PANEL_AREA[0] * area <= r.area <= PANEL_AREA[1] * area] + list(extra)
    # (a box of nearly the whole screen is the screen's own backdrop, a sky or a map with
    # holes where the pictures on it are, whatever its area: no dialog over anything)
    cands = [b for b in cands if b[2] - b[0] >= PANEL_SIDE[0] * w and b[3] - b[1] >= PANEL_SIDE[1] * h
             and not (b[2] - b[0] >= FULL_SCREEN * w and b[3] - b[1] >= FULL_SCREEN * h)]  # fmt: skip
    buttons = [r.box for r in regions if r.area <= BUTTON_AREA * area]
    worded = [b for b in cands if sum(1 for wd in words if _inside(wd.centre, b)) >= 2]

    def backdrop(box: Box) -> bool:
        # a shape running to two of the screen's edges with a worded panel inside it is the
        # screen behind a card (a map's sky around a daily bonus), not the card; one running
        # to the top and both sides is the screen's own top, its header bar on it (a sheet
        # slides up from the bottom, a dialog leaves a margin)
        edges = (box[0] <= 1) + (box[1] <= 1) + (box[2] >= w - 1) + (box[3] >= h - 1)
        top = box[0] <= 1 and box[1] <= 1 and box[2] >= w - 1
        return top or edges >= 2 and any(o != box and _contains(box, o) for o in worded)

    best: tuple[float, Box] | None = None
    for box in cands:
        n_words = sum(1 for wd in words if _inside(wd.centre, box))
        n_buttons = sum(1 for b in buttons if b != box and _contains(box, b))
        score = n_words + 2 * min(n_buttons, 4)
        if n_words < 2 or backdrop(box):
            continue
        bw, bh = box[2] - box[0], box[3] - box[1]
        key = score - 1e-9 * bw * bh  # of equals, the smaller (the card, not the screen)
        if best is None or key > best[0]:
            best = (key, box)
    if best is None:
        return None
    px0, py0, px1, py1 = best[1]
    for box in cands:  # the body under a title band taken for the panel
        x0, y0, x1, y1 = box
        if abs(x0 - px0) <= BAND_EDGE * w and abs(x1 - px1) <= BAND_EDGE * w and 0 <= y0 - py1 <= BAND_GAP * h:
            py1 = max(py1, y1)
            px0, px1 = min(px0, x0), max(px1, x1)
    for r in regions:  # the title band on top of it
        x0, y0, x1, y1 = r.box
        if abs(x0 - px0) <= BAND_EDGE * w and abs(x1 - px1) <= BAND_EDGE * w and 0 <= py0 - y1 <= BAND_GAP * h \
                and y1 - y0 <= 0.5 * (py1 - py0):  # fmt: skip
            py0 = min(py0, y0)
            px0, px1 = min(px0, x0), max(px1, x1)
    return px0, py0, px1, py1


FLOOD_WIDTH = 270  # px: panels are flooded on a copy this wide
FLOOD_TOLERANCE = 10  # per channel, from the seed's colour: a panel's face is flat
MAX_SEEDS = 12


def flood_panels(frame: np.ndarray, words: list[Word]) -> list[Box]:
    """Panels found by flooding the face colour around words (for a dark card over a dimmed
    screen, which a flat-region split merges with the dark around it): the box of each flood
    that is compact, card-sized and not the whole screen."""
    h, w = frame.shape[:2]
    f = FLOOD_WIDTH / w
    small = cv2.resize(frame, (FLOOD_WIDTH, max(1, round(h * f))), interpolation=cv2.INTER_AREA)
    sh, sw = small.shape[:2]
    out: list[Box] = []
    tried: list[Box] = []
    for wd in sorted(words, key=lambda x: -x.conf)[:MAX_SEEDS]:
        x0, y0, x1, y1 = wd.box
        th = y1 - y0
        sx, sy = int((x0 + x1) / 2 * f), int((y0 - 0.5 * th) * f)
        if not (0 <= sx < sw and 0 <= sy < sh) or any(_inside((sx, sy), b) for b in tried):
            continue
        mask = np.zeros((sh + 2, sw + 2), np.uint8)
        t = (FLOOD_TOLERANCE,) * 3
        cv2.floodFill(small.copy(), mask, (sx, sy), (0, 0, 0), t, t, 4 | cv2.FLOODFILL_FIXED_RANGE | cv2.FLOODFILL_MASK_ONLY
                      | (255 << 8))  # fmt: skip
        m = mask[1:-1, 1:-1]
        ys, xs = np.nonzero(m)
        if len(xs) == 0:
            continue
        bx0, by0, bx1, by1 = int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1
        tried.append((bx0, by0, bx1, by1))
        bw, bh = bx1 - bx0, by1 - by0
        if bw < PANEL_SIDE[0] * sw or bh < PANEL_SIDE[1] * sh or bw * bh > PANEL_AREA[1] * sw * sh:
            continue
        if len(xs) < 0.6 * bw * bh:  # not compact: the flood ran into the screen around
            continue
        edges = (bx0 <= 0) + (by0 <= 0) + (bx1 >= sw) + (by1 >= sh)
        if edges >= 2:
            continue
        out.append((int(bx0 / f), int(by0 / f), min(w, int(np.ceil(bx1 / f))), min(h, int(np.ceil(by1 / f)))))
    return out


def _luma(frame: np.ndarray) -> np.ndarray:
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    h, w = grey.shape
    f = max(1, w // 270)
    return np.asarray(grey[::f, ::f])


def dimmed_outside(frame: np.ndarray, panel: Box) -> bool:
    """Whether the screen around `panel` is darkened (its brightest light well under the
    panel's own)."""
    h, w = frame.shape[:2]
    g = _luma(frame)
    f = w / g.shape[1]
    x0, y0, x1, y1 = (int(v / f) for v in panel)
    inside = g[y0:y1, x0:x1]
    mask = np.ones(g.shape, bool)
    m = max(2, int(0.02 * g.shape[1]))  # the panel's shadow and a close badge over its edge
    mask[max(0, y0 - m) : y1 + 3 * m, max(0, x0 - m) : x1 + 2 * m] = False
    outside = g[mask]
    if inside.size == 0 or outside.size < 0.05 * g.size:
        return False
    return float(np.percentile(outside, BRIGHT_PERCENTILE)) < DIM_RATIO * float(np.percentile(inside, BRIGHT_PERCENTILE))
