"""Finding the lines to remove, on bitboards.

Each colour's cells are a Python int with one bit per cell, laid out row by row with a
zero guard column, so shifting by 1, stride, stride+1 or stride-1 walks one step along a
row, a column or a diagonal and can never wrap to the next row.

Rainbow semantics (the seed's `xiaochu`): a run of consecutive balls in one direction is
a line of colour c if every ball in it is c or the rainbow ball; such a run of at least
`line_length` balls is removed whole. So one rainbow ball can complete lines of two
colours at once (it is in both runs), and a run of rainbow balls alone only counts when
it is part of a run that holds the colour too.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from agent.games.lines.board import EMPTY, WILD


@dataclass(frozen=True)
class Geometry:
    rows: int
    cols: int

    @property
    def stride(self) -> int:
        return self.cols + 1

    @property
    def shifts(self) -> tuple[int, int, int, int]:
        s = self.stride
        return (1, s, s + 1, s - 1)

    @property
    def nbits(self) -> int:
        return self.rows * self.stride

    @property
    def full(self) -> int:
        """Every real cell (guard column excluded)."""
        return to_int(np.ones((self.rows, self.cols), dtype=bool))


@lru_cache(maxsize=16)
def geometry(rows: int, cols: int) -> Geometry:
    return Geometry(rows, cols)


def to_int(mask: np.ndarray) -> int:
    rows, cols = mask.shape
    padded = np.zeros((rows, cols + 1), dtype=bool)
    padded[:, :cols] = mask
    return int.from_bytes(np.packbits(padded.ravel(), bitorder="little").tobytes(), "little")


def to_mask(bits: int, rows: int, cols: int) -> np.ndarray:
    n = rows * (cols + 1)
    raw = np.frombuffer(bits.to_bytes((n + 7) // 8, "little"), dtype=np.uint8)
    flat = np.unpackbits(raw, bitorder="little")[:n].astype(bool)
    return flat.reshape(rows, cols + 1)[:, :cols].copy()


def colour_bits(board: np.ndarray) -> tuple[dict[int, int], int]:
    """Bitboards of each colour present, and of the rainbow balls."""
    values = np.unique(board)
    colours = {int(v): to_int(board == v) for v in values if v != EMPTY and v != WILD and v > 0}
    return colours, to_int(board == WILD)


def runs_at_least(m: int, d: int, length: int) -> int:
    """Cells of the runs of `m` along shift `d` that are at least `length` long."""
    starts = m
    for k in range(1, length):
        starts &= m >> (k * d)
        if not starts:
            return 0
    cover = starts
    for k in range(1, length):
        cover |= starts << (k * d)
    return cover


def line_bits(colours: dict[int, int], wild: int, geom: Geometry, length: int) -> int:
    """The cells of every line to remove."""
    out = 0
    for cbits in colours.values():
        m = cbits | wild
        for d in geom.shifts:
            cover = runs_at_least(m, d, length)
            if not cover:
                continue
            # Keep only the runs that hold this colour: grow from its balls along d.
            keep = cover & cbits
            while True:
                grown = keep | ((keep << d) & cover) | ((keep >> d) & cover)
                if grown == keep:
                    break
                keep = grown
            out |= keep
    return out


def find_lines(board: np.ndarray, length: int) -> np.ndarray:
    """A boolean mask of the balls that lines of at least `length` remove."""
    rows, cols = board.shape
    colours, wild = colour_bits(board)
    bits = line_bits(colours, wild, geometry(rows, cols), length)
    return to_mask(bits, rows, cols) if bits else np.zeros((rows, cols), dtype=bool)
