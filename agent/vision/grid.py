"""Cutting a board's bounding box into cells.

A bbox is (x0, y0, x1, y1) in screen pixels with x1 and y1 exclusive, so its width is
x1 - x0. Cells are equal rectangles up to rounding: the cut lines sit at the rounded
float positions, which makes neighbouring cells share an edge exactly (no gaps, no
overlap) and keeps the rounding error under one pixel however many cells there are.
"""

from __future__ import annotations

import numpy as np

BBox = tuple[int, int, int, int]
Frac = tuple[float, float, float, float]


def check_bbox(bbox: BBox, rows: int, cols: int) -> tuple[int, int, int, int]:
    """The bbox as four ints; every cell must be at least one pixel each way."""
    if len(bbox) != 4:
        raise ValueError(f"a bbox is (x0, y0, x1, y1), got {bbox!r}")
    x0, y0, x1, y1 = (int(v) for v in bbox)
    if rows < 1 or cols < 1:
        raise ValueError(f"a grid needs at least one row and column, got {rows}x{cols}")
    if x1 - x0 < cols or y1 - y0 < rows:
        raise ValueError(f"bbox {bbox!r} is too small for {rows}x{cols} cells")
    return x0, y0, x1, y1


def _edges(lo: int, hi: int, n: int) -> np.ndarray:
    # floor(v + 0.5) rather than np.rint: banker's rounding would make the cut
    # depend on whether the half-pixel lands on an even or odd coordinate.
    return np.floor(lo + (hi - lo) * np.arange(n + 1) / n + 0.5).astype(np.int64)


def cell_edges(bbox: BBox, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """The cut lines: xs (cols + 1,) and ys (rows + 1,), starting at x0/y0 and ending at x1/y1."""
    x0, y0, x1, y1 = check_bbox(bbox, rows, cols)
    return _edges(x0, x1, cols), _edges(y0, y1, rows)


def cell_boxes(bbox: BBox, rows: int, cols: int) -> np.ndarray:
    """Each cell's (x0, y0, x1, y1), shape (rows, cols, 4)."""
    xs, ys = cell_edges(bbox, rows, cols)
    out = np.empty((rows, cols, 4), dtype=np.int64)
    out[..., 0] = xs[None, :-1]
    out[..., 1] = ys[:-1, None]
    out[..., 2] = xs[None, 1:]
    out[..., 3] = ys[1:, None]
    return out


def cell_centers(bbox: BBox, rows: int, cols: int) -> np.ndarray:
    """Each cell's centre pixel (x, y), shape (rows, cols, 2), for aiming gestures."""
    xs, ys = cell_edges(bbox, rows, cols)
    cx = (xs[:-1] + xs[1:] - 1) // 2  # -1: the last pixel of a cell is x1 - 1
    cy = (ys[:-1] + ys[1:] - 1) // 2
    out = np.empty((rows, cols, 2), dtype=np.int64)
    out[..., 0] = cx[None, :]
    out[..., 1] = cy[:, None]
    return out


def cell_at(bbox: BBox, rows: int, cols: int, x: float, y: float) -> tuple[int, int] | None:
    """The (row, col) of the cell holding pixel (x, y), or None outside the board."""
    xs, ys = cell_edges(bbox, rows, cols)
    if not (xs[0] <= x < xs[-1] and ys[0] <= y < ys[-1]):
        return None
    c = int(np.searchsorted(xs, x, side="right")) - 1
    r = int(np.searchsorted(ys, y, side="right")) - 1
    return r, c


def bbox_to_frac(bbox: BBox, width: int, height: int) -> Frac:
    """A bbox as fractions of the screen, so it can be carried to another resolution."""
    x0, y0, x1, y1 = bbox
    return (x0 / width, y0 / height, x1 / width, y1 / height)


def frac_to_bbox(frac: Frac, width: int, height: int) -> BBox:
    """Fractions back to pixels, clamped to the screen."""
    f0, f1, f2, f3 = frac
    x0 = min(max(int(np.floor(f0 * width + 0.5)), 0), width)
    y0 = min(max(int(np.floor(f1 * height + 0.5)), 0), height)
    x1 = min(max(int(np.floor(f2 * width + 0.5)), 0), width)
    y1 = min(max(int(np.floor(f3 * height + 0.5)), 0), height)
    return (x0, y0, x1, y1)
