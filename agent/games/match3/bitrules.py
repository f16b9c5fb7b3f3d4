"""The rules engine's prediction (match, clear, fall, repeat; no refill) on bit planes.

Solvers weigh hundreds of swap sequences per decision; `rules.apply_move` builds a
`Board` and arrays for every phase (it feeds the simulated phone's animations), some 70 us
a move. This module keeps a board as five Python integers and plays the same rules with
shifts and masks, about ten times faster. It predicts only the totals and the final
board; tests prove it equal to `rules.apply_move(..., rng=None)` on random boards
(hypothesis), and the plan solver still replays its choice with the rules engine.

Layout: cell (r, c) is bit `c * S + (rows - 1 - r)` with `S = rows + 1`, so a column is
S bits from its bottom row up, and one always-zero guard bit above each column keeps runs
and falls from crossing into the next column. Planes: the tile type's three bits, `known`
(a tile of a known type: can match) and `occ` (anything that falls: tiles and unknowns).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from agent.games.match3.board import EMPTY, UNKNOWN, Board

Planes = tuple[int, int, int, int, int]  # type bit 0, type bit 1, type bit 2, known, occ


@dataclass(frozen=True)
class Layout:
    rows: int
    cols: int
    stride: int
    column_masks: tuple[int, ...]  # every cell of column c

    def bit(self, r: int, c: int) -> int:
        return c * self.stride + (self.rows - 1 - r)

    def cell(self, bit: int) -> tuple[int, int]:
        c, h = divmod(bit, self.stride)
        return self.rows - 1 - h, c


@lru_cache(maxsize=64)
def layout(rows: int, cols: int) -> Layout:
    s = rows + 1
    full = (1 << rows) - 1
    return Layout(rows, cols, s, tuple(full << (c * s) for c in range(cols)))


def encode(board: Board) -> Planes:
    lay = layout(board.rows, board.cols)
    p0 = p1 = p2 = known = occ = 0
    for r, row in enumerate(board.cells.tolist()):
        for c, v in enumerate(row):
            if v == EMPTY:
                continue
            b = 1 << lay.bit(r, c)
            occ |= b
            if v == UNKNOWN:
                continue
            known |= b
            if v & 1:
                p0 |= b
            if v & 2:
                p1 |= b
            if v & 4:
                p2 |= b
    return p0, p1, p2, known, occ


def decode(planes: Planes, rows: int, cols: int) -> Board:
    import numpy as np

    lay = layout(rows, cols)
    p0, p1, p2, known, occ = planes
    a = np.full((rows, cols), EMPTY, dtype=np.int8)
    for r in range(rows):
        for c in range(cols):
            i = lay.bit(r, c)
            if occ >> i & 1:
                a[r, c] = ((p0 >> i & 1) | (p1 >> i & 1) << 1 | (p2 >> i & 1) << 2) if known >> i & 1 else UNKNOWN
    return Board(a)


def kind_at(planes: Planes, bit: int) -> int:
    """The tile type at a bit, EMPTY or UNKNOWN."""
    p0, p1, p2, known, occ = planes
    if not occ >> bit & 1:
        return EMPTY
    if not known >> bit & 1:
        return UNKNOWN
    return (p0 >> bit & 1) | (p1 >> bit & 1) << 1 | (p2 >> bit & 1) << 2


def swap(planes: Planes, i: int, j: int) -> Planes:
    """Exchange the contents of bits i and j on every plane."""
    out = []
    for x in planes:
        d = ((x >> i) ^ (x >> j)) & 1
        out.append(x ^ ((d << i) | (d << j)))
    return out[0], out[1], out[2], out[3], out[4]


def _same(planes: Planes, shift: int) -> int:
    """Bit p: cell p and cell p + shift hold the same known type."""
    p0, p1, p2, known, _ = planes
    diff = (p0 ^ (p0 >> shift)) | (p1 ^ (p1 >> shift)) | (p2 ^ (p2 >> shift))
    return known & (known >> shift) & ~diff


def matched(planes: Planes, stride: int) -> tuple[int, int, int, int, int]:
    """(vertical run cells, horizontal run cells, all matched cells, vertical links, horizontal links).
    A link at bit p joins p to the cell above (vertical) or to the right (horizontal)."""
    ev = _same(planes, 1)
    v = ev & (ev >> 1)
    vc = v | (v << 1) | (v << 2)
    eh = _same(planes, stride)
    h = eh & (eh >> stride)
    hc = h | (h << stride) | (h << 2 * stride)
    return vc, hc, vc | hc, ev & vc & (vc >> 1), eh & hc & (hc >> stride)


def has_match(planes: Planes, stride: int) -> bool:
    ev = _same(planes, 1)
    if ev & (ev >> 1):
        return True
    eh = _same(planes, stride)
    return bool(eh & (eh >> stride))


def groups(planes: Planes, stride: int) -> list[int]:
    """The matched cells split into groups (runs that share a cell), each a bit mask."""
    _, _, m, lv, lh = matched(planes, stride)
    out = []
    while m:
        g = m & -m
        while True:
            n = g | ((g & lv) << 1) | ((g >> 1) & lv) | ((g & lh) << stride) | ((g >> stride) & lh)
            if n == g:
                break
            g = n
        out.append(g)
        m &= ~g
    return out


def fall(planes: Planes, lay: Layout) -> Planes:
    """Every tile drops into the empty cells below it, column by column."""
    occ = planes[4]
    xs = list(planes)
    for c, cm in enumerate(lay.column_masks):
        col = (occ & cm) >> (c * lay.stride)
        if col & (col + 1) == 0:
            continue  # occupied cells already sit contiguously at the bottom
        # The holes below the column's top tile, highest first so lower indexes stay put.
        holes = ~col & ((1 << col.bit_length()) - 1)
        while holes:
            top = holes.bit_length() - 1
            holes ^= 1 << top
            i = c * lay.stride + top
            above = cm & ~((2 << i) - 1)
            keep = ~(above | (1 << i))
            for k, x in enumerate(xs):
                xs[k] = (x & keep) | ((x & above) >> 1)
    return xs[0], xs[1], xs[2], xs[3], xs[4]


@dataclass(frozen=True)
class Prediction:
    tiles_cleared: int
    steps_gained: int  # before any variant rule: the caller zeroes it for classic
    points: int
    first_cleared: int  # the cells the first phase cleared (mask)
    phases: int
    planes: Planes  # after the last fall
    trace: tuple[tuple[Planes, int], ...]  # per phase: the planes it starts from, the cells it clears


def settle(planes: Planes, lay: Layout, levels: tuple[int, ...], max_cascades: int = 100) -> Prediction:
    """Clear, fall, repeat while anything matches, with no refill: what `rules.resolve`
    does with `rng=None`, in totals. `levels` are per type (missing: level 0)."""
    s = lay.stride
    tiles = gained = points = 0
    first = 0
    depth = 0
    trace = []
    for depth in range(1, max_cascades + 1):
        gs = groups(planes, s)
        if not gs:
            depth -= 1
            break
        cleared = 0
        for g in gs:
            n = g.bit_count()
            cleared |= g
            tiles += n
            points += (10 * n + 10 * max(0, n - 3)) * depth
            if n > 3:
                kind = kind_at(planes, g.bit_length() - 1)
                gained += (n - 3) * 3 ** (levels[kind] if kind < len(levels) else 0)
        if depth == 1:
            first = cleared
        trace.append((planes, cleared))
        keep = ~cleared
        planes = fall(tuple(x & keep for x in planes), lay)  # type: ignore[arg-type]
    return Prediction(tiles, gained, points, first, depth, planes, tuple(trace))


def kind_masks(planes: Planes, kinds: int) -> list[int]:
    """Per tile type 0..kinds-1, the cells that hold it."""
    p0, p1, p2, known, _ = planes
    out = []
    for k in range(kinds):
        m = known
        m &= p0 if k & 1 else ~p0
        m &= p1 if k & 2 else ~p1
        m &= p2 if k & 4 else ~p2
        out.append(m)
    return out


def completions(k: int, stride: int) -> int:
    """The cells where a tile of the type whose cells are `k` would stand in a run of
    three or more: two of its cells in line on either side, or one on each side (guard
    bits keep columns apart; bits past the board's edge are never set)."""
    s2 = 2 * stride
    return (((k >> 1) & (k >> 2)) | ((k << 1) & (k >> 1)) | ((k << 1) & (k << 2))
            | ((k >> stride) & (k >> s2)) | ((k << stride) & (k >> stride)) | ((k << stride) & (k << s2)))
