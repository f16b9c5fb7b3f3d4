"""Roles: what each appearance class is to the game, decided from the screen itself.

A class (one look, see agent.vision.cluster) has one of these roles:

- `tile`: a piece of a colour, matchable; the plain look of its colour kind.
- `special`: another look of a colour that matches as that colour (striped, wrapped,
  flame, star, glowing; also a lit or shaded look of the plain tile): a class that
  agent.vision.kinds joined to a colour.
- `colourless`: a special that matches nothing by colour (a hypercube, a colour bomb):
  its pieces carry many hues at once.
- `blocker`: inside the board, not a matchable tile (crates, jars, gum, stone).
- `hole`: not part of the board (a person may set it for a class that shows what lies
  behind an irregular board).
- `layer`: jelly, glass or a lit slot with nothing on it: the tile on top, when there is
  one, decides the cell's kind, so on its own it reads as no tile.

In the colour-kind view a tile and its specials share a letter, a colourless special is
a kind of its own, blockers are "#", holes and bare layers ".".

Tile, special and colourless come from the colours (agent.vision.kinds and the hue spread
below). Blockers come from where a class lies, which a game's rules constrain
(`RoleHints`):

- a game whose matches are runs of n in a line never shows a matchable class n in a line
  on a board at rest, so a class with most of its cells in such runs is not matchable
  (a shelf of jars along an edge, a wall of crates);
- level designers place obstacles in mirror-symmetric patterns, and tiles fall where they
  may: a class whose cells are exactly mirror-symmetric, when fewer than SYMMETRY_CHANCE
  of all sets of that many board cells are (the exact share is counted below), is an
  obstacle. A small class (a cracked look of gum) that is itself symmetric and whose
  nearest colour is a blocker is one too.

Anything calibration cannot tell (a lone stone that lies at random, a layer under every
tile) a person can set in the profile, as a class's `role`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import comb
from typing import Literal

import cv2
import numpy as np

from agent.vision.classify import EMPTY_LABEL, UNKNOWN_LABEL

Role = Literal["tile", "special", "colourless", "blocker", "hole", "layer"]
ROLES: tuple[str, ...] = ("tile", "special", "colourless", "blocker", "hole", "layer")
BLOCKER_LABEL = "#"
NO_TILE_ROLES = ("hole", "layer")  # read as "." in the colour-kind view

RUN_SHARE = 0.5  # of a class's cells in runs: more than a momentary match on a live frame
SYMMETRY_CHANCE = 0.01  # of random placements as symmetric as a class's: below this, by design
MIN_SYMMETRIC = 3  # cells: fewer are symmetric by chance too often to say anything alone
MULTICOLOUR = 0.45  # hue resultant length below this: many hues at once (a rainbow piece)
MULTICOLOUR_SHARE = 0.5  # ... and most of its piece coloured (not a grey piece with a tint)


@dataclass(frozen=True)
class RoleHints:
    """What a game's rules say about where its pieces can lie on a board at rest."""

    run_length: int | None = None  # no matchable class lies this many in a line at rest
    symmetric_layouts: bool = False  # obstacles are placed by level designers
    # pieces fall down their columns into cleared cells and obstacles keep their place:
    # what stays put while its column falls is no piece (agent.vision.fixed)
    falls: bool = False


@dataclass(frozen=True)
class ClassInfo:
    """One appearance class as a person reads the legend: letter, role, kind, a name, a
    colour (#rrggbb) and how many cells of the frame it took."""

    letter: str
    role: str
    kind: str
    name: str
    colour: str
    cells: int = 0

    def as_dict(self) -> dict[str, object]:
        return {"letter": self.letter, "name": self.name, "role": self.role, "kind": self.kind,
                "colour": self.colour, "cells": self.cells}  # fmt: skip


def kind_for(label: str, role: str | None, kind: str | None) -> str:
    """The colour-kind view of one class: its colour's letter, "#" for a blocker, "."
    for a hole or a bare layer. Labels that are no class ("." and "?") are themselves."""
    if label in (EMPTY_LABEL, UNKNOWN_LABEL):
        return label
    if role == "blocker":
        return BLOCKER_LABEL
    if role in NO_TILE_ROLES:
        return EMPTY_LABEL
    return kind or label


# -- where a class lies -----------------------------------------------------------------------


def in_runs(cells: set[tuple[int, int]], n: int) -> set[tuple[int, int]]:
    """The cells of a set that lie in a horizontal or vertical line of n or more of it."""
    out: set[tuple[int, int]] = set()
    for dr, dc in ((0, 1), (1, 0)):
        for r, c in cells:
            if (r - dr, c - dc) in cells:
                continue  # not the start of a line
            line = [(r, c)]
            while (line[-1][0] + dr, line[-1][1] + dc) in cells:
                line.append((line[-1][0] + dr, line[-1][1] + dc))
            if len(line) >= n:
                out.update(line)
    return out


@lru_cache(maxsize=32)
def _mirrors(rows: int, cols: int) -> tuple[dict[tuple[int, int], tuple[int, int]], ...]:
    """Left-right, top-bottom and half-turn symmetry of a rows x cols board, as maps."""
    cells = [(r, c) for r in range(rows) for c in range(cols)]
    return (
        {(r, c): (r, cols - 1 - c) for r, c in cells},
        {(r, c): (rows - 1 - r, c) for r, c in cells},
        {(r, c): (rows - 1 - r, cols - 1 - c) for r, c in cells},
    )


def symmetric_share(board: set[tuple[int, int]], mirror: dict[tuple[int, int], tuple[int, int]], k: int) -> float:
    """The share of all k-cell subsets of the board's cells that the mirror maps onto
    themselves: pick j pairs of mirror images and k - 2j cells on the axis."""
    fixed = sum(1 for p in board if mirror[p] == p)
    pairs = sum(1 for p in board if mirror[p] != p and mirror[p] in board) // 2
    total = comb(len(board), k)
    if total == 0:
        return 1.0
    return sum(comb(pairs, j) * comb(fixed, k - 2 * j) for j in range(k // 2 + 1)) / total


def symmetry_chance(cells: set[tuple[int, int]], board: set[tuple[int, int]], rows: int, cols: int) -> float | None:
    """How often a random set of as many board cells is as symmetric as `cells` (summed
    over the symmetries it has), or None when it has none."""
    chance = 0.0
    hit = False
    for m in _mirrors(rows, cols):
        if all(m[p] in cells for p in cells):
            hit = True
            chance += symmetric_share(board, m, len(cells))
    return chance if hit else None


SPAN_CELLS = 6  # cells of a group of looks that lie exactly side by side: fewer may be chance
# Two looks that fill a block together (a crate block with its cracked crates, two
# frequent classes that are never joined): of their cells in all, this share in runs and
# this share in 2x2 squares, each look with half of its own in the squares. Measured on
# the saga family's first boards and the look-alike screens: pairs of two colours at
# most 0.67 in squares (of ~400 pairs with some), crate blocks of two looks 0.8 or more.
BLOCK_SHARE = 0.8


def spanning_groups(where: dict[str, set[tuple[int, int]]]) -> list[set[str]]:
    """Groups of classes that are parts of one piece drawn over several cells (a rock over
    two, a crate over four, a shelf of jars): each class's cells are exactly another's
    moved one cell right or down, every time. A tile fills one cell, and two classes of
    tiles of n cells lie so by chance about once in C(cells, n) (n >= 2; a group needs
    SPAN_CELLS cells in all)."""
    names = [n for n in sorted(where) if len(where[n]) >= 2]
    parent = {n: n for n in names}

    def root(n: str) -> str:
        while parent[n] != n:
            n = parent[n]
        return n

    for a in names:
        for b in names:
            if a != b and len(where[a]) == len(where[b]):
                for dr, dc in ((0, 1), (1, 0)):
                    if {(r + dr, c + dc) for r, c in where[a]} == where[b]:
                        parent[root(b)] = root(a)
    groups: dict[str, set[str]] = {}
    for n in names:
        groups.setdefault(root(n), set()).add(n)
    return [g for g in groups.values() if len(g) > 1 and sum(len(where[n]) for n in g) >= SPAN_CELLS]


def in_blocks(cells: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """The cells of a set that lie in a 2x2 square of it."""
    out: set[tuple[int, int]] = set()
    for r, c in cells:
        square = {(r, c), (r, c + 1), (r + 1, c), (r + 1, c + 1)}
        if square <= cells:
            out |= square
    return out


# -- what a class looks like ------------------------------------------------------------------


def hue_resultant(hue_hist: np.ndarray) -> float:
    """Length of the mean unit vector of a hue histogram (1: one hue, 0: every hue alike)."""
    n = len(hue_hist)
    angles = np.arange(n) * (2 * np.pi / n)
    total = float(hue_hist.sum())
    if total <= 0:
        return 1.0
    return float(np.hypot((hue_hist * np.cos(angles)).sum(), (hue_hist * np.sin(angles)).sum()) / total)


_HUE_NAMES = ((15, "red"), (40, "orange"), (70, "yellow"), (160, "green"), (195, "cyan"), (255, "blue"),
              (290, "purple"), (335, "pink"), (360, "red"))  # fmt: skip


def colour_name(bgr: tuple[int, int, int]) -> str:
    """A plain name for a colour, for legends: "red", "white", "brown" ..."""
    px = np.array([[bgr]], np.uint8)
    h, s, v = (int(x) for x in cv2.cvtColor(px, cv2.COLOR_BGR2HSV_FULL)[0, 0])
    hue = h * 360 / 256
    if s < 50 or v < 40:
        return "black" if v < 60 else "grey" if v < 190 else "white"
    name = next(n for top, n in _HUE_NAMES if hue < top)
    if name in ("orange", "red") and v < 140 and s < 200:
        return "brown"
    if name == "red" and s < 140 and v > 180:
        return "pink"  # a light, soft red
    return name


def hex_colour(bgr: tuple[int, int, int]) -> str:
    b, g, r = bgr
    return f"#{r:02x}{g:02x}{b:02x}"


__all__ = [
    "BLOCKER_LABEL",
    "ClassInfo",
    "NO_TILE_ROLES",
    "ROLES",
    "Role",
    "RoleHints",
    "colour_name",
    "hex_colour",
    "hue_resultant",
    "in_blocks",
    "in_runs",
    "kind_for",
    "spanning_groups",
    "symmetric_share",
    "symmetry_chance",
]
