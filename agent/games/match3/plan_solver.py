"""The plan solver: match the plan library on a board, verify each candidate on the whole
board with the rules engine, and pick the best by the verified outcome.

Matching is a table lookup. A plan applies where, for one tile type, the window's
indicator (1 where the cell holds that type) equals the plan's target exactly, so every
target becomes one number (its bits and its window size) in a sorted array, and every
window of every size and type on the board is looked up in it at once with numpy.

Verification plays the swaps on the whole board: each swap must be legal, no swap before
the last may clear anything anywhere (other types included), and the last must clear the
plan's elimination. The outcome counted is the last swap's clears and the cascades that
follow before any new tile drops in.

Plans are not the only candidates: every single clearing swap, the set-ups of a cascade
(a swap of other tiles before a clearing swap) and a plan's other paths are weighed too
(`candidates`), since the exhaustive benchmark showed them to be what plans miss. Some
700 sequences a board are scored at once on packed bit planes (`bitbatch`, proven equal
to the rules engine by tests); the choice is then replayed with the rules engine itself,
which is what the play loop checks on screen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Literal, Sequence, cast

import numpy as np

from agent.games.match3.board import MAX_TYPES, Board, Move
from agent.games.match3 import bitrules as br
from agent.games.match3.candidates import (
    Evaluator, Key, Swap, SwapScan, other_paths, scan_swaps, score_batch, setups, swap_code,
)
from agent.games.match3.plan_library import Plan, PlanLibrary, PlanLibraryError, load_library
from agent.games.match3.rules import GameState, Match3Config, apply_move, find_groups, has_match, is_legal_swap
from agent.games.match3.solver import Choice, GreedySolver

OBJECTIVES: dict[str, str] = {
    "seed": "tiles cleared - 3 - swaps (the seed's example)",
    "gain": "steps gained - swaps: (n - 3) * 3^level per group, the step game's currency",
    "points": "the game's points; in the classic variant only 1-swap plans are legal",
}


def default_objective(config: Match3Config) -> str:
    return "gain" if config.variant == "step" else "points"


# -- matching -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Matches:
    """Every placement of a plan on a board: parallel arrays, one entry per placement."""

    plan: np.ndarray  # index in the library
    kind: np.ndarray  # the tile type the plan's 1s stand for
    row: np.ndarray  # the window's top-left corner on the board
    col: np.ndarray

    def __len__(self) -> int:
        return int(self.plan.size)


class BoardCodes:
    """Every window of every tile type on one board as a target code (see `stacked`)."""

    def __init__(self, board: Board) -> None:
        cells = board.cells
        self.rows, self.cols = cells.shape
        self.kinds = np.unique(cells[cells >= 0]).astype(np.int64)
        # onehot[k, r, c]: cell (r, c) holds kinds[k]
        self._onehot = (cells[None, :, :] == self.kinds[:, None, None]).astype(np.int64)

    def stacked(self, hmax: int, wmax: int) -> np.ndarray:
        """codes[h - 1, w - 1, k, i, j] for every size up to hmax x wmax at once, a few
        numpy operations on one array instead of a few per size (windows that would run
        off the board hold 0)."""
        oh = self._onehot
        n_k, rows, cols = oh.shape
        lines = np.zeros((wmax, n_k, rows, cols), dtype=np.int64)
        lines[0] = oh
        for w in range(1, wmax):
            lines[w, :, :, : cols - w] = (lines[w - 1, :, :, : cols - w] << 1) | oh[:, :, w:]
        out = np.zeros((hmax, wmax, n_k, rows, cols), dtype=np.int64)
        out[0] = lines
        widths = np.arange(1, wmax + 1, dtype=np.int64)[:, None, None, None]
        for h in range(1, hmax):
            out[h, :, :, : rows - h] = (out[h - 1, :, :, : rows - h] << widths) | lines[:, :, h:]
        return out


@dataclass(frozen=True)
class _Layout:
    """For one board shape and number of tile types: every window of every size the
    library uses, flattened in the order `PlanIndex.matches` concatenates them."""

    sizes: tuple[tuple[int, int], ...]
    tags: np.ndarray  # each entry's size id
    kind: np.ndarray  # each entry's position in BoardCodes.kinds
    row: np.ndarray
    col: np.ndarray
    span: tuple[int, int]  # the largest height and width among `sizes`
    gather: np.ndarray  # each entry's place in BoardCodes.stacked(*span), flattened


_SIZE_BITS = 6  # a lookup key is (target code << 6) | size id


@dataclass
class PlanIndex:
    """One sorted array of lookup keys (target code and window size) for the whole
    library, so a board's windows of every size are looked up in one search."""

    keys: np.ndarray  # sorted
    ids: np.ndarray  # plan index of each key
    sizes: tuple[tuple[int, int], ...]  # size id -> (height, width)
    counts: np.ndarray  # per plan: tiles eliminated
    targets: np.ndarray  # per plan: its lookup key (target and window size), to order plans by content
    unique: tuple[np.ndarray, np.ndarray, np.ndarray]  # the distinct keys, where each starts in `keys`, how many
    steps: np.ndarray  # per plan: swaps
    _layouts: dict[tuple[int, int, int], _Layout] = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, library: PlanLibrary) -> "PlanIndex":
        # Comprehensions over the raw records: this runs on every `agent play` start.
        records = library.records
        n = len(records)
        targets = [r[1] for r in records]
        heights = np.fromiter((t.count("/") + 1 for t in targets), dtype=np.int64, count=n)
        widths = (np.fromiter(map(len, targets), dtype=np.int64, count=n) + 1) // heights - 1
        codes = np.fromiter((int(t.replace("/", ""), 2) for t in targets), dtype=np.int64, count=n)
        counts = np.fromiter((r[0] for r in records), dtype=np.int64, count=n)
        steps = np.fromiter((r[3].count(";") + 1 for r in records), dtype=np.int64, count=n)
        too_big = np.nonzero(heights * widths > 63 - _SIZE_BITS)[0]
        if too_big.size:
            i = int(too_big[0])
            raise PlanLibraryError(f"plan {i} has a {heights[i]}x{widths[i]} window; up to 57 cells are supported")
        shapes, tags = np.unique(heights * 64 + widths, return_inverse=True)
        if shapes.size > 1 << _SIZE_BITS:
            raise PlanLibraryError(f"the library uses {shapes.size} window sizes; at most {1 << _SIZE_BITS} are supported")
        keys = (codes << _SIZE_BITS) | tags.astype(np.int64)
        order = np.argsort(keys, kind="stable")
        sizes = tuple((int(v) // 64, int(v) % 64) for v in shapes)
        sorted_keys = keys[order]
        unique = np.unique(sorted_keys, return_index=True, return_counts=True)
        return cls(sorted_keys, order.astype(np.int64), sizes, counts, keys, unique, steps)

    def _layout(self, rows: int, cols: int, n_kinds: int) -> _Layout:
        key = (rows, cols, n_kinds)
        if key not in self._layouts:
            sizes, tags, kinds, rr, cc, hh, ww = [], [], [], [], [], [], []
            for sid, (h, w) in enumerate(self.sizes):
                if h > rows or w > cols:
                    continue
                k, i, j = np.indices((n_kinds, rows - h + 1, cols - w + 1)).reshape(3, -1)
                sizes.append((h, w))
                tags.append(np.full(k.size, sid, dtype=np.int64))
                kinds.append(k)
                rr.append(i)
                cc.append(j)
                hh.append(np.full(k.size, h, dtype=np.int64))
                ww.append(np.full(k.size, w, dtype=np.int64))
            def cat(parts: list[np.ndarray]) -> np.ndarray:
                return cast(np.ndarray, np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64))

            span = (max((h for h, _ in sizes), default=1), max((w for _, w in sizes), default=1))
            k, i, j, hs, ws = cat(kinds), cat(rr), cat(cc), cat(hh), cat(ww)
            gather = ((((hs - 1) * span[1] + (ws - 1)) * n_kinds + k) * rows + i) * cols + j
            self._layouts[key] = _Layout(tuple(sizes), cat(tags), k, i, j, span, gather)
        return self._layouts[key]

    def matches(self, board: Board) -> Matches:
        """Every placement of every plan on the board, in no particular order."""
        bc = BoardCodes(board)
        layout = self._layout(bc.rows, bc.cols, int(bc.kinds.size))
        if bc.kinds.size == 0 or not layout.sizes:
            empty = np.zeros(0, dtype=np.int64)
            return Matches(empty, empty, empty, empty)
        codes = bc.stacked(*layout.span).ravel()[layout.gather]
        keys = (codes << _SIZE_BITS) | layout.tags
        uniq, starts, counts = self.unique
        at_key = np.minimum(np.searchsorted(uniq, keys), uniq.size - 1)
        hit = np.nonzero(uniq[at_key] == keys)[0]
        many = counts[at_key[hit]]  # plans sharing one target (different finals)
        first = np.repeat(starts[at_key[hit]], many)
        within = np.arange(first.size) - np.repeat(np.cumsum(many) - many, many)
        at = np.repeat(hit, many)
        return Matches(self.ids[first + within], bc.kinds[layout.kind[at]], layout.row[at], layout.col[at])


# -- verification ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What a swap sequence verifiably does on the whole board."""

    moves: tuple[Move, ...]
    boards: tuple[Board, ...]  # the board after each swap but the last
    tiles_cleared: int
    steps_gained: int
    steps_spent: int
    points: int
    predicted: Board  # after the last swap's clears and cascades (EMPTY where tiles will drop)

    def score(self, objective: str) -> int:
        if objective == "seed":
            return self.tiles_cleared - 3 - len(self.moves)
        if objective == "gain":
            return self.steps_gained - self.steps_spent
        return self.points

    def key(self, objective: str) -> Key:
        """Sorts best first; ties go to more tiles, more points, fewer swaps, then the
        swaps in reading order, so the choice never depends on the order plans matched."""
        return (-self.score(objective), -self.tiles_cleared, -self.points, len(self.moves),
                tuple(m.canonical() for m in self.moves))


def replay(
    config: Match3Config, board: Board, moves: Sequence[Move], must_clear: Iterable[tuple[int, int]] = (),
    prefix_cache: dict[tuple[Move, ...], Board | None] | None = None,
) -> Outcome | None:
    """Play `moves` on `board` with the rules engine, or None if any swap is illegal, a
    swap before the last clears anything, or the last clears nothing (or not all of
    `must_clear`)."""
    current = board
    boards: list[Board] = []
    canonical = tuple(m.canonical() for m in moves)
    for n, move in enumerate(moves[:-1], 1):
        key = canonical[:n]
        nxt: Board | None | Literal[False] = prefix_cache.get(key, False) if prefix_cache is not None else False
        if nxt is False:
            nxt = None
            if is_legal_swap(current, move) and current[move.cells()[0]] != current[move.other]:
                swapped = current.swapped(move)
                nxt = None if has_match(swapped) else swapped
            if prefix_cache is not None:
                prefix_cache[key] = nxt
        if nxt is None:
            return None
        boards.append(nxt)
        current = nxt
    last = moves[-1]
    if not is_legal_swap(current, last) or current[last.cells()[0]] == current[last.other]:
        return None
    out = apply_move(config, GameState(board=current, steps_left=1), last, rng=None)
    if not out.phases:
        return None  # classic: a swap that matches nothing is undone
    cleared = {cell for g in out.phases[0].groups for cell in g.cells}
    if not cleared.issuperset(must_clear):
        return None
    spent = len(moves) if config.variant == "step" else 0
    return Outcome(
        tuple(moves), tuple(boards), out.tiles_cleared, out.steps_gained, spent, out.points,
        out.phases[-1].refilled,
    )


# -- choosing -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanChoice:
    """A verified plan placed on the board."""

    outcome: Outcome
    objective: str
    plan: Plan | None  # None for a sequence that is not one of the library's plans
    plan_index: int
    kind: int
    row: int
    col: int
    origin: str = "plan"  # see ORIGINS

    @property
    def moves(self) -> tuple[Move, ...]:
        return self.outcome.moves

    @property
    def score(self) -> int:
        return self.outcome.score(self.objective)

    def choice(self) -> Choice:
        """The plan as the play loop takes it: its first swap, with the rest chained in
        `then`, each swap carrying the board it must leave (checked on screen)."""
        o = self.outcome
        objective = (self.score, o.tiles_cleared, o.points, -len(o.moves))
        spent = 1 if o.steps_spent else 0
        nxt = Choice(o.moves[-1], o.tiles_cleared, o.steps_gained, spent, o.points, objective, o.predicted)
        for move, after in zip(reversed(o.moves[:-1]), reversed(o.boards)):
            nxt = Choice(move, 0, 0, spent, 0, objective, after, then=nxt)
        return nxt


_LIBRARY_CACHE: dict[str, PlanLibrary] = {}
_INDEX_CACHE: dict[str, "PlanIndex"] = {}


def default_library() -> PlanLibrary:
    """The library PUZZLE_AGENT_PLANS names, else the one at the default path; when there
    is none there (an installed package without the repository's plans/), the same library
    built in memory. What PUZZLE_AGENT_PLANS names is never replaced: missing or bad, it is
    a PlanLibraryError (the user asked for that file)."""
    if "default" not in _LIBRARY_CACHE:
        import os

        from agent.games.match3.plan_library import LIBRARY_ENV, library_path

        path = library_path()
        if os.environ.get(LIBRARY_ENV) or path.exists():
            lib = load_library(path)
        else:
            from agent.games.match3.plans import COMPLETE, build_plans

            lib, _ = build_plans(COMPLETE)
        _LIBRARY_CACHE["default"] = lib
    return _LIBRARY_CACHE["default"]


# Plans of up to this many swaps are all scored: the benchmark's exhaustive search goes
# to two swaps, and cascades make short plans hard to rule out by their own score.
SHORT_PLAN = 2
# Longer plans are scored best-first by their own score, while that score plus this
# allowance (for bigger groups and cascades a plan cannot see) could still beat the best
# outcome found; `agent bench solve --no-prune` scores every applicable plan.
# In each objective's units: seed and points count every tile a cascade clears, gain only
# tiles past three in a group, so cascades move it least.
ALLOWANCE = {"seed": 6, "gain": 2, "points": 150}

ORIGINS = {
    "plan": "a plan of the library",
    "swap": "a single swap whose group is none of the library's shapes",
    "setup": "a swap of other tiles that sets up a cascade, then a clearing swap",
    "path": "another path to a plan's elimination, which sets up a cascade or avoids an early clear",
}


def _naming(plan: Plan, kind: int, row: int, col: int) -> tuple[int, int, int, int, str, str]:
    """Which of several plans with the same swaps names them: the biggest elimination, then
    reading order."""
    return (-plan.count, kind, row, col, plan.target, plan.final)


@dataclass(frozen=True)
class _Geometry:
    plan: Plan
    swaps: tuple[tuple[int, int, str], ...]  # canonical swaps (top/left cell, R or D), window coordinates
    must_clear: tuple[tuple[int, int], ...]  # the final window's 1s
    others: tuple[tuple[Move, Move], ...]  # other two-swap paths to the same final, window coordinates
    _flat: dict[int, "_FlatGeometry"] = field(default_factory=dict, compare=False)

    def flat(self, cols: int) -> "_FlatGeometry":
        """The plan's swaps and cells as flat indexes on a board `cols` wide, placed at 0, 0."""
        got = self._flat.get(cols)
        if got is None:
            codes = tuple((r * cols + c) * 2 + (d == "R") for r, c, d in self.swaps)
            cells = [(r * cols + c, r * cols + c + (cols if d == "D" else 1)) for r, c, d in self.swaps]
            first = cells[0] if len(cells) == 2 else (-1, -1)
            must = tuple(r * cols + c for r, c in self.must_clear)
            got = self._flat[cols] = _FlatGeometry(codes, first, cells[-1], must)
        return got


@dataclass(frozen=True)
class _FlatGeometry:
    codes: tuple[int, ...]  # swap codes (see candidates.swap_code) at offset 0
    first: tuple[int, int]  # flat cells of the first swap of two, else -1, -1
    last: tuple[int, int]
    must: tuple[int, ...]  # flat cells the last swap must clear


@dataclass
class _Pool:
    """Candidate sequences, one per distinct swap sequence, with the flat cells of their
    first and last swaps for the batch scorer."""

    # _Candidate, (moves, origin) for a non-plan, or a _Placed plan
    cands: list[_Candidate | tuple[tuple[Move, ...], str] | _Placed] = field(default_factory=list)
    make: Callable[["_Placed"], "_Candidate"] | None = None
    keys: list[tuple[int, ...]] = field(default_factory=list)
    firsts: list[tuple[int, int]] = field(default_factory=list)
    lasts: list[tuple[int, int]] = field(default_factory=list)
    _where: dict[tuple[int, ...], int] = field(default_factory=dict)

    def add(
        self, key: tuple[int, ...], moves: tuple[Move, ...], origin: str,
        first: Swap | tuple[int, int] | None, last: Swap | tuple[int, int] | None,
    ) -> None:
        """A sequence that is not a plan; its candidate is made only if it is chosen."""
        if key not in self._where:
            self._append(key, (moves, origin), _cells(first), _cells(last))

    def candidate(self, i: int) -> "_Candidate":
        c = self.cands[i]
        if isinstance(c, _Placed):
            assert self.make is not None
            return self.make(c)
        return c if isinstance(c, _Candidate) else _Candidate(*c)

    def place(self, placed: "_Placed", cols: int) -> None:
        """A plan placed on the board; of several with the same swaps, the one `_naming` puts first."""
        flat = placed.geo.flat(cols)
        off = placed.row * cols + placed.col
        key = tuple(c + 2 * off for c in flat.codes)
        i = self._where.get(key)
        if i is None:
            first = flat.first if flat.first[0] < 0 else (flat.first[0] + off, flat.first[1] + off)
            self._append(key, placed, first, (flat.last[0] + off, flat.last[1] + off))
            return
        at = self.cands[i]
        if isinstance(at, _Placed) and placed.naming() < at.naming():
            self.cands[i] = placed

    def _append(
        self, key: tuple[int, ...], cand: _Candidate | tuple[tuple[Move, ...], str] | _Placed,
        first: tuple[int, int], last: tuple[int, int],
    ) -> None:
        self._where[key] = len(self.cands)
        self.cands.append(cand)
        self.keys.append(key)
        self.firsts.append(first)
        self.lasts.append(last)

    def must_grid(self, cells: int, cols: int) -> np.ndarray | None:
        rows = [(i, c + p.row * cols + p.col) for i, p in enumerate(self.cands) if isinstance(p, _Placed)
                for c in p.geo.flat(cols).must]
        if not rows:
            return None
        grid = np.zeros((len(self.cands), cells), dtype=bool)
        at = np.array(rows, dtype=np.int64)
        grid[at[:, 0], at[:, 1]] = True
        return grid


@dataclass
class _Table:
    """Every candidate as rows of arrays for the batch scorer: the pool's (plans, single
    swaps, other paths) first, then the set-ups, each swap sequence once."""

    rows: np.ndarray  # per kept row: its index among pool + set-ups
    code1: np.ndarray  # first swap's code, -1 for none
    code2: np.ndarray
    firsts: np.ndarray  # (n, 2) flat cells
    lasts: np.ndarray
    must: np.ndarray | None
    n_pool: int
    set_first: list[int]
    set_last: list[int]

    @classmethod
    def build(cls, pool: _Pool, scan: SwapScan, set_first: list[int], set_last: list[int], cells: int,
              cols: int) -> "_Table":
        n_pool = len(pool.cands)
        q = np.array([(w.code, w.a, w.b) for w in scan.quiet], dtype=np.int64).reshape(-1, 3)
        c = np.array([(w.code, w.a, w.b) for w in scan.clearing], dtype=np.int64).reshape(-1, 3)
        sf, sl = np.array(set_first, dtype=np.int64), np.array(set_last, dtype=np.int64)
        code1 = np.concatenate([[k[0] if len(k) == 2 else -1 for k in pool.keys], q[sf, 0]]).astype(np.int64)
        code2 = np.concatenate([[k[-1] for k in pool.keys], c[sl, 0]]).astype(np.int64)
        firsts = np.concatenate([np.array(pool.firsts, dtype=np.int64).reshape(-1, 2), q[sf, 1:]])
        lasts = np.concatenate([np.array(pool.lasts, dtype=np.int64).reshape(-1, 2), c[sl, 1:]])
        # A set-up may be a plan or a path already: scored twice, named once (see rank).
        must = pool.must_grid(cells, cols)
        if must is not None:
            must = np.concatenate([must, np.zeros((len(sf), cells), dtype=bool)])
        rows = np.arange(len(code1))
        return cls(rows, code1, code2, firsts, lasts, must, n_pool, set_first, set_last)

    def codes(self, i: int) -> tuple[int, ...]:
        """Row i's swaps as codes, comparing like the canonical moves."""
        c1, c2 = int(self.code1[i]), int(self.code2[i])
        return (c2,) if c1 < 0 else (c1, c2)

    def candidate(self, row: int, pool: _Pool, scan: SwapScan) -> "_Candidate":
        if row < self.n_pool:
            return pool.candidate(row)
        k = row - self.n_pool
        first, last = scan.quiet[self.set_first[k]], scan.clearing[self.set_last[k]]
        return _Candidate((first.move, last.move), "setup")


@dataclass(frozen=True)
class _Placed:
    """A plan placed on the board, made a _Candidate only if it is looked at."""

    geo: _Geometry
    pid: int
    kind: int
    row: int
    col: int

    def naming(self) -> tuple[int, int, int, int, str, str]:
        return _naming(self.geo.plan, self.kind, self.row, self.col)


def _cells(sw: Swap | tuple[int, int] | None) -> tuple[int, int]:
    if sw is None:
        return (-1, -1)
    if isinstance(sw, Swap):
        return (sw.a, sw.b)
    return sw


def _flat(moves: tuple[Move, ...], cols: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """Flat cells of a sequence's first (none for one swap) and last swap. Plans are
    placed inside the board, and so are their other paths (inside the box of its cells)."""
    def flat(m: Move) -> tuple[int, int]:
        (r1, c1), (r2, c2) = m.cells()
        if min(r1, r2, c1, c2) < 0 or max(c1, c2) >= cols:
            return (-1, -1)
        return (r1 * cols + c1, r2 * cols + c2)
    return (flat(moves[0]) if len(moves) == 2 else (-1, -1)), flat(moves[-1])


def _best_first(numeric: np.ndarray, codes: Callable[[int], tuple[int, ...]]) -> Iterator[int]:
    """Indexes by numeric key, ties by swaps in reading order."""
    if not len(numeric):
        return
    order = np.lexsort(numeric.T[::-1]).tolist()
    n = 0
    while n < len(order):
        m = n + 1
        while m < len(order) and (numeric[order[m]] == numeric[order[n]]).all():
            m += 1
        yield from (sorted(order[n:m], key=codes) if m - n > 1 else order[n:m])
        n = m


@dataclass
class _Candidate:
    moves: tuple[Move, ...]
    origin: str  # see ORIGINS
    must_clear: tuple[tuple[int, int], ...] = ()  # a plan's final 1s: its last swap must clear them
    plan: Plan | None = None
    plan_index: int = -1
    kind: int = -1
    row: int = 0
    col: int = 0


@dataclass
class PlanSolver:
    """Plans from the library, verified on the board, best by `objective` (None: the
    variant's default). Besides plans it weighs every single clearing swap, cascade
    set-ups and other paths to a plan's elimination (see `candidates`). Falls back to the best single swap when
    nothing clears."""

    library: PlanLibrary | None = None
    objective: str | None = None
    name: str = "plan"
    _index: PlanIndex | None = field(default=None, repr=False)
    _geometry: dict[int, _Geometry] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.objective is not None and self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {self.objective!r}")

    @property
    def index(self) -> PlanIndex:
        if self._index is None:
            if self.library is None:
                self.library = default_library()
                if "default" not in _INDEX_CACHE:  # every game of a benchmark makes a solver
                    _INDEX_CACHE["default"] = PlanIndex.build(self.library)
                self._index = _INDEX_CACHE["default"]
            else:
                self._index = PlanIndex.build(self.library)
        return self._index

    def _geo(self, i: int) -> _Geometry:
        geo = self._geometry.get(i)
        if geo is None:
            assert self.library is not None
            plan = self.library.plan(i)
            swaps = []
            for st in plan.steps:
                m = st.move().canonical()
                swaps.append((m.row, m.col, m.direction))
            must = tuple(
                (r, c) for r, line in enumerate(plan.final.split("/")) for c, ch in enumerate(line) if ch == "1"
            )
            rows = plan.rows
            moves = tuple(st.move() for st in plan.steps)
            others = tuple(other_paths(moves, lambda rc: rows[rc[0]][rc[1]] == "1"))
            geo = self._geometry[i] = _Geometry(plan, tuple(swaps), must, others)
        return geo

    def estimates(self, config: Match3Config, objective: str, found: Matches) -> np.ndarray:
        """Each placed plan's own score: what its elimination alone is worth."""
        counts = self.index.counts[found.plan]
        steps = self.index.steps[found.plan]
        if objective == "seed":
            return cast(np.ndarray, counts - 3 - steps)
        if objective == "gain":
            levels = np.array([config.level(k) for k in range(MAX_TYPES)], dtype=np.int64)
            spent = steps if config.variant == "step" else 0
            return cast(np.ndarray, (counts - 3) * 3 ** levels[found.kind] - spent)
        return cast(np.ndarray, 10 * counts + 10 * np.maximum(counts - 3, 0))

    def _plans(self, config: Match3Config, objective: str, board: Board,
               pool: _Pool) -> Iterator[tuple[int, _Candidate]]:
        """The library's plans that apply: the short ones go into `pool` (one per swap
        sequence); the long ones come back lazily, best first by their own score, as
        (that score, candidate)."""
        found = self.index.matches(board)
        steps = self.index.steps[found.plan]
        estimate = self.estimates(config, objective, found)
        long = steps > SHORT_PLAN
        if config.variant == "classic":
            long |= steps > 1  # a classic swap that matches nothing is undone: no setting up
        cols = board.cols
        short = np.nonzero(~long)[0] if config.variant != "classic" else np.nonzero(steps == 1)[0]
        # The same swaps score the same whatever the plan; which plan names them is
        # decided by content (`_Pool.place`), so neither the order here nor the
        # library's ever shows.
        for pid, row, col, kind in zip(found.plan[short].tolist(), found.row[short].tolist(),
                                       found.col[short].tolist(), found.kind[short].tolist()):
            pool.place(_Placed(self._geo(pid), pid, kind, row, col), cols)
        if config.variant == "classic":
            return iter(())
        return self._longs(found, estimate, np.nonzero(long)[0])

    def _longs(self, found: Matches, estimate: np.ndarray, which: np.ndarray) -> Iterator[tuple[int, _Candidate]]:
        """The long plans best first by their own score, one estimate at a time (the caller
        usually stops within the first one or two), ties in an order of content only."""
        seen: set[tuple[tuple[int, int, str], ...]] = set()
        est = estimate[which]
        for level in np.unique(est)[::-1].tolist():
            at = which[est == level]
            order = at[np.lexsort((found.kind[at], found.col[at], found.row[at], self.index.targets[found.plan[at]]))]
            for n in order.tolist():
                pid, row, col, kind = int(found.plan[n]), int(found.row[n]), int(found.col[n]), int(found.kind[n])
                geo = self._geo(pid)
                key = tuple((r + row, c + col, d) for r, c, d in geo.swaps)
                if key not in seen:  # the first placement of a sequence has its best own score
                    seen.add(key)
                    yield level, self._candidate(geo, pid, kind, row, col)

    def _candidate(self, geo: _Geometry, pid: int, kind: int, row: int, col: int) -> _Candidate:
        moves = tuple(st.move(row, col) for st in geo.plan.steps)
        must = tuple((r + row, c + col) for r, c in geo.must_clear)
        return _Candidate(moves, "plan", must, geo.plan, pid, kind, row, col)

    def rank(
        self, config: Match3Config, board: Board, top: int | None = None, prune: bool = True
    ) -> list[PlanChoice]:
        """Verified sequences, best first, one per distinct swap sequence. With `prune`,
        plans longer than SHORT_PLAN swaps are scored only while their own score plus
        ALLOWANCE could beat the best found; without, every applicable plan is."""
        objective = self.objective or default_objective(config)
        ev = Evaluator(config, objective, board)
        pool = _Pool(make=lambda p: self._candidate(p.geo, p.pid, p.kind, p.row, p.col))
        longs = self._plans(config, objective, board, pool)
        scan = scan_swaps(ev)
        for sw in scan.clearing:
            pool.add((sw.code,), (sw.move,), "swap", None, sw)
        set_first: list[int] = []  # set-ups: indexes into scan.quiet and scan.clearing
        set_last: list[int] = []
        if config.variant == "step":
            cols = board.cols
            for placed in [c for c in pool.cands if isinstance(c, _Placed) and c.geo.others]:
                for path in placed.geo.others:
                    other = tuple(Move(m.row + placed.row, m.col + placed.col, m.direction) for m in path)
                    pool.add(tuple(swap_code(m, cols) for m in other), other, "path", *_flat(other, cols))
            for f, fin in enumerate(scan.clearing):
                pred = br.settle(br.swap(ev.base, fin.i, fin.j), ev.lay, ev.levels, config.max_cascades)
                got = setups(ev, scan, fin, pred)
                set_first += got
                set_last += [f] * len(got)
        table = _Table.build(pool, scan, set_first, set_last, board.rows * board.cols, board.cols)
        n = len(table.rows)
        keys = np.zeros((n, 4), dtype=np.int64)  # best first: -score, -tiles, -points, swaps
        valid = np.zeros(n, dtype=bool)
        if n:
            sc = score_batch(config, objective, board, table.firsts, table.lasts, table.must,
                             quiet_first=table.rows >= table.n_pool)
            keys = np.stack([-sc.score, -sc.tiles, -sc.points, (table.firsts[:, 0] >= 0) + 1], axis=1)
            valid = sc.valid
        best = int(-keys[valid, 0].min()) if valid.any() else None
        # Long plans one by one, while their own score could still win.
        allowance = ALLOWANCE[objective]
        extra_keys, extra = [], []
        for estimate, cand in longs:
            if prune and best is not None and estimate + allowance <= best:
                break
            scored = ev.score(cand.moves, ev.mask(cand.must_clear))
            if scored is not None:
                extra_keys.append(scored.key[:4])
                extra.append(cand)
                best = scored.score if best is None else max(best, scored.score)
        kept = np.nonzero(valid)[0].tolist()
        cands: list[int | _Candidate] = [table.rows[i] for i in kept] + extra  # table rows, then long plans
        extra_codes = [tuple(swap_code(m, board.cols) for m in c.moves) for c in extra]

        def codes(i: int) -> tuple[int, ...]:
            return table.codes(kept[i]) if i < len(kept) else extra_codes[i - len(kept)]

        numeric = np.concatenate([keys[valid], np.array(extra_keys, dtype=np.int64).reshape(-1, 4)])
        out: list[PlanChoice] = []
        named: set[tuple[int, ...]] = set()  # one choice per swap sequence: the first row names it
        for i in _best_first(numeric, codes):
            if top is not None and len(out) >= top:
                break  # the bit-plane scores are the rules engine's: the order holds
            if codes(i) in named:
                continue
            named.add(codes(i))
            at = cands[i]
            cand = at if isinstance(at, _Candidate) else table.candidate(at, pool, scan)
            # The rules engine has the last word: this is what the play loop will check.
            outcome = replay(config, board, cand.moves, cand.must_clear)
            if outcome is not None:
                out.append(self._choice(board, outcome, objective, cand))
        out.sort(key=lambda pc: pc.outcome.key(objective))
        return out[:top] if top is not None else out

    def _choice(self, board: Board, outcome: Outcome, objective: str, cand: _Candidate) -> PlanChoice:
        kind, row, col = cand.kind, cand.row, cand.col
        if cand.plan is None:
            before = outcome.boards[-1] if outcome.boards else board
            kind = find_groups(before.swapped(outcome.moves[-1]))[0].kind
            row = min(min(r for r, _ in m.cells()) for m in outcome.moves)
            col = min(min(c for _, c in m.cells()) for m in outcome.moves)
        return PlanChoice(outcome, objective, cand.plan, cand.plan_index, kind, row, col, cand.origin)

    def choose(self, config: Match3Config, board: Board) -> Choice | None:
        ranked = self.rank(config, board, top=1)
        if ranked:
            return ranked[0].choice()
        return GreedySolver().choose(config, board)


def _canon_key(move: Move) -> tuple[int, int, str]:
    m = move.canonical()
    return m.row, m.col, m.direction
