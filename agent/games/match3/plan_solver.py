"""The plan solver: match the plan library on a board, verify each candidate on the whole
board with the rules engine, and pick the best by the verified outcome.

Matching is a table lookup. A plan applies where, for one tile type, the window's
indicator (1 where the cell holds that type) equals the plan's target exactly, so every
target becomes one number (its bits and its window size) in a sorted array, and every
window of every size and type on the board is looked up in it at once with numpy.

Verification replays the plan's swaps on the real board: each swap must be legal, no swap
before the last may clear anything anywhere (other types included), and the last must
clear the plan's elimination. The outcome counted is the rules engine's: the last swap's
clears and the cascades that follow before any new tile drops in.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, Sequence

import numpy as np

from agent.games.match3.board import MAX_TYPES, Board, Move
from agent.games.match3.plan_library import Plan, PlanLibrary, PlanLibraryError, load_library
from agent.games.match3.rules import GameState, Match3Config, apply_move, has_match, is_legal_swap
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


def target_code(target: str) -> int:
    """The target read as one binary number, row by row (its first cell the highest bit)."""
    return int(target.replace("/", ""), 2)


class BoardCodes:
    """Every window of every tile type on one board as a target code, per window size,
    computed on first use (a size's codes come from the next smaller height's)."""

    def __init__(self, board: Board) -> None:
        cells = board.cells
        self.rows, self.cols = cells.shape
        self.kinds = np.unique(cells[cells >= 0]).astype(np.int64)
        # onehot[k, r, c]: cell (r, c) holds kinds[k]
        self._onehot = (cells[None, :, :] == self.kinds[:, None, None]).astype(np.int64)
        self._lines: dict[int, np.ndarray] = {}
        self._codes: dict[tuple[int, int], np.ndarray] = {}

    def _line(self, w: int) -> np.ndarray:
        """line[k, r, j]: the w cells of row r from column j, as bits."""
        if w not in self._lines:
            n_j = self.cols - w + 1
            line = self._onehot[:, :, :n_j].copy()
            for c in range(1, w):
                line = (line << 1) | self._onehot[:, :, c : c + n_j]
            self._lines[w] = line
        return self._lines[w]

    def codes(self, h: int, w: int) -> np.ndarray:
        """codes[k, i, j]: the window of size h x w at (i, j) for kinds[k]."""
        code = self._codes.get((h, w))
        if code is None:
            line = self._line(w)
            if h == 1:
                code = line
            else:  # windows of height h start at rows 0..rows-h
                code = (self.codes(h - 1, w)[:, :-1, :] << w) | line[:, h - 1 :, :]
            self._codes[(h, w)] = code
        return code


@dataclass(frozen=True)
class _Layout:
    """For one board shape and number of tile types: every window of every size the
    library uses, flattened in the order `PlanIndex.matches` concatenates them."""

    sizes: tuple[tuple[int, int], ...]
    tags: np.ndarray  # each entry's size id
    kind: np.ndarray  # each entry's position in BoardCodes.kinds
    row: np.ndarray
    col: np.ndarray


_SIZE_BITS = 6  # a lookup key is (target code << 6) | size id


@dataclass
class PlanIndex:
    """One sorted array of lookup keys (target code and window size) for the whole
    library, so a board's windows of every size are looked up in one search."""

    keys: np.ndarray  # sorted
    ids: np.ndarray  # plan index of each key
    sizes: tuple[tuple[int, int], ...]  # size id -> (height, width)
    counts: np.ndarray  # per plan: tiles eliminated
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
        return cls(keys[order], order.astype(np.int64), sizes, counts, steps)

    def _layout(self, rows: int, cols: int, n_kinds: int) -> _Layout:
        key = (rows, cols, n_kinds)
        if key not in self._layouts:
            sizes, tags, kinds, rr, cc = [], [], [], [], []
            for sid, (h, w) in enumerate(self.sizes):
                if h > rows or w > cols:
                    continue
                k, i, j = np.indices((n_kinds, rows - h + 1, cols - w + 1)).reshape(3, -1)
                sizes.append((h, w))
                tags.append(np.full(k.size, sid, dtype=np.int64))
                kinds.append(k)
                rr.append(i)
                cc.append(j)
            cat = (lambda parts: np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64))
            self._layouts[key] = _Layout(tuple(sizes), cat(tags), cat(kinds), cat(rr), cat(cc))
        return self._layouts[key]

    def matches(self, board: Board) -> Matches:
        """Every placement of every plan on the board, in no particular order."""
        bc = BoardCodes(board)
        layout = self._layout(bc.rows, bc.cols, int(bc.kinds.size))
        if bc.kinds.size == 0 or not layout.sizes:
            empty = np.zeros(0, dtype=np.int64)
            return Matches(empty, empty, empty, empty)
        codes = np.concatenate([bc.codes(h, w).ravel() for h, w in layout.sizes])
        keys = (codes << _SIZE_BITS) | layout.tags
        lo = np.searchsorted(self.keys, keys, side="left")
        hi = np.searchsorted(self.keys, keys, side="right")
        hit = np.nonzero(hi > lo)[0]
        many = hi[hit] - lo[hit]  # plans sharing one target (different finals)
        first = np.repeat(lo[hit], many)
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

    def key(self, objective: str) -> tuple:
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
        nxt = prefix_cache.get(key, False) if prefix_cache is not None else False
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
    plan: Plan
    plan_index: int
    kind: int
    row: int
    col: int

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
    """The library at the default path (or PUZZLE_AGENT_PLANS); when there is none (an
    installed package without the repository's plans/), the same library built in memory."""
    if "default" not in _LIBRARY_CACHE:
        try:
            lib = load_library()
        except PlanLibraryError as exc:
            if "no plan library" not in str(exc):
                raise
            from agent.games.match3.plans import COMPLETE, build_plans

            lib, _ = build_plans(COMPLETE)
        _LIBRARY_CACHE["default"] = lib
    return _LIBRARY_CACHE["default"]


# Plans of up to this many swaps are all verified (about a dozen on an 8x8 board).
SHORT_PLAN = 1
# Longer plans are verified best-first by their own score, while that score plus this
# allowance (for bigger groups and cascades a plan cannot see) could still beat the best
# verified outcome. Verifying every applicable plan (some 470 distinct swap sequences on
# an 8x8 board, 50 of them two swaps long) costs about 14x more time, since each replay
# costs the rules engine 70-100 us; `agent bench solve --no-prune` measures it.
# In each objective's units: seed and points count every tile a cascade clears, gain only
# tiles past three in a group, so cascades move it least.
ALLOWANCE = {"seed": 6, "gain": 2, "points": 150}


def _naming(plan: Plan, kind: int, row: int, col: int) -> tuple:
    """Which of several plans with the same swaps names them: the biggest elimination, then
    reading order."""
    return (-plan.count, kind, row, col, plan.target, plan.final)


@dataclass(frozen=True)
class _Geometry:
    plan: Plan
    swaps: tuple[tuple[int, int, str], ...]  # canonical swaps (top/left cell, R or D), window coordinates
    must_clear: tuple[tuple[int, int], ...]  # the final window's 1s


@dataclass
class PlanSolver:
    """Plans from the library, verified on the board, best by `objective` (None: the
    variant's default). Falls back to the best single swap when no plan applies."""

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
            geo = self._geometry[i] = _Geometry(plan, tuple(swaps), must)
        return geo

    def estimates(self, config: Match3Config, objective: str, found: Matches) -> np.ndarray:
        """Each placed plan's own score: what its elimination alone is worth."""
        counts = self.index.counts[found.plan]
        steps = self.index.steps[found.plan]
        if objective == "seed":
            return counts - 3 - steps
        if objective == "gain":
            levels = np.array([config.level(k) for k in range(MAX_TYPES)], dtype=np.int64)
            spent = steps if config.variant == "step" else 0
            return (counts - 3) * 3 ** levels[found.kind] - spent
        return 10 * counts + 10 * np.maximum(counts - 3, 0)

    def rank(
        self, config: Match3Config, board: Board, top: int | None = None, prune: bool = True
    ) -> list[PlanChoice]:
        """Verified plans, best first, one per distinct swap sequence. With `prune`, plans
        longer than SHORT_PLAN swaps are verified only while their own score plus ALLOWANCE
        could beat the best verified outcome; without, every applicable plan is."""
        objective = self.objective or default_objective(config)
        found = self.index.matches(board)
        steps = self.index.steps[found.plan]
        estimate = self.estimates(config, objective, found)
        long = steps > SHORT_PLAN
        # Short plans first (all of them), then long ones by their own score, best first;
        # the rest of the key only makes the order (and so the result) deterministic.
        order = np.lexsort((found.kind, found.col, found.row, found.plan, -estimate, long))
        classic = config.variant == "classic"
        allowance = ALLOWANCE[objective]
        seen: dict[tuple, int | None] = {}  # swap sequence -> its entry in `ranked` (None: rejected)
        cache: dict[tuple[Move, ...], Board | None] = {}
        ranked: list[PlanChoice] = []
        best: int | None = None
        for n in order.tolist():
            if classic and steps[n] > 1:
                continue  # a classic swap that matches nothing is undone: no setting up
            if prune and long[n] and best is not None and estimate[n] + allowance <= best:
                break
            pid, row, col, kind = int(found.plan[n]), int(found.row[n]), int(found.col[n]), int(found.kind[n])
            geo = self._geo(pid)
            key = tuple((r + row, c + col, d) for r, c, d in geo.swaps)
            moves = tuple(st.move(row, col) for st in geo.plan.steps)
            if key in seen:
                # The same swaps verify the same way whatever the plan; which plan names
                # them is decided by content, so the library's order never shows.
                at = seen[key]
                if at is not None and _naming(geo.plan, kind, row, col) < _naming(
                    ranked[at].plan, ranked[at].kind, ranked[at].row, ranked[at].col
                ):
                    ranked[at] = PlanChoice(replace(ranked[at].outcome, moves=moves), objective, geo.plan, pid,
                                            kind, row, col)
                continue
            must = [(r + row, c + col) for r, c in geo.must_clear]
            out = replay(config, board, moves, must, cache)
            seen[key] = None if out is None else len(ranked)
            if out is None:
                continue
            ranked.append(PlanChoice(out, objective, geo.plan, pid, kind, row, col))
            score = out.score(objective)
            best = score if best is None else max(best, score)
        ranked.sort(key=lambda pc: pc.outcome.key(objective))
        return ranked[:top] if top is not None else ranked

    def choose(self, config: Match3Config, board: Board) -> Choice | None:
        ranked = self.rank(config, board, top=1)
        if ranked:
            return ranked[0].choice()
        return GreedySolver().choose(config, board)
