"""Where a board's lattice lines fall: the phase of a lattice of known period.

Boards put their tiles in the middle of the cells and their constant parts (gaps,
slots, frames, bevels) on the lines between them. So across the cells of a lattice at
the right phase the samples along the cell borders vary little and those in the middle
a lot; shifted by a fraction of a cell, the lines cut through tiles and the borders
vary as much as the rest. Unlike matching tiles to each other this also works on a
board that is nearly all empty slots.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from agent.vision.lattice import DESC_SAMPLE, Lattice, sample_cells


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
    grid = _coarse_scores(blur, cx0, cy0, px, py, cols, rows, n)
    j, i = np.unravel_index(int(np.argmin(grid)), grid.shape)
    best, fx, fy = float(grid[j, i]), float(i * px / n), float(j * py / n)
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


def _coarse_scores(blur: np.ndarray, cx0: float, cy0: float, px: float, py: float, cols: int, rows: int,
                   n: int) -> np.ndarray:  # fmt: skip
    """border_variance of the lattice at every phase (i*px/n, j*py/n) from (cx0, cy0),
    as an (n, n) array indexed [j, i], from one sampling of the area: with n an even
    multiple of the samples per cell side, every phase's points lie on one grid of n
    points a cell, and the sums over cells that the variances need are shared."""
    s = DESC_SAMPLE
    step = n // s
    if n % s or step % 2:
        return np.array([[border_variance(blur, Lattice(cx0 + i * px / n, cy0 + j * py / n, px, py, cols, rows))
                          for i in range(n)] for j in range(n)])  # fmt: skip
    # A cell's sample u of the lattice at phase i lies (c + (u + 1/2) / s + i / n) cells on,
    # at grid point n*c + o with o = step*u + step/2 + i < 2n; sample_cells reads a
    # one-sample cell at its middle, hence the grid's half step back.
    grid = Lattice(cx0 - px / n / 2, cy0 - py / n / 2, px / n, py / n, n * (cols + 1), n * (rows + 1))
    fine = sample_cells(blur, grid, sample=1).reshape(n * (rows + 1), n * (cols + 1), -1).astype(np.float64)
    sums = []
    for v in (fine, fine * fine):
        blocks = v.reshape(rows + 1, n, cols + 1, n, -1)
        by_x = np.concatenate([blocks[:, :, :cols].sum(axis=2), blocks[:, :, 1:].sum(axis=2)], axis=2)  # o_x < 2n
        sums.append(np.concatenate([by_x[:rows].sum(axis=0), by_x[1:].sum(axis=0)], axis=0))  # (2n, 2n, C)
    cells = rows * cols
    mean = sums[0] / cells
    var = (sums[1] / cells - mean * mean).sum(axis=-1)  # (o_y, o_x)
    o = step * np.arange(s)[None, :] + step // 2 + np.arange(n)[:, None]  # (phase, sample)
    at = var[o[:, None, :, None], o[None, :, None, :]]  # (j, i, v, u)
    ring = np.ones((s, s), bool)
    ring[1:-1, 1:-1] = False
    return cast(np.ndarray, at[:, :, ring].mean(axis=-1) / np.maximum(at.mean(axis=(2, 3)), 1e-6))
