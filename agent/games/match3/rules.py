"""Match-3 rules: matching, clearing, gravity, refill and cascades; two variants.

Everything here is pure: a function takes a board (and a seeded generator where tiles
are drawn) and returns new values. Each cascade phase is returned whole so that the
simulated phone can animate it and tests can inspect it.

Variants:
- `step` (seed 000): any adjacent swap of two tiles is legal and costs one step; each
  cleared group of n tiles of type t gives back (n - 3) * 3**level[t] steps. The game
  ends when no steps are left.
- `classic` (Bejeweled-like): a swap that makes no match is undone and costs nothing;
  the game ends after `move_budget` moves or when no swap makes a match.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterator, Literal, cast

import numpy as np

from agent.games.match3.board import EMPTY, MAX_TYPES, Board, Move, adjacent_swaps

Variant = Literal["step", "classic"]
VARIANTS: tuple[str, ...] = ("step", "classic")


@dataclass(frozen=True)
class Match3Config:
    variant: Variant = "step"
    rows: int = 8
    cols: int = 8
    n_types: int = 6
    levels: tuple[int, ...] = ()  # per tile type; missing entries are level 0
    start_steps: int = 30  # step variant
    move_budget: int = 50  # classic variant
    max_cascades: int = 100  # a safety bound; real boards settle in a few phases

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {self.variant!r}")
        if not 3 <= self.n_types <= MAX_TYPES:
            raise ValueError(f"n_types must be 3..{MAX_TYPES}, got {self.n_types}")

    def level(self, kind: int) -> int:
        return self.levels[kind] if kind < len(self.levels) else 0


@dataclass(frozen=True)
class Group:
    """One elimination: runs of one type that share cells (an L, T or cross is one group)."""

    kind: int
    cells: tuple[tuple[int, int], ...]

    @property
    def size(self) -> int:
        return len(self.cells)


@dataclass(frozen=True)
class Phase:
    """One round of a cascade: match, clear, fall, refill.

    `sources[r, c]` is the row in `cleared` that the tile now at (r, c) in `refilled` fell
    from; refilled tiles have negative rows (-1 is just above the board), so a renderer
    can slide every tile from where it was.
    """

    before: Board
    groups: tuple[Group, ...]
    cleared: Board
    fallen: Board
    refilled: Board
    sources: np.ndarray

    @property
    def cleared_count(self) -> int:
        return sum(g.size for g in self.groups)


def find_groups(board: Board) -> tuple[Group, ...]:
    """Every horizontal or vertical run of 3+ equal tiles, runs that share a cell merged."""
    a = board.cells.tolist()
    rows, cols = board.rows, board.cols
    runs: list[list[tuple[int, int]]] = []
    for r in range(rows):
        row = a[r]
        c = 0
        while c < cols:
            v = row[c]
            e = c + 1
            while e < cols and row[e] == v:
                e += 1
            if v >= 0 and e - c >= 3:
                runs.append([(r, k) for k in range(c, e)])
            c = e
    for c in range(cols):
        r = 0
        while r < rows:
            v = a[r][c]
            e = r + 1
            while e < rows and a[e][c] == v:
                e += 1
            if v >= 0 and e - r >= 3:
                runs.append([(k, c) for k in range(r, e)])
            r = e
    if not runs:
        return ()
    # Union runs through shared cells; boards are small, so a dict of owners suffices.
    parent = list(range(len(runs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[tuple[int, int], int] = {}
    for i, run in enumerate(runs):
        for cell in run:
            j = owner.setdefault(cell, i)
            if j != i:
                parent[find(i)] = find(j)
    merged: dict[int, set[tuple[int, int]]] = {}
    for i, run in enumerate(runs):
        merged.setdefault(find(i), set()).update(run)
    groups = [Group(a[min(s)[0]][min(s)[1]], tuple(sorted(s))) for s in merged.values()]
    groups.sort(key=lambda g: g.cells[0])
    return tuple(groups)


def has_match(board: Board) -> bool:
    a = board.cells
    h = (a[:, :-2] == a[:, 1:-1]) & (a[:, 1:-1] == a[:, 2:]) & (a[:, :-2] >= 0)
    if h.any():
        return True
    v = (a[:-2, :] == a[1:-1, :]) & (a[1:-1, :] == a[2:, :]) & (a[:-2, :] >= 0)
    return bool(v.any())


def clear(board: Board, groups: tuple[Group, ...]) -> Board:
    a = board.cells.copy()
    for g in groups:
        for r, c in g.cells:
            a[r, c] = EMPTY
    return Board._trusted(a)


def gravity(board: Board) -> tuple[Board, np.ndarray]:
    """Tiles fall into the empty cells below them. Returns the board and each cell's source row."""
    a = board.cells
    rows, cols = a.shape
    out = np.full_like(a, EMPTY)
    sources = np.full(a.shape, EMPTY, dtype=np.int16)
    for c in range(cols):
        col = a[:, c]
        filled = np.nonzero(col != EMPTY)[0]
        n = len(filled)
        if n:
            out[rows - n :, c] = col[filled]
            sources[rows - n :, c] = filled
    return Board._trusted(out), sources


def refill(board: Board, sources: np.ndarray, n_types: int, rng: np.random.Generator) -> tuple[Board, np.ndarray]:
    """Fill every empty cell with a random tile that drops in from above the board."""
    a = board.cells.copy()
    src = sources.copy()
    for c in range(a.shape[1]):
        holes = np.nonzero(a[:, c] == EMPTY)[0]
        if len(holes):
            # Drawn column by column, top to bottom, so a seed fixes every tile.
            a[holes, c] = rng.integers(0, n_types, size=len(holes))
            src[holes, c] = holes - len(holes)
    return Board._trusted(a), src


def resolve(board: Board, n_types: int, rng: np.random.Generator | None, max_cascades: int = 100) -> list[Phase]:
    """Clear, fall and refill until nothing matches. With `rng=None` nothing is refilled
    and the cascade stops after the first fall (what can be predicted without new tiles)."""
    phases: list[Phase] = []
    current = board
    for _ in range(max_cascades):
        groups = find_groups(current)
        if not groups:
            break
        cleared = clear(current, groups)
        fallen, sources = gravity(cleared)
        if rng is None:
            phases.append(Phase(current, groups, cleared, fallen, fallen, sources))
            current = fallen
            continue
        refilled, sources = refill(fallen, sources, n_types, rng)
        phases.append(Phase(current, groups, cleared, fallen, refilled, sources))
        current = refilled
    return phases


def random_board(config: Match3Config, rng: np.random.Generator) -> Board:
    """A full board with no 3 in a row (and, for `classic`, at least one legal swap)."""
    for _ in range(1000):
        a = np.empty((config.rows, config.cols), dtype=np.int8)
        for r in range(config.rows):
            for c in range(config.cols):
                banned = set()
                if c >= 2 and a[r, c - 1] == a[r, c - 2]:
                    banned.add(int(a[r, c - 1]))
                if r >= 2 and a[r - 1, c] == a[r - 2, c]:
                    banned.add(int(a[r - 1, c]))
                choices = [t for t in range(config.n_types) if t not in banned]
                a[r, c] = choices[int(rng.integers(0, len(choices)))]
        board = Board(a)
        if config.variant != "classic" or any(True for _ in matching_swaps(board)):
            return board
    raise RuntimeError("could not draw a playable board")  # pragma: no cover - needs n_types < 3


def is_legal_swap(board: Board, move: Move) -> bool:
    """Both cells inside the board and both hold tiles."""
    (r1, c1), (r2, c2) = move.cells()
    return board.inside(r1, c1) and board.inside(r2, c2) and board[r1, c1] >= 0 and board[r2, c2] >= 0


def matching_swaps(board: Board) -> Iterator[Move]:
    """Swaps that create at least one match (the legal moves of `classic`)."""
    for move in adjacent_swaps(board.rows, board.cols):
        if is_legal_swap(board, move) and board[move.cells()[0]] != board[move.other]:
            if has_match(board.swapped(move)):
                yield move


@dataclass(frozen=True)
class GameState:
    board: Board
    steps_left: int = 0
    moves_made: int = 0
    score: int = 0
    tiles_cleared: int = 0
    steps_gained: int = 0
    steps_spent: int = 0


@dataclass(frozen=True)
class MoveOutcome:
    """What one move did. `applied` is False for a classic swap that matched nothing."""

    move: Move
    applied: bool
    swapped: Board
    phases: tuple[Phase, ...]
    tiles_cleared: int
    steps_gained: int
    steps_spent: int
    points: int
    state: GameState = field(repr=False)


def group_points(group: Group, depth: int) -> int:
    """Points for a group: 10 per tile, 10 more per tile past three, times the cascade depth."""
    return (10 * group.size + 10 * max(0, group.size - 3)) * depth


def step_gain(config: Match3Config, group: Group) -> int:
    return (group.size - 3) * cast(int, 3 ** config.level(group.kind))  # int ** int is typed Any


def new_game(config: Match3Config, rng: np.random.Generator) -> GameState:
    return GameState(board=random_board(config, rng), steps_left=config.start_steps)


def is_over(config: Match3Config, state: GameState) -> bool:
    if config.variant == "step":
        return state.steps_left <= 0
    if state.moves_made >= config.move_budget:
        return True
    return next(matching_swaps(state.board), None) is None


def legal_moves(config: Match3Config, state: GameState) -> list[Move]:
    if is_over(config, state):
        return []
    if config.variant == "classic":
        return list(matching_swaps(state.board))
    return [m for m in adjacent_swaps(state.board.rows, state.board.cols) if is_legal_swap(state.board, m)]


def apply_move(
    config: Match3Config, state: GameState, move: Move, rng: np.random.Generator | None
) -> MoveOutcome:
    """Play one swap. `rng=None` predicts without refilling (see `resolve`)."""
    if is_over(config, state):
        raise ValueError("the game is over")
    if not is_legal_swap(state.board, move):
        raise ValueError(f"illegal swap {move}: both cells must be on the board and hold tiles")
    swapped = state.board.swapped(move)
    phases = tuple(resolve(swapped, config.n_types, rng, config.max_cascades))
    if config.variant == "classic" and not phases:
        return MoveOutcome(move, False, swapped, (), 0, 0, 0, 0, state)
    cleared = sum(p.cleared_count for p in phases)
    points = sum(group_points(g, depth) for depth, p in enumerate(phases, 1) for g in p.groups)
    gained = sum(step_gain(config, g) for p in phases for g in p.groups) if config.variant == "step" else 0
    spent = 1 if config.variant == "step" else 0
    board = phases[-1].refilled if phases else swapped
    new_state = replace(
        state,
        board=board,
        steps_left=state.steps_left - spent + gained,
        moves_made=state.moves_made + 1,
        score=state.score + points,
        tiles_cleared=state.tiles_cleared + cleared,
        steps_gained=state.steps_gained + gained,
        steps_spent=state.steps_spent + spent,
    )
    return MoveOutcome(move, True, swapped, phases, cleared, gained, spent, points, new_state)
