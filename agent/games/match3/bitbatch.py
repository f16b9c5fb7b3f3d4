"""Many boards settled at once: the bit planes of `bitrules`, one board after another in
a few very long Python integers, so each shift or mask works on every board together.

A decision weighs a thousand or more swap sequences; scoring them one by one costs about
10 us each in Python. Packed, a phase of matching, counting and falling costs a few dozen
operations on integers of ~100,000 bits whatever the number of boards, and only the
per-board counts go through numpy.

Each board takes `board_bits` bits: its columns as in `bitrules.layout` (a guard bit
above each), then at least one empty column, so runs and falls never cross from one
board into the next, rounded up to whole bytes so numpy can count each board's bits.

Groups are counted, not traced: in a phase, the groups are the runs joined where a row
run crosses a column run, so their number is runs - crossings, exact unless runs close a
loop (a ring of eight tiles of one type). A loop needs four crossings, so boards with as
many are flagged (`Settled.loops`) for the caller to settle one by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import cast

import numpy as np

from agent.games.match3.board import EMPTY, UNKNOWN

_POP8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _popcount(raw: np.ndarray) -> np.ndarray:
    return cast(np.ndarray, np.bitwise_count(raw) if hasattr(np, "bitwise_count") else _POP8[raw])  # numpy < 2


@dataclass(frozen=True, eq=False)
class PackLayout:
    rows: int
    cols: int
    stride: int  # bits per column, guard included
    board_bytes: int
    cell_bits: np.ndarray  # (rows * cols,) bit of cell r * cols + c within a board

    @property
    def board_bits(self) -> int:
        return 8 * self.board_bytes


@lru_cache(maxsize=64)
def pack_layout(rows: int, cols: int) -> PackLayout:
    s = rows + 1
    used = (cols + 1) * s  # one empty column after the board
    r, c = np.divmod(np.arange(rows * cols), cols)
    return PackLayout(rows, cols, s, (used + 7) // 8, (c * s + (rows - 1 - r)).astype(np.int64))


@dataclass(frozen=True)
class Settled:
    """Per board: what the whole settle did, and what its first phase cleared."""

    tiles: np.ndarray
    gained: np.ndarray  # steps gained by the step variant's rule
    points: np.ndarray
    first_tiles: np.ndarray  # tiles the first phase cleared (0: the last swap cleared nothing)
    must_missed: np.ndarray  # cells of the `must` mask the first phase left standing
    loops: np.ndarray  # boards where runs may have closed a loop: counts there may be off


def _code(v: int) -> int:
    """A cell's planes as bits: type (0-2), known (3), occupied (4)."""
    if v == EMPTY:
        return 0
    return 16 if v < 0 else 24 | (v & 7)


_CODES = np.array([_code(int(np.uint8(u).view(np.int8))) for u in range(256)], dtype=np.uint8)


@lru_cache(maxsize=8)
def _cells_mask(rows: int, cols: int, n: int) -> int:
    lay = pack_layout(rows, cols)
    one = 0
    for b in lay.cell_bits.tolist():
        one |= 1 << b
    return int.from_bytes(one.to_bytes(lay.board_bytes, "little") * n, "little")


class PackedBoards:
    """n boards of one size, from an (n, rows, cols) array of tile types (EMPTY, UNKNOWN, 0..7)."""

    def __init__(self, boards: np.ndarray) -> None:
        n, rows, cols = boards.shape
        self.n = n
        self.lay = lay = pack_layout(rows, cols)
        flat = boards.reshape(n, rows * cols)
        # One 5-bit code per cell (type bits, known, occupied), laid out once, then each
        # plane is one bit of it packed.
        code = _CODES[flat.astype(np.int8).view(np.uint8)]
        grid = np.zeros((n, lay.board_bits), dtype=np.uint8)
        grid[:, lay.cell_bits] = code
        self.planes = [self._pack_bits((grid >> b) & 1) for b in range(5)]
        self.cells = _cells_mask(rows, cols, n)
        assert UNKNOWN < 0  # unknown tiles fall but never match

    def _pack_bits(self, grid: np.ndarray) -> int:
        return int.from_bytes(np.packbits(grid, axis=1, bitorder="little").tobytes(), "little")

    def _pack(self, bits: np.ndarray) -> int:
        """One plane from (n, rows * cols) booleans."""
        grid = np.zeros((self.n, self.lay.board_bits), dtype=np.uint8)
        grid[:, self.lay.cell_bits] = bits
        return self._pack_bits(grid)

    def mask(self, cells: np.ndarray) -> int:
        """A packed mask from (n, rows * cols) booleans."""
        return self._pack(cells)

    def count(self, x: int) -> np.ndarray:
        """Set bits per board."""
        return cast(np.ndarray, self.count_many([x])[0])

    def count_many(self, xs: list[int]) -> np.ndarray:
        """Set bits per board of each mask: (len(xs), n)."""
        size = self.n * self.lay.board_bytes
        raw = np.frombuffer(b"".join(x.to_bytes(size, "little") for x in xs), dtype=np.uint8)
        counts = _popcount(raw).reshape(len(xs), self.n, self.lay.board_bytes).sum(axis=2, dtype=np.int64)
        return cast(np.ndarray, counts)

    def _same(self, shift: int) -> int:
        p0, p1, p2, known, _ = self.planes
        diff = (p0 ^ (p0 >> shift)) | (p1 ^ (p1 >> shift)) | (p2 ^ (p2 >> shift))
        return known & (known >> shift) & ~diff

    def _fall(self, boards: int) -> None:
        """On the boards in the `boards` mask, tiles above an empty cell drop one row until
        none is left above one (a board that cleared nothing keeps its holes, as in the rules)."""
        rows, cells = self.lay.rows, self.cells & boards
        while True:
            empty = cells & ~self.planes[4]
            above = empty
            for _ in range(rows - 1):  # smear each hole up its column (guard bits stop it)
                above |= (above << 1) & cells
            movers = above & self.planes[4]
            if not movers:
                return
            stay = ~movers
            self.planes = [(x & stay) | ((x & movers) >> 1) for x in self.planes]

    def settle(self, levels: tuple[int, ...] = (), must: int = 0, max_cascades: int = 100) -> Settled:
        """Clear, fall, repeat while any board matches (no refill), as `rules.resolve`
        with `rng=None` does for each board. `levels` per type; `must`: a packed mask of
        cells each board's first phase has to clear.

        Most boards are done after a phase or two, so once fewer than half of them still
        match, those are packed again on their own and the rest is left behind."""
        n, s = self.n, self.lay.stride
        tiles = np.zeros(n, dtype=np.int64)
        gained = np.zeros(n, dtype=np.int64)
        points = np.zeros(n, dtype=np.int64)
        first = np.zeros(n, dtype=np.int64)
        loops = np.zeros(n, dtype=bool)
        missed = self.count(must) if must else np.zeros(n, dtype=np.int64)
        leveled = [(k, lv) for k, lv in enumerate(levels) if lv]
        live = np.arange(n)  # which of the first boards the packed ones are now
        for depth in range(1, max_cascades + 1):
            ev, eh = self._same(1), self._same(s)
            v, h = ev & (ev >> 1), eh & (eh >> s)
            if not (v or h):
                break
            if depth > 1:
                going = self.count(v | h) > 0
                if going.sum() * 2 < self.n:
                    live = live[going]
                    self._keep(going)
                    ev, eh = self._same(1), self._same(s)
                    v, h = ev & (ev >> 1), eh & (eh >> s)
            vc = v | (v << 1) | (v << 2)
            hc = h | (h << s) | (h << 2 * s)
            matched = vc | hc
            # A run starts where the cell before it is not the same run; crossings join two.
            phase = [matched, vc & ~((vc & ev) << 1), hc & ~((hc & eh) << s), vc & hc]
            for kind, _ in leveled:
                km = self._kind(kind)
                phase += [m & km for m in phase[:4]]
            if depth == 1 and must:
                phase.append(must & ~matched)
            counts = self.count_many(phase)
            t, x = counts[0], counts[3]
            g = counts[1] + counts[2] - x
            tiles[live] += t
            gained[live] += t - 3 * g
            points[live] += (20 * t - 30 * g) * depth
            loops[live] |= x >= 4  # a loop of runs crosses at four corners at least
            for i, (_, level) in enumerate(leveled):
                tk, vk, hk, xk = counts[4 * i + 4 : 4 * i + 8]
                gained[live] += (3**level - 1) * (tk - 3 * (vk + hk - xk))
            if depth == 1:
                first = t.copy()
                if must:
                    missed = counts[-1]
            keep = ~matched
            self.planes = [x_ & keep for x_ in self.planes]
            cleared = t > 0
            # A board that cleared nothing keeps any hole of its own (only those that did fall).
            self._fall(self._boards(cleared) if not cleared.all() else -1)
        return Settled(tiles, gained, points, first, missed, loops)

    def _keep(self, which: np.ndarray) -> None:
        """Go on with the boards where `which` is true only."""
        size, bb = self.n * self.lay.board_bytes, self.lay.board_bytes
        self.planes = [
            int.from_bytes(np.frombuffer(x.to_bytes(size, "little"), dtype=np.uint8).reshape(self.n, bb)[which].tobytes(),
                           "little")
            for x in self.planes
        ]
        self.n = int(which.sum())
        self.cells = _cells_mask(self.lay.rows, self.lay.cols, self.n)

    def _boards(self, which: np.ndarray) -> int:
        """A mask of every bit of the boards where `which` is true."""
        raw = np.repeat(np.where(which, 255, 0).astype(np.uint8), self.lay.board_bytes)
        return int.from_bytes(raw.tobytes(), "little")

    def _kind(self, kind: int) -> int:
        p0, p1, p2, known, _ = self.planes
        m = known
        m &= p0 if kind & 1 else ~p0
        m &= p1 if kind & 2 else ~p1
        m &= p2 if kind & 4 else ~p2
        return m

    def has_match(self) -> np.ndarray:
        """Per board: does anything line up three?"""
        s = self.lay.stride
        ev, eh = self._same(1), self._same(s)
        return self.count((ev & (ev >> 1)) | (eh & (eh >> s))) > 0
