"""The match-3 board and its text notation.

A board is a rows x cols grid of tile types 0..7, written `A`..`H`, with `.` for an
empty cell (no tile) and `?` for a cell a screen reader could not classify. The text
form is one line per row and round-trips: `Board.parse(str(b)) == b`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from agent.errors import NotationError

EMPTY = -1
UNKNOWN = -2
MAX_TYPES = 8
MIN_SIZE, MAX_SIZE = 3, 12
LETTERS = "ABCDEFGH"
DIRECTIONS: dict[str, tuple[int, int]] = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}
_DIRECTION_NAMES = {"U": "Up", "D": "Down", "L": "Left", "R": "Right"}


def _char(v: int) -> str:
    if v == EMPTY:
        return "."
    if v == UNKNOWN:
        return "?"
    return LETTERS[v]


@dataclass(frozen=True, eq=False)
class Board:
    """An immutable grid of tiles. `cells` is int8, EMPTY (-1), UNKNOWN (-2) or a type 0..7."""

    cells: np.ndarray

    def __post_init__(self) -> None:
        a = np.array(self.cells, dtype=np.int8, copy=True)
        if a.ndim != 2:
            raise NotationError(f"a board is 2-D, got shape {a.shape}")
        rows, cols = a.shape
        if not (MIN_SIZE <= rows <= MAX_SIZE and MIN_SIZE <= cols <= MAX_SIZE):
            raise NotationError(
                f"a board is {MIN_SIZE}x{MIN_SIZE} to {MAX_SIZE}x{MAX_SIZE}, got {rows}x{cols}"
            )
        if a.size and (a.min() < UNKNOWN or a.max() >= MAX_TYPES):
            raise NotationError(f"tile types are 0..{MAX_TYPES - 1} (A-H), EMPTY or UNKNOWN")
        a.setflags(write=False)
        object.__setattr__(self, "cells", a)

    @classmethod
    def _trusted(cls, cells: np.ndarray) -> "Board":
        """A board from cells the rules made out of a valid board (a swap, a clear, a
        fall): no copy, no checks. The solvers build thousands of these a decision."""
        board = object.__new__(cls)
        cells.setflags(write=False)
        object.__setattr__(board, "cells", cells)
        return board

    # -- notation -------------------------------------------------------------
    @classmethod
    def parse(cls, text: str) -> "Board":
        lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
        if not lines:
            raise NotationError("empty board text")
        widths = {len(ln) for ln in lines}
        if len(widths) != 1:
            raise NotationError(f"rows have different lengths {sorted(widths)}: every row needs one letter per cell")
        grid = []
        for r, ln in enumerate(lines):
            row = []
            for c, ch in enumerate(ln):
                if ch == ".":
                    row.append(EMPTY)
                elif ch == "?":
                    row.append(UNKNOWN)
                elif ch.upper() in LETTERS:
                    row.append(LETTERS.index(ch.upper()))
                else:
                    raise NotationError(f"row {r + 1}, column {c + 1}: {ch!r} is not a tile (A-H, '.' or '?')")
            grid.append(row)
        return cls(np.array(grid, dtype=np.int8))

    def __str__(self) -> str:
        return "\n".join("".join(_char(v) for v in row) for row in self.cells.tolist())

    def __repr__(self) -> str:
        return f"Board.parse({str(self)!r})"

    # -- value semantics ------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Board) and self.cells.shape == other.cells.shape and bool(
            np.array_equal(self.cells, other.cells)
        )

    def __hash__(self) -> int:
        return hash((self.cells.shape, self.cells.tobytes()))

    # -- queries --------------------------------------------------------------
    @property
    def rows(self) -> int:
        return int(self.cells.shape[0])

    @property
    def cols(self) -> int:
        return int(self.cells.shape[1])

    @property
    def shape(self) -> tuple[int, int]:
        return self.rows, self.cols

    def __getitem__(self, rc: tuple[int, int]) -> int:
        return int(self.cells[rc])

    def inside(self, r: int, c: int) -> bool:
        return 0 <= r < self.rows and 0 <= c < self.cols

    def has_unknown(self) -> bool:
        return bool((self.cells == UNKNOWN).any())

    def swapped(self, move: "Move") -> "Board":
        (r1, c1), (r2, c2) = move.cells()
        a = self.cells.copy()
        a[r1, c1], a[r2, c2] = a[r2, c2], a[r1, c1]
        return Board._trusted(a)


@dataclass(frozen=True, order=True)
class Move:
    """Swap the tile at (row, col) with its neighbour in `direction` (U, D, L or R)."""

    row: int
    col: int
    direction: str

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise NotationError(f"direction must be one of U, D, L, R, got {self.direction!r}")

    @property
    def other(self) -> tuple[int, int]:
        dr, dc = DIRECTIONS[self.direction]
        return self.row + dr, self.col + dc

    def cells(self) -> tuple[tuple[int, int], tuple[int, int]]:
        return (self.row, self.col), self.other

    def canonical(self) -> "Move":
        """The same swap written from its top/left cell (direction R or D)."""
        if self.direction == "L":
            return Move(self.row, self.col - 1, "R")
        if self.direction == "U":
            return Move(self.row - 1, self.col, "D")
        return self

    def same_swap(self, other: "Move") -> bool:
        return self.canonical() == other.canonical()

    def __str__(self) -> str:
        return f"{self.row},{self.col},{self.direction}"

    def describe(self) -> str:
        r2, c2 = self.other
        return f"swap ({self.row},{self.col}) with ({r2},{c2}) - {_DIRECTION_NAMES[self.direction]}"

    @classmethod
    def parse(cls, text: str) -> "Move":
        try:
            r, c, d = (p.strip() for p in text.split(","))
            return cls(int(r), int(c), d.upper()[:1])
        except (ValueError, IndexError) as exc:
            raise NotationError(f"a move is ROW,COL,DIR (e.g. 2,3,R), got {text!r}") from exc


def adjacent_swaps(rows: int, cols: int) -> Iterator[Move]:
    """Every adjacent swap once, from its top/left cell."""
    for r in range(rows):
        for c in range(cols):
            if c + 1 < cols:
                yield Move(r, c, "R")
            if r + 1 < rows:
                yield Move(r, c, "D")
