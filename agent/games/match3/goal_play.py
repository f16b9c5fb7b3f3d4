"""Choosing match-3 swaps by a level's goal: collect N of a colour, break N blockers.

A goal-aware choice weighs each candidate swap by what it does for the goal first and
by what the solver values second:

- collect colour K: the K tiles the swap clears, in its first wave and the cascades the
  board can predict (before anything new drops in), plus half of what a special it
  makes can clear of K later (a striped piece its line's K tiles, a colour bomb every K
  on the board); then, as a tie-break, the K tiles it leaves in line (pairs, and pairs
  with one gap, that one more K completes);
- break blockers: the blockers next to a cleared cell (a match beside a blocker hits
  it), wave by wave, plus half of the blockers a special it makes can reach later (its
  line; a colour bomb, the most blockers beside one colour); then the pairs it leaves
  beside a blocker.

"Half" because a special's clears come only on a later move that fires it, on a board
the refills will have changed by then. A score goal is what the solver aims at already.

The prediction is the board's own: blockers and holes never move, tiles fall past them
down their column into the next free cell (as games do); nothing is refilled, so a
cascade stops where the unknown new tiles would come in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np

from agent.games.match3.board import EMPTY, UNKNOWN, Board, Move
from agent.games.match3.rules import Group, Match3Config, find_groups
from agent.games.match3.solver import Choice, candidate_moves, evaluate
from agent.vision.goal import Goal

Cell = tuple[int, int]
GOAL_MODES: tuple[str, ...] = ("auto", "off")  # pursue a readable goal, or play blind to it
CASCADE_SHARE = 1.0
SPECIAL_SHARE = 0.5  # of what a special made now is expected to clear for the goal later
MAX_WAVES = 20  # a predicted cascade settles in a few waves; this only bounds a loop
_NEIGHBOURS = ((0, 1), (0, -1), (1, 0), (-1, 0))


@dataclass(frozen=True)
class Aim:
    """A goal in the rules' terms: what to count on a board."""

    kind: Literal["collect", "break"]
    # collect: the rules' colour id to collect; break: the colour id the board reads the
    # blockers as, when the goal's icon matched a class calibration took for a tile
    colour: int | None = None

    def blockers_on(self, board: Board) -> frozenset[Cell]:
        """The cells the goal's icon says are blockers (a break goal's piece)."""
        if self.kind != "break" or self.colour is None:
            return frozenset()
        return frozenset((int(r), int(c)) for r, c in zip(*np.nonzero(board.cells == self.colour)))


def aim_for(goal: Goal | None, kind_ids: Mapping[str, int]) -> Aim | None:
    """What a player can aim at for `goal`: None for no goal, a score goal (the solver's
    own aim), a goal already met, or a colour the board has no tiles of."""
    if goal is None or goal.kind == "score" or not goal.playable or goal.left == 0:
        return None
    if goal.kind == "break":
        return Aim("break", kind_ids.get(goal.piece) if goal.piece is not None else None)
    colour = kind_ids.get(str(goal.colour))
    return None if colour is None else Aim("collect", colour)


@dataclass(frozen=True)
class Special:
    kind: Literal["row", "col", "bomb"]  # a striped piece clears its row or column; a bomb a colour
    cell: Cell
    colour: int


@dataclass(frozen=True)
class Effect:
    """What a swap does, as far as the board can tell."""

    cleared: tuple[int, ...]  # tiles cleared per colour id
    hits: int  # blocker hits (each blocker next to a wave's clears, once per wave)
    specials: tuple[Special, ...]
    after: np.ndarray  # the cells once the predicted waves are over (EMPTY: to be refilled)


def _runs(group: Group) -> tuple[int, bool, bool, bool]:
    """(longest run, has a run along a row, has one down a column, the longest is along a row)."""
    cells = set(group.cells)
    longest, across, down, longest_across = 0, False, False, False
    for r, c in cells:
        if (r, c - 1) not in cells:
            n = 1
            while (r, c + n) in cells:
                n += 1
            if n >= 3:
                across = True
                if n > longest:
                    longest, longest_across = n, True
        if (r - 1, c) not in cells:
            n = 1
            while (r + n, c) in cells:
                n += 1
            if n >= 3:
                down = True
                if n > longest:
                    longest, longest_across = n, False
    return longest, across, down, longest_across


def _special_of(group: Group, moved: tuple[Cell, ...]) -> Special | None:
    longest, across, down, longest_across = _runs(group)
    if longest >= 5 or (across and down):
        kind: Literal["row", "col", "bomb"] = "bomb"
    elif longest == 4:
        kind = "row" if longest_across else "col"
    else:
        return None
    at = next((m for m in moved if m in group.cells), None)
    if at is None:
        ordered = sorted(group.cells)
        at = ordered[len(ordered) // 2]
    return Special(kind, at, group.kind)


def _fall(a: np.ndarray, fixed: np.ndarray) -> None:
    """Tiles fall down their column past fixed cells into the next free ones, in place."""
    rows, cols = a.shape
    for c in range(cols):
        slots = [r for r in range(rows) if not fixed[r, c]]
        items = [int(a[r, c]) for r in slots if a[r, c] != EMPTY]
        pad = len(slots) - len(items)
        for i, r in enumerate(slots):
            a[r, c] = EMPTY if i < pad else items[i - pad]


def predict(board: Board, move: Move, blockers: frozenset[Cell], rng: np.random.Generator | None = None,
            colours: int = 6) -> Effect:  # fmt: skip
    """The swap's waves on `board` with `blockers` (and holes) fixed, up to the refill;
    with `rng`, refilled with tiles of `colours` drawn from it and on to the end."""
    rows, cols = board.shape
    fixed = board.cells == EMPTY  # at rest, an empty cell is a hole
    for r, c in blockers:
        fixed[r, c] = True
    a = board.swapped(move).cells.copy()
    cleared = [0] * 8
    hits = 0
    specials: list[Special] = []
    moved = move.cells()
    for wave in range(MAX_WAVES):
        groups = find_groups(Board._trusted(a.copy()))
        if not groups:
            break
        gone: set[Cell] = set()
        for g in groups:
            cleared[g.kind] += g.size
            gone.update(g.cells)
        hit = {(r + dr, c + dc) for r, c in gone for dr, dc in _NEIGHBOURS if (r + dr, c + dc) in blockers}
        hits += len(hit)
        for r, c in gone:
            a[r, c] = EMPTY
        for g in groups:
            sp = _special_of(g, moved if wave == 0 else ())
            if sp is not None:
                specials.append(sp)
                # a striped piece keeps its colour; a colour bomb matches nothing
                a[sp.cell] = sp.colour if sp.kind != "bomb" else UNKNOWN
        _fall(a, fixed)
        if rng is not None:
            free = (a == EMPTY) & ~fixed
            a[free] = rng.integers(0, colours, int(free.sum()))
    return Effect(tuple(cleared), hits, tuple(specials), a)


def _pairs(m: np.ndarray, near: np.ndarray | None = None) -> int:
    """Pairs of marked cells in a line, next to each other or one apart; with `near`,
    only pairs with a cell in it."""
    n = 0
    for x, y in (((slice(None), slice(None, -1)), (slice(None), slice(1, None))),
                 ((slice(None, -1), slice(None)), (slice(1, None), slice(None))),
                 ((slice(None), slice(None, -2)), (slice(None), slice(2, None))),
                 ((slice(None, -2), slice(None)), (slice(2, None), slice(None)))):  # fmt: skip
        both = m[x] & m[y]
        if near is not None:
            both &= near[x] | near[y]
        n += int(both.sum())
    return n


def _beside(blockers: frozenset[Cell], shape: tuple[int, int]) -> np.ndarray:
    near = np.zeros(shape, bool)
    for r, c in blockers:
        for dr, dc in _NEIGHBOURS:
            if 0 <= r + dr < shape[0] and 0 <= c + dc < shape[1]:
                near[r + dr, c + dc] = True
    return near


@dataclass(frozen=True)
class Progress:
    """A swap's worth for the goal: `value` first (what it does now and what its specials
    can do later), `setup` second (what it leaves in line), `made` what it does now in
    the goal's own count (tiles collected, blocker hits)."""

    value: float
    setup: int
    made: int


def progress(aim: Aim, effect: Effect, blockers: frozenset[Cell], colours: int = 6) -> Progress:
    a = effect.after
    if aim.kind == "collect":
        k = int(aim.colour or 0)
        later = 0
        for sp in effect.specials:
            if sp.kind == "bomb":
                later += int((a == k).sum())
            else:
                line = a[sp.cell[0], :] if sp.kind == "row" else a[:, sp.cell[1]]
                later += int((line == k).sum())
        made = effect.cleared[k]
        others = sum(effect.cleared) - made
        return Progress(made + SPECIAL_SHARE * later + CASCADE_SHARE * others / max(1, colours), _pairs(a == k), made)
    later = 0
    for sp in effect.specials:
        if sp.kind == "bomb":
            later += max((len({(r + dr, c + dc) for r, c in zip(*np.nonzero(a == k)) for dr, dc in _NEIGHBOURS}
                              & blockers) for k in range(8)), default=0)  # fmt: skip
        else:
            r, c = sp.cell
            later += sum(1 for br, bc in blockers if (br == r if sp.kind == "row" else bc == c))
    near = _beside(blockers, a.shape)
    setup = sum(_pairs(a == k, near) for k in range(8))
    return Progress(effect.hits + SPECIAL_SHARE * later, setup, effect.hits)


def goal_choice(
    config: Match3Config, board: Board, blockers: frozenset[Cell], aim: Aim, preferred: Choice | None
) -> tuple[Choice | None, Progress | None]:
    """The swap to play for `aim`: the most progress, then the most left in line, then
    the solver's own preference (`preferred`, its choice, is kept when it is among the
    best for the goal: a plan goes on), then the rules' objective, then reading order.
    No swap makes progress: `preferred` (the board is played as without a goal)."""
    scored: dict[Move, Progress] = {}
    for m in candidate_moves(config, board):
        scored[m] = progress(aim, predict(board, m, blockers), blockers, config.n_types)
    if preferred is not None and preferred.move not in scored:
        scored[preferred.move] = progress(aim, predict(board, preferred.move, blockers), blockers, config.n_types)
    if not scored:
        return preferred, None

    def key(m: Move) -> tuple[float, int]:
        return scored[m].value, scored[m].setup

    best = max(key(m) for m in scored)
    if best <= (0, 0):
        return preferred, None if preferred is None else scored[preferred.move]
    if preferred is not None and key(preferred.move) == best:
        return preferred, scored[preferred.move]
    top = [m for m in scored if key(m) == best]
    ranked = [evaluate(config, board, m) for m in top]
    pick = max(range(len(ranked)), key=lambda i: (ranked[i].objective, -i))
    return ranked[pick], scored[top[pick]]


def made_by(aim: Aim, board: Board, move: Move, blockers: frozenset[Cell]) -> int:
    """What one swap does for the goal now, in the goal's count."""
    return progress(aim, predict(board, move, blockers), blockers).made
