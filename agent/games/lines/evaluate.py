"""Scoring every move of a position at once, with numpy.

A position's worth is a sum over all windows of `line_length` cells in the four
directions: a window whose balls are all one colour (rainbow balls join any colour)
is still live, and is worth more the more balls it holds. A move only changes the
windows through its two cells, and a ball that keeps its colour leaves the windows
through both cells unchanged, so every move's change is

    D[s, d] = R[s] + A[d, colour(s)] - (sum of both deltas over windows holding s and d)

where R is what lifting the ball at s loses and A what dropping a ball of that colour
at d gains. These are a few small matrix products for the whole position, instead of
one board evaluation per move. Moves that complete a line are flagged the same way and
then resolved exactly by the rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import cast

import cv2
import numpy as np

from agent.games.lines.board import EMPTY, WILD

# Worth of a live window holding m balls (m = 0 .. line_length-1); a window one ball
# short of a line is worth far more than two windows half full.
DEFAULT_WEIGHTS = (0.25, 1.0, 3.0, 10.0, 30.0)


@dataclass(frozen=True)
class Geometry:
    rows: int
    cols: int
    length: int
    windows: np.ndarray  # (nwin, length) flat cell indices
    inc: np.ndarray  # (ncells, nwin) float: cell in window
    neighbours: np.ndarray  # (ncells, ncells) float: 4-adjacent


@lru_cache(maxsize=16)
def geometry(rows: int, cols: int, length: int) -> Geometry:
    wins: list[list[int]] = []
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        for r in range(rows):
            for c in range(cols):
                er, ec = r + dr * (length - 1), c + dc * (length - 1)
                if 0 <= er < rows and 0 <= ec < cols:
                    wins.append([(r + dr * k) * cols + c + dc * k for k in range(length)])
    windows = np.array(wins, dtype=np.int64).reshape(-1, length)
    n = rows * cols
    inc = np.zeros((n, len(wins)), dtype=np.float64)
    for w, cells in enumerate(wins):
        inc[cells, w] = 1.0
    nb = np.zeros((n, n), dtype=np.float64)
    for r in range(rows):
        for c in range(cols):
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                if 0 <= r + dr < rows and 0 <= c + dc < cols:
                    nb[r * cols + c, (r + dr) * cols + c + dc] = 1.0
    windows.setflags(write=False)
    inc.setflags(write=False)
    nb.setflags(write=False)
    return Geometry(rows, cols, length, windows, inc, nb)


def colour_index(flat: np.ndarray, colors: int) -> np.ndarray:
    """Column of each cell in the count table: 0..colors-1 colours, colors wild, colors+1 empty."""
    idx = flat.astype(np.int64) - 1
    idx[flat == WILD] = colors
    idx[flat == EMPTY] = colors + 1
    return idx


@dataclass
class MoveTable:
    """Every move of a position: value change and whether it completes a line."""

    legal: np.ndarray  # (n, n) bool: ball at s may move to d
    delta: np.ndarray  # (n, n) float: change in window worth for non-clearing moves
    clears: np.ndarray  # (n, n) bool: the move completes a line
    worth: float  # window worth of the position itself
    empties: int


@dataclass
class Evaluator:
    rows: int
    cols: int
    colors: int
    length: int
    weights: tuple[float, ...] = DEFAULT_WEIGHTS
    geom: Geometry = field(init=False)
    _w: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.geom = geometry(self.rows, self.cols, self.length)
        w = list(self.weights)[: self.length]
        while len(w) < self.length:
            w.append(w[-1] * 3.0)
        # Index `length` is a full window: it is a line, resolved by the rules, so it is
        # never scored here; index -1 guards impossible counts.
        self._w = np.array(w + [0.0], dtype=np.float64)

    # -- window worth ------------------------------------------------------------
    def _counts(self, flat: np.ndarray) -> np.ndarray:
        k = self.colors
        onehot = np.zeros((flat.size, k + 2), dtype=np.float64)
        onehot[np.arange(flat.size), colour_index(flat, k)] = 1.0
        return self.geom.inc.T @ onehot  # (nwin, k+2)

    def _value(self, colour_counts: np.ndarray, wild: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        distinct = (colour_counts > 0.5).sum(axis=-1)
        m = np.clip(colour_counts.sum(axis=-1) + wild, 0, self.length).astype(np.int64)
        live = distinct <= 1
        value = np.where(live, self._w[m], 0.0)
        complete = live & (distinct == 1) & (m >= self.length)
        return value, complete

    def worth(self, board: np.ndarray) -> float:
        cnt = self._counts(board.ravel())
        v, _ = self._value(cnt[:, : self.colors], cnt[:, self.colors])
        return float(v.sum())

    # -- every move ----------------------------------------------------------------
    def reach(self, board: np.ndarray) -> np.ndarray:
        """(n, n) bool: the ball at s can reach the empty cell d."""
        empty = (board == EMPTY).astype(np.uint8)
        nreg, labels = cv2.connectedComponents(empty, connectivity=4)
        n = board.size
        if nreg <= 1:
            return np.zeros((n, n), dtype=bool)
        lab = labels.ravel()
        onehot = np.zeros((n, nreg), dtype=np.float64)
        onehot[np.arange(n), lab] = 1.0
        onehot[:, 0] = 0.0  # label 0 is the balls
        touches = (self.geom.neighbours @ onehot) > 0.5
        ball = board.ravel() != EMPTY
        return cast(np.ndarray, ((touches.astype(np.float64) @ onehot.T) > 0.5) & ball[:, None])

    def table(self, board: np.ndarray) -> MoveTable:
        k = self.colors
        flat = board.ravel()
        inc = self.geom.inc
        cnt = self._counts(flat)
        colour, wild = cnt[:, :k], cnt[:, k]
        base, _ = self._value(colour, wild)
        # Each window with one more / one fewer ball of kind j (j = k is the rainbow).
        step = np.eye(k + 1)
        add_c = colour[:, None, :] + step[None, :, :k]
        add_w = wild[:, None] + step[None, :, k]
        v_add, complete = self._value(add_c, add_w)
        v_rem, _ = self._value(colour[:, None, :] - step[None, :, :k], wild[:, None] - step[None, :, k])
        d_add = np.where(complete, 0.0, v_add - base[:, None])
        d_rem = v_rem - base[:, None]
        gain = inc @ d_add  # (n, k+1): drop a ball of kind j at d
        loss = inc @ d_rem  # (n, k+1): lift a ball of kind j from s
        comp = complete.astype(np.float64)
        completes = inc @ comp  # (n, k+1): lines a ball of kind j at d would complete
        legal = self.reach(board)
        n = flat.size
        delta = np.zeros((n, n))
        clears = np.zeros((n, n), dtype=bool)
        kinds = colour_index(flat, k)
        for j in np.unique(kinds[legal.any(axis=1)]):
            rows = np.flatnonzero((kinds == j) & legal.any(axis=1))
            inc_s = inc[rows]
            shared = (inc_s * (d_add[:, j] + d_rem[:, j])) @ inc.T
            delta[rows] = loss[rows, j][:, None] + gain[:, j][None, :] - shared
            shared_lines = (inc_s * comp[:, j]) @ inc.T
            clears[rows] = (completes[:, j][None, :] - shared_lines) > 0.5
        clears &= legal
        return MoveTable(legal, delta, clears, float(base.sum()), int((flat == EMPTY).sum()))


def fragmentation(board: np.ndarray) -> tuple[int, int]:
    """(empty cells outside the largest empty region, number of empty regions)."""
    empty = (board == EMPTY).astype(np.uint8)
    nreg, _, stats, _ = cv2.connectedComponentsWithStats(empty, connectivity=4)
    if nreg <= 1:
        return 0, 0
    sizes = stats[1:, cv2.CC_STAT_AREA]
    return int(sizes.sum() - sizes.max()), int(nreg - 1)
