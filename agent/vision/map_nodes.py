"""A level map's nodes by their shapes: the path of like badges, a number's own badge, and
the current level's node that stands out.

A node's size is its badge's, never the box OCR gave its number: the current level's
badge is drawn bigger (and often ringed), but its number's glyph can be a flat shape of
its own, as small as a done node's digit. And a node is a badge with its number (or
padlock) at its centre; a decoration beside the path (a hill, a tree's crown) that a
badge overlaps has that ink at its edge.
"""

from __future__ import annotations

import cv2
import numpy as np

from agent.vision.grid import BBox
from agent.vision.ocr import Region

MAP_BAND = (0.08, 0.93)  # of the frame's height: level nodes lie between the map's top and bottom bars
MAP_SPAN = 0.15  # of the frame's height: a map's numbers spread at least this far up and down
NODE_AREA = (0.001, 0.03)  # of the frame: a level node's badge
NODE_REACH = 0.4  # of the frame's height: the current node is at most this far from the path's other nodes
PROMINENT = 1.3  # the current level's node is this much bigger than the others at least
UNREAD_INK = (0.05, 0.6)  # share of a shape's outline that is ink: words, not a picture
ROUND = (0.8, 1.25)  # a badge's width over its height
NUMBER_MARGIN = 2.5  # a badge's area is at least this many times its number's box
INK_DELTA = 30.0  # Lab delta E from a badge's face: its number, padlock or stars
CENTRED = 0.15  # of a badge's side: how far from its centre the ink's centre may lie
INNER = 0.8  # of a badge's radius: where its ink is looked for (its rim's blur left out)


def _round(r: Region) -> bool:
    return ROUND[0] <= (r.box[2] - r.box[0]) / max(1, r.box[3] - r.box[1]) <= ROUND[1]


def _centre(box: BBox) -> tuple[float, float]:
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


def number_badge(regions: list[Region], number_box: BBox, w: int, h: int) -> Region | None:
    """The badge a level number is written on: the smallest round shape around the number's
    box with room to spare (not the digit's own glyph), of a node's size. None when the
    number is on no such shape."""
    cx, cy = _centre(number_box)
    area = max(1, (number_box[2] - number_box[0]) * (number_box[3] - number_box[1]))
    holders = [r for r in regions if _round(r) and r.contains(cx, cy) and r.area >= NUMBER_MARGIN * area
               and NODE_AREA[0] * w * h <= r.area <= NODE_AREA[1] * w * h]  # fmt: skip
    return min(holders, key=lambda r: r.area) if holders else None


def badge_path(regions: list[Region], w: int, h: int) -> list[Region]:
    """Level nodes along a path: at least three round flat badges of one size, spread up
    and down the map band and across it, few, and not in rows (a board's tiles share rows).
    The nodes, or none."""
    round_ = [r for r in regions if _round(r) and NODE_AREA[0] * w * h <= r.area <= NODE_AREA[1] * w * h
              and MAP_BAND[0] * h <= _centre(r.box)[1] <= MAP_BAND[1] * h]  # fmt: skip
    best: tuple[int, float, list[Region]] | None = None
    for r in round_:
        like = [o for o in round_ if 1 / 1.3 <= o.area / r.area <= 1.3]
        if not 3 <= len(like) <= 16:
            continue
        ys = sorted(_centre(o.box)[1] for o in like)
        xs = [_centre(o.box)[0] for o in like]
        size = r.box[3] - r.box[1]
        rows = 1 + sum(b - a > size / 2 for a, b in zip(ys, ys[1:]))
        if ys[-1] - ys[0] >= MAP_SPAN * h and max(xs) - min(xs) >= 0.1 * w and rows >= 0.7 * len(like):
            # of the sets that qualify, the path is the longest (a map's few big round
            # decorations make a set of three too), then the one with ink on it (padlocks,
            # numbers, stars: a blank disc is a picture)
            key = (len(like), float(np.median([o.ink for o in like])))
            if best is None or key > best[:2]:
                best = (key[0], key[1], like)
    return [] if best is None else best[2]


def ink_centred(frame: np.ndarray, r: Region) -> bool:
    """Whether what is drawn on the round shape (whatever differs from its face) sits at
    its centre, as a node's number does; a shape some other thing overlaps has that ink at
    its edge."""
    x0, y0, x1, y1 = r.box
    crop = frame[max(0, y0) : y1, max(0, x0) : x1]
    if crop.size == 0:
        return False
    ch, cw = crop.shape[:2]
    lab = cv2.cvtColor(crop, cv2.COLOR_BGR2Lab).astype(np.float32)
    lab[..., 0] *= np.float32(100.0 / 255.0)
    lab[..., 1:] -= np.float32(128.0)
    ink = np.linalg.norm(lab - np.asarray(r.colour, np.float32), axis=2) > INK_DELTA
    yy, xx = np.mgrid[0:ch, 0:cw]
    inside = ((xx - cw / 2) / (INNER * cw / 2)) ** 2 + ((yy - ch / 2) / (INNER * ch / 2)) ** 2 <= 1.0
    mark = ink & inside
    if mark.sum() < 0.02 * inside.sum():
        return False
    mx, my = float(xx[mark].mean()), float(yy[mark].mean())
    return abs(mx - cw / 2) <= CENTRED * cw and abs(my - ch / 2) <= CENTRED * ch


def current_node(frame: np.ndarray, regions: list[Region], path: list[Region], w: int, h: int) -> Region | None:
    """The current level's node on a map of like badges: a round badge with ink at its
    centre (its number, read or not) that stands out by size, near the path. None when no
    one does."""
    if not path:
        return None
    node = float(np.median([r.area for r in path]))

    def near(r: Region) -> float:
        cx, cy = _centre(r.box)
        return min(float(np.hypot(cx - _centre(o.box)[0], cy - _centre(o.box)[1])) for o in path)

    big = [r for r in regions if r not in path and _round(r)
           and PROMINENT * node <= r.area <= NODE_AREA[1] * w * h and UNREAD_INK[0] <= r.ink <= UNREAD_INK[1]
           and MAP_BAND[0] * h <= _centre(r.box)[1] <= MAP_BAND[1] * h and near(r) <= NODE_REACH * h]  # fmt: skip
    big = [r for r in big if ink_centred(frame, r)]
    return min(big, key=near) if big else None
