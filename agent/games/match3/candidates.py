"""Swap sequences the plan solver weighs, scored on bit planes (`bitrules`).

Three kinds besides the library's plans, each a gap of the seed's method that the
exhaustive two-swap benchmark exposed:
- single swaps whose group is none of the seed's seven shapes (a plus, an L of six);
- set-ups: a swap of other tiles first, so that the tiles falling after a clearing swap
  line up again (the cascade the seed's plans cannot see);
- other paths: the library keeps one path per plan; another (round the other corner, the
  swaps in the other order) leaves the other tiles elsewhere, which can set up a cascade
  or avoid a clear too early.

Scores here are the rules engine's (the bit planes are proven equal to it); the solver
still replays its choice with `rules.apply_move` before it is played.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Literal, NamedTuple, Sequence

import numpy as np

from agent.games.match3 import bitrules as br
from agent.games.match3.bitbatch import PackedBoards
from agent.games.match3.board import EMPTY, Board, Move
from agent.games.match3.rules import Match3Config

Key = tuple[int, int, int, int, tuple[Move, ...]]  # Outcome.key: sorts best first


@dataclass(frozen=True)
class Scored:
    moves: tuple[Move, ...]
    key: Key
    score: int
    prediction: br.Prediction


def score_of(config: Match3Config, objective: str, moves: int, pred: br.Prediction) -> int:
    if objective == "seed":
        return pred.tiles_cleared - 3 - moves
    if objective == "gain":
        if config.variant != "step":
            return 0
        return pred.steps_gained - moves
    return pred.points


@dataclass
class Evaluator:
    """One board's swap sequences, scored with the bit-plane rules; boards after each
    prefix of swaps are shared between sequences."""

    config: Match3Config
    objective: str
    board: Board
    lay: br.Layout = field(init=False)
    base: br.Planes = field(init=False)
    levels: tuple[int, ...] = field(init=False)  # per type 0..7
    kinds: list[int] = field(init=False)  # per bit: the tile type (EMPTY, UNKNOWN) as on the board
    cells: int = field(init=False)  # every cell of the board, as a mask
    n_kinds: int = field(init=False)  # types 0..n_kinds-1 cover every tile on the board
    _prefix: dict[tuple[Move, ...], br.Planes | None] = field(default_factory=dict, init=False)
    _bits: dict[Move, tuple[int, int] | None] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.lay = br.layout(self.board.rows, self.board.cols)
        self.base = br.encode(self.board)
        self.levels = tuple(self.config.level(k) for k in range(8))
        kinds = [EMPTY] * (self.lay.stride * self.lay.cols)
        for r, row in enumerate(self.board.cells.tolist()):
            for c, v in enumerate(row):
                kinds[self.lay.bit(r, c)] = v
        self.kinds = kinds
        self.cells = sum(self.lay.column_masks)
        self.n_kinds = max((k for k in self.kinds if k >= 0), default=-1) + 1

    def bits(self, move: Move) -> tuple[int, int] | None:
        """The move's two bits, or None when a cell is off the board."""
        if move not in self._bits:
            (r1, c1), (r2, c2) = move.cells()
            ok = self.board.inside(r1, c1) and self.board.inside(r2, c2)
            self._bits[move] = (self.lay.bit(r1, c1), self.lay.bit(r2, c2)) if ok else None
        return self._bits[move]

    def swap(self, planes: br.Planes, move: Move) -> br.Planes | None:
        """The planes after a legal swap of two different tiles, else None."""
        ij = self.bits(move)
        if ij is None:
            return None
        i, j = ij
        known = planes[3]
        if not (known >> i & 1 and known >> j & 1):
            return None
        if br.kind_at(planes, i) == br.kind_at(planes, j):
            return None
        return br.swap(planes, i, j)

    def before_last(self, moves: Sequence[Move], canonical: tuple[Move, ...]) -> br.Planes | None:
        """The planes before the last swap, when every earlier swap is legal and clears nothing."""
        planes = self.base
        for n in range(1, len(moves)):
            key = canonical[:n]
            nxt: br.Planes | None | Literal[False] = self._prefix.get(key, False)
            if nxt is False:
                nxt = self.swap(planes, moves[n - 1])
                if nxt is not None and br.has_match(nxt, self.lay.stride):
                    nxt = None
                self._prefix[key] = nxt
            if nxt is None:
                return None
            planes = nxt
        return planes

    def score(self, moves: Sequence[Move], must_clear: int = 0) -> Scored | None:
        """The sequence's verified outcome, or None if it breaks a rule (see `replay`)."""
        moves = tuple(moves)
        canonical = tuple(m.canonical() for m in moves)
        before = self.before_last(moves, canonical)
        if before is None:
            return None
        after = self.swap(before, moves[-1])
        if after is None or not br.has_match(after, self.lay.stride):
            return None
        pred = br.settle(after, self.lay, self.levels, self.config.max_cascades)
        if must_clear & ~pred.first_cleared:
            return None
        s = score_of(self.config, self.objective, len(moves), pred)
        return Scored(moves, (-s, -pred.tiles_cleared, -pred.points, len(moves), canonical), s, pred)

    def landing(self, cleared: int, occupied: int | None = None) -> list[int]:
        """Per bit: where its tile lands when the `cleared` cells empty and tiles fall (the
        empty cells of `occupied`, by default the board's, fill too)."""
        lay = self.lay
        holes = cleared | (self.cells & ~(self.base[4] if occupied is None else occupied))
        out = list(range(lay.stride * lay.cols))
        for c, cm in enumerate(lay.column_masks):
            col = (holes & cm) >> (c * lay.stride)
            if not col:
                continue
            base, below = c * lay.stride, 0
            for h in range(lay.rows):
                if col >> h & 1:
                    below += 1
                else:
                    out[base + h] = base + h - below
        return out

    def mask(self, cells: Iterable[tuple[int, int]]) -> int:
        m = 0
        for r, c in cells:
            m |= 1 << self.lay.bit(r, c)
        return m


class Swap(NamedTuple):
    """One legal swap of two different tiles, written from its top/left cell (a named
    tuple: a board has a hundred of them, made on every decision)."""

    row: int
    col: int
    direction: str  # D or R
    code: int  # orders like the canonical Move: (row, col, D before R)
    a: int  # flat cell indexes (row * cols + col)
    b: int
    i: int  # bits (bitrules layout)
    j: int
    ka: int  # the tile types at a and b
    kb: int

    @property
    def move(self) -> Move:
        return Move(self.row, self.col, self.direction)


def swap_code(move: Move, cols: int) -> int:
    m = move.canonical()
    return (m.row * cols + m.col) * 2 + (m.direction == "R")


@dataclass(frozen=True)
class SwapScan:
    """Every legal swap of two different tiles on the board, split by whether it clears."""

    clearing: tuple[Swap, ...]
    quiet: tuple[Swap, ...]
    rows: tuple[tuple[int, int, int, int, int], ...]  # quiet as (index, bit, bit, type, type), for tight loops


def scan_swaps(ev: Evaluator) -> SwapScan:
    clearing: list[Swap] = []
    quiet: list[Swap] = []
    rows, cols = ev.board.rows, ev.board.cols
    lay, kinds, base = ev.lay, ev.kinds, ev.base
    # Where each type would complete a run: a swap can clear only if one of its tiles
    # lands on such a cell (neighbours counted before the swap, so this only over-reports).
    wanted = [br.completions(cells, lay.stride) for cells in br.kind_masks(base, ev.n_kinds)]
    for r in range(rows):
        for c in range(cols):
            i, a = lay.bit(r, c), r * cols + c
            for d, j, b, ok in (("D", i - 1, a + cols, r + 1 < rows), ("R", i + lay.stride, a + 1, c + 1 < cols)):
                if not ok:
                    continue
                ki, kj = kinds[i], kinds[j]
                if ki < 0 or kj < 0 or ki == kj:
                    continue  # not two tiles, or a swap that changes nothing
                sw = Swap(r, c, d, 2 * a + (d == "R"), a, b, i, j, ki, kj)
                maybe = wanted[kj] >> i & 1 or wanted[ki] >> j & 1
                (clearing if maybe and br.has_match(br.swap(base, i, j), lay.stride) else quiet).append(sw)
    quiet_rows = tuple((n, q.i, q.j, q.ka, q.kb) for n, q in enumerate(quiet))
    return SwapScan(tuple(clearing), tuple(quiet), quiet_rows)


def setups(ev: Evaluator, scan: SwapScan, finisher: Swap, pred: br.Prediction) -> list[int]:
    """Quiet first swaps (indexes into `scan.quiet`) that change what `finisher`, a
    clearing swap whose outcome alone is `pred`, does: candidates to play before it.

    Exact, phase by phase: the first swap's two tiles ride along with the others (they
    fall where their cells' tiles would have fallen), and the outcome stays the same
    unless, in some phase, one of them stands in a group that clears or completes a run
    of three for the other's type. A first swap on the finisher's own cells changes the
    tile it moves away, and is always kept."""
    lay = ev.lay
    # A first swap on the finisher's own cells: kept from the first phase on.
    mine = (1 << finisher.i) | (1 << finisher.j)
    out: list[int] = []
    left: Sequence[tuple[int, int, int, int, int]] = scan.rows
    kinds = ev.n_kinds
    stride, cells, base = lay.stride, ev.cells, ev.base
    fallen = 0  # cells tiles have fallen through so far (a superset, in the current rows)
    # Every phase's start, then the end (where the two tiles may complete a new run).
    for start, cleared in pred.trace + ((pred.planes, 0),):
        # The first swap alone lines nothing up, so a new run must take in a cell that
        # differs from the board as it was (or that tiles fell through): one within two
        # cells in line. Far from those, a near-run is no news.
        near = fallen
        for x, y in zip(start, base):
            near |= x ^ y
        near |= (near << 1) | (near >> 1) | (near << stride) | (near >> stride)
        near |= (near << 1) | (near >> 1) | (near << stride) | (near >> stride)
        # Where a type could complete a run, or anything clears: a tile of that type there changes things.
        always = cleared | mine
        sensitive = [(br.completions(k, stride) & near | always) if k else always
                     for k in br.kind_masks(start, kinds)]
        mine = 0
        if not cleared:
            return out + [n for n, i, j, ki, kj in left if sensitive[kj] >> i & 1 or sensitive[ki] >> j & 1]
        landing = ev.landing(cleared, start[4])
        up = cleared  # from each cleared cell up its column: where tiles fall
        for _ in range(lay.rows - 1):
            up |= (up << 1) & cells
        fallen |= up
        still: list[tuple[int, int, int, int, int]] = []
        for n, i, j, ki, kj in left:
            if sensitive[kj] >> i & 1 or sensitive[ki] >> j & 1:
                out.append(n)
            else:
                still.append((n, landing[i], landing[j], ki, kj))
        left = still
        if not left:
            break
    return out


@dataclass(frozen=True)
class BatchScores:
    """Per sequence (in the order given): valid under the rules, and its outcome."""

    valid: np.ndarray
    score: np.ndarray
    tiles: np.ndarray
    points: np.ndarray


def score_batch(
    config: Match3Config, objective: str, board: Board, firsts: np.ndarray, lasts: np.ndarray,
    must: np.ndarray | None = None, quiet_first: np.ndarray | None = None,
) -> BatchScores:
    """Score sequences of one or two swaps all at once on packed bit planes, with the
    checks of `replay`: every swap legal and of two different tiles, the first clears
    nothing, the last clears something (and every `must` cell).

    `firsts`, `lasts`: (n, 2) flat cell indexes of each sequence's swaps (a first swap of
    -1, -1: none; any -1 in a last swap: off the board). `must`: (n, cells) booleans.
    `quiet_first`: sequences whose first swap is known to clear nothing (not checked again)."""
    n = len(lasts)
    rows, cols = board.rows, board.cols
    flat = board.cells.reshape(-1).astype(np.int8)
    boards = np.broadcast_to(flat, (n, flat.size)).copy()
    valid = np.ones(n, dtype=bool)

    def play(which: np.ndarray, ab: np.ndarray) -> None:
        inside = (ab >= 0).all(axis=1)
        valid[which[~inside]] = False
        which, a, b = which[inside], ab[inside, 0], ab[inside, 1]
        ta, tb = boards[which, a], boards[which, b]
        valid[which[(ta < 0) | (tb < 0) | (ta == tb)]] = False
        boards[which, a], boards[which, b] = tb, ta

    two = firsts[:, 0] >= 0
    if two.any():
        play(np.nonzero(two)[0], firsts[two])
        check = two if quiet_first is None else two & ~quiet_first
        if check.any():
            which = np.nonzero(check)[0]
            early = PackedBoards(boards[which].reshape(-1, rows, cols)).has_match()
            valid[which[early]] = False
    play(np.arange(n), lasts)
    packed = PackedBoards(boards.reshape(n, rows, cols))
    must_mask = packed.mask(must) if must is not None and must.any() else 0
    levels = tuple(config.level(k) for k in range(8))
    out = packed.settle(levels, must_mask, config.max_cascades)
    tiles, gained, points = out.tiles, out.gained, out.points
    lay = br.layout(rows, cols)
    for i in np.nonzero(out.loops)[0].tolist():  # rare: settle these one by one, exactly
        exact = br.settle(br.encode(Board(boards[i].reshape(rows, cols))), lay, levels, config.max_cascades)
        tiles[i], gained[i], points[i] = exact.tiles_cleared, exact.steps_gained, exact.points
    valid &= (out.first_tiles > 0) & (out.must_missed == 0)
    steps = two.astype(np.int64) + 1
    if objective == "seed":
        score = tiles - 3 - steps
    elif objective == "gain":
        score = gained - steps if config.variant == "step" else np.zeros(n, dtype=np.int64)
    else:
        score = points
    return BatchScores(valid, score, tiles, points)


def other_paths(moves: tuple[Move, ...], holds: Callable[[tuple[int, int]], bool]) -> list[tuple[Move, Move]]:
    """The other two-swap paths to what a two-swap plan does to its tile type (`holds`
    tells which cells hold that type): the library keeps one path per plan, but each path
    leaves the other tiles elsewhere, so another may set up a cascade or avoid an early
    clear.

    A plan that moves one tile two cells diagonally can go by either corner (walking the
    tile, or, where the corner holds the type too, pushing that one on first); a plan that
    moves two tiles one cell each can move them in either order, or pair them otherwise."""
    if len(moves) != 2:
        return []
    cells = {c for m in moves for c in m.cells()}
    before = {c: holds(c) for c in cells}
    after = dict(before)
    for m in moves:
        a, b = m.cells()
        after[a], after[b] = after[b], after[a]
    src = [c for c in cells if before[c] and not after[c]]
    dst = [c for c in cells if after[c] and not before[c]]
    out: list[tuple[Move, Move]] = []
    if len(src) == 1:
        (s,), (d,) = src, dst
        if abs(s[0] - d[0]) == 1 and abs(s[1] - d[1]) == 1:
            for x in ((s[0], d[1]), (d[0], s[1])):
                if holds(x):
                    out.append((_between(x, d), _between(s, x)))  # push the corner's tile on, then follow
                else:
                    out.append((_between(s, x), _between(x, d)))  # walk round the corner
    elif len(src) == 2:
        for d1, d2 in ((dst[0], dst[1]), (dst[1], dst[0])):
            if _adjacent(src[0], d1) and _adjacent(src[1], d2):
                one, two = _between(src[0], d1), _between(src[1], d2)
                out += [(one, two), (two, one)]
    mine = tuple(m.canonical() for m in moves)
    return [p for p in out if tuple(m.canonical() for m in p) != mine]


def _adjacent(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1


def _between(src: tuple[int, int], dst: tuple[int, int]) -> Move:
    dr, dc = dst[0] - src[0], dst[1] - src[1]
    return Move(src[0], src[1], {(-1, 0): "U", (1, 0): "D", (0, -1): "L", (0, 1): "R"}[(dr, dc)])
