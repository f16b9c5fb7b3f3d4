"""Where a board's lattice lines fall: the phase of a lattice of known period.

Boards put their tiles in the middle of the cells and their constant parts (gaps,
slots, frames, bevels) on the lines between them. So across the cells of a lattice at
the right phase the samples along the cell borders vary little and those in the middle
a lot; shifted by a fraction of a cell, the lines cut through tiles and the borders
vary as much as the rest. Unlike matching tiles to each other this also works on a
board that is nearly all empty slots.
"""

from __future__ import annotations

import numpy as np

from agent.vision.lattice import Lattice, sample_cells


def border_variance(blur: np.ndarray, lat: Lattice) -> float:
    """How much the cells differ from each other along their borders, relative to
    overall (see the module docstring): smallest at the right phase."""
    cells = sample_cells(blur, lat)
    s = cells.shape[2]
    var = cells.reshape(-1, s, s, cells.shape[-1]).var(axis=0).sum(axis=-1)  # (s, s)
    ring = np.ones((s, s), bool)
    ring[1:-1, 1:-1] = False
    return float(var[ring].mean() / max(var.mean(), 1e-6))


def best_phase(blur: np.ndarray, core: tuple[float, float, float, float], px: float, py: float) -> tuple[float, float, float]:
    """(x0, y0, score): the lattice phase inside `core` whose cell borders vary least."""
    cx0, cy0, cx1, cy1 = core
    cols = max(2, int((cx1 - cx0) / px) - 1)
    rows = max(2, int((cy1 - cy0) / py) - 1)

    def score(fx: float, fy: float) -> float:
        return border_variance(blur, Lattice(cx0 + fx, cy0 + fy, px, py, cols, rows))

    n = 16
    grid = [(score(i * px / n, j * py / n), i * px / n, j * py / n) for j in range(n) for i in range(n)]
    best, fx, fy = min(grid)
    # finer, one axis at a time
    for axis in (0, 1):
        p = px if axis == 0 else py
        steps = np.arange(-4, 5) * p / (4 * n)
        vals = np.array([score(fx + s, fy) if axis == 0 else score(fx, fy + s) for s in steps])
        shift = float(steps[int(np.argmin(vals))])
        if axis == 0:
            fx += shift
        else:
            fy += shift
        best = float(vals.min())
    return cx0 + fx, cy0 + fy, best
