"""One tile type on different background layers is one class (agent.vision.layers).

Boards are drawn here the way Candy Crush draws level 16: candies stand on glass tiles or
on the bare board, and blockers fill their cells, plain or cracked. Calibration must give
each candy colour one class whatever is under it, and keep the blocker variants apart.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from agent.vision.calibrate import sample_board
from agent.vision.cluster import cluster_cells, symmetric_distances
from agent.vision.layers import merge_layer_splits, object_mask, piece_difference, same_piece

CELL = 80
BOARD_BG = (110, 70, 40)  # dark blue board (BGR)
GLASS = (250, 228, 226)  # light lavender glass tile
CANDIES = {"r": (40, 40, 220), "g": (40, 190, 40), "o": (30, 150, 250), "p": (200, 50, 170)}
PINK = (150, 120, 245)


def jpeg(img: np.ndarray, quality: int = 70) -> np.ndarray:
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def _cell(img: np.ndarray, x0: int, y0: int, kind: str, glass: bool) -> None:
    c, aa = CELL, cv2.LINE_AA
    cx, cy, r = x0 + c // 2, y0 + c // 2, int(0.34 * c)
    if kind.startswith("blocker"):  # fills its cell, edge to edge but for the grid line, shaded
        t = np.linspace(1.25, 0.75, c - 6)[:, None, None]
        img[y0 + 2 : y0 + c - 4, x0 + 2 : x0 + c - 4] = np.clip(np.array(PINK) * t, 0, 255).astype(np.uint8)
        if kind == "blocker-cracked":
            pts = np.array([[x0 + 12, y0 + 20], [cx - 6, cy - 4], [cx + 8, cy + 10], [x0 + c - 14, y0 + c - 18]])
            cv2.polylines(img, [pts.astype(np.int32)], False, (255, 255, 255), 3, aa)
            cv2.line(img, (cx - 6, cy - 4), (cx - 4, y0 + c - 12), (255, 255, 255), 3, aa)
        return
    if glass:  # the layer under the candy: a light tile with a lighter rim
        cv2.rectangle(img, (x0 + 2, y0 + 2), (x0 + c - 3, y0 + c - 3), (255, 245, 244), -1)
        cv2.rectangle(img, (x0 + 5, y0 + 5), (x0 + c - 6, y0 + c - 6), GLASS, -1)
    colour = CANDIES[kind]
    if kind == "r":
        cv2.circle(img, (cx, cy), r, colour, -1, aa)
    elif kind == "g":
        cv2.rectangle(img, (cx - r + 4, cy - r + 4), (cx + r - 4, cy + r - 4), colour, -1, aa)
    elif kind == "o":
        cv2.ellipse(img, (cx, cy), (r - 6, r), 0, 0, 360, colour, -1, aa)
    else:
        a = np.deg2rad(np.arange(6) * 60)
        pts = np.stack([cx + r * np.cos(a), cy + r * np.sin(a)], 1).astype(np.int32)
        cv2.fillPoly(img, [pts], colour, aa)
    cv2.circle(img, (cx - r // 3, cy - r // 3), max(2, r // 6), (255, 255, 255), -1, aa)  # a highlight


def layered_board(seed: int = 0, rows: int = 8, cols: int = 8) -> tuple[np.ndarray, tuple[int, int, int, int], list[list[str]]]:
    """A screenshot, its board box and its truth: candies on glass or bare board, plain and
    cracked blockers."""
    rng = np.random.default_rng(seed)
    kinds = list(CANDIES) + ["blocker-plain", "blocker-cracked"]
    truth = rng.choice(kinds, size=(rows, cols), p=[0.19, 0.19, 0.19, 0.19, 0.12, 0.12])
    glass = rng.random((rows, cols)) < 0.5
    w, h = 1080, 1920
    img = np.full((h, w, 3), (160, 170, 120), np.uint8)
    x0, y0 = (w - cols * CELL) // 2, 500
    cv2.rectangle(img, (x0, y0), (x0 + cols * CELL - 1, y0 + rows * CELL - 1), BOARD_BG, -1)
    for r in range(rows):
        for c in range(cols):
            _cell(img, x0 + c * CELL, y0 + r * CELL, str(truth[r, c]), bool(glass[r, c]))
    return img, (x0, y0, x0 + cols * CELL, y0 + rows * CELL), truth.tolist()


def clustered(frame: np.ndarray, bbox, rows: int = 8, cols: int = 8, join: bool = True):
    """The cells of the board at bbox clustered as calibrate_frame does (board finding
    is tested elsewhere; here the box is the true one)."""
    cells = sample_board(frame, bbox, rows, cols)
    swapped = sample_board(frame[..., ::-1], bbox, rows, cols)
    dist = symmetric_distances(cells.features, swapped.features)
    views = (cells.lab, swapped.lab) if join else ()
    return cluster_cells(dist, rows, cols, cells.contrast, views=views, margin=cells.margin)


def same_split(got: list[list[str]], truth: list[list[str]]) -> bool:
    """Whether the labels split the cells exactly as the truth does (names aside)."""
    pairs = {(a, b) for ga, ta in zip(got, truth) for a, b in zip(ga, ta)}
    return len({a for a, _ in pairs}) == len(pairs) == len({b for _, b in pairs})


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("compress", [False, True])
def test_one_candy_on_two_layers_is_one_class_and_blockers_stay_apart(seed, compress):
    frame, bbox, truth = layered_board(seed)
    if compress:
        frame = jpeg(frame)
    got = clustered(frame, bbox).labels
    assert same_split(got, truth), "\n".join("".join(r) for r in got)


def test_without_the_join_the_layers_split_the_candies():
    frame, bbox, truth = layered_board(0)
    assert len(clustered(frame, bbox, join=False).classes) > len({v for row in truth for v in row})


def _samples(kind: str, glass: bool) -> tuple[np.ndarray, int]:
    img = np.full((CELL * 3, CELL * 3, 3), BOARD_BG, np.uint8)
    _cell(img, CELL, CELL, kind, glass)
    s = sample_board(img, (CELL, CELL, 2 * CELL, 2 * CELL), 1, 1)
    return s.lab[0], s.margin


def test_same_piece_looks_at_the_piece_not_the_layer():
    red_glass, m = _samples("r", True)
    red_bare, _ = _samples("r", False)
    green_glass, _ = _samples("g", True)
    plain, _ = _samples("blocker-plain", False)
    cracked, _ = _samples("blocker-cracked", False)
    assert same_piece(red_glass, red_bare, m)
    assert not same_piece(red_glass, green_glass, m)
    assert not same_piece(plain, cracked, m)  # the crack is the only object: nothing to join on
    # a tile that fills its cell has no object at all
    assert not object_mask(plain)[m:-m, m:-m].any()
    assert piece_difference(plain, red_bare, m) == np.inf


def test_merge_needs_every_view_and_leaves_other_clusters_alone():
    red_glass, m = _samples("r", True)
    red_bare, _ = _samples("r", False)
    green, _ = _samples("g", True)
    view = np.stack([red_glass, red_bare, green])
    groups = np.array([0, 1, 2])
    dist = np.zeros((3, 3))
    assert merge_layer_splits(groups, dist, [view], m, [0, 1, 2]).tolist() == [0, 0, 2]
    # a cluster not offered (an empty one) is never joined
    assert merge_layer_splits(groups, dist, [view], m, [1, 2]).tolist() == [0, 1, 2]
    # a second view that disagrees vetoes the join
    other = np.stack([red_glass, green, red_bare])
    assert merge_layer_splits(groups, dist, [view, other], m, [0, 1, 2]).tolist() == [0, 1, 2]
    assert merge_layer_splits(groups, dist, [], m, [0, 1, 2]).tolist() == [0, 1, 2]
