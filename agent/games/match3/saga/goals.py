"""A level's goal: reach a score, collect N tiles of one colour, break N blockers.

Progress is counted from the rules' phases, as a game counts it: every tile of the
goal's colour a wave clears (a striped one too; a colour bomb has no colour), every
blocker a wave breaks. Two players stand in for people: the goal-blind greedy player
of `levels` (the swap that clears most) and a goal-focused one (the swap that clears
most of the goal's colour, or hits most blockers, then what clears most), which is what
sets a goal level's count and budget (`calibrate_goal`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agent.games.match3.saga.rules import BOMB, Board, Cell, Outcome, Phase, first_wave, matching_swaps, play

SCORE, COLLECT, BREAK = "score", "collect", "break"
GOAL_KINDS = (SCORE, COLLECT, BREAK)


@dataclass(frozen=True)
class Goal:
    """What a level asks. `count` is N for collect and break (a score goal's target is
    the level's `target`); `colour` the colour index to collect (-1 otherwise).
    `to_the_end`: a score level that runs until its moves are spent (won when the score
    reached the target then), where other levels end as soon as the goal is met."""

    kind: str = SCORE
    count: int = 0
    colour: int = -1
    to_the_end: bool = False

    def __post_init__(self) -> None:
        if self.kind not in GOAL_KINDS:
            raise ValueError(f"goal kind must be one of {GOAL_KINDS}, not {self.kind!r}")
        if self.kind == COLLECT and self.colour < 0:
            raise ValueError("a collect goal needs a colour")


def phase_progress(goal: Goal, ph: Phase) -> int:
    """How much one wave advances `goal` (a score goal counts points elsewhere)."""
    if goal.kind == COLLECT:
        col = ph.before.colour
        return sum(1 for cell in ph.cleared if int(col[cell]) == goal.colour)
    if goal.kind == BREAK:
        return len(ph.broken)
    return 0


def outcome_progress(goal: Goal, out: Outcome) -> int:
    return sum(phase_progress(goal, ph) for ph in out.phases)


def focused_move(board: Board, colours: int, goal: Goal) -> tuple[Cell, Cell] | None:
    """The swap whose first wave does most for the goal (collect: the goal's tiles, a
    share of the others, specials made; break: blockers broken and hit), then clears
    most (a special made counts as 3 more tiles); for a score goal, the goal-blind
    greedy swap."""
    best, best_key = None, (-1.0, -1.0)
    for m in matching_swaps(board):
        first = first_wave(board, *m, colours)
        if first is None:
            continue
        pts = len(first.cleared) + 3 * len(first.created)
        key: tuple[float, float]
        if goal.kind == COLLECT:
            # the goal's tiles now, a share of what else clears (what falls in brings
            # the goal's colour as often as any other), and specials for later: a
            # colour bomb swapped with the goal's colour gathers all of it
            mine = phase_progress(goal, first)
            bombs = sum(1 for *_, sp in first.created if sp == BOMB)
            key = (mine + (len(first.cleared) - mine) / colours + 5 * bombs + (len(first.created) - bombs), pts)
        elif goal.kind == BREAK:
            key = (2 * len(first.broken) + len(first.hits), pts)
        else:
            key = (0, pts)
        if key > best_key:
            best, best_key = m, key
    return best


def blind_move(board: Board, colours: int) -> tuple[Cell, Cell] | None:
    from agent.games.match3.saga.levels import greedy_move

    return greedy_move(board, colours, np.random.default_rng(0))


def moves_to_goal(start: Board, colours: int, goal: Goal, rng: np.random.Generator, cap: int,
                  focused: bool = True) -> int | None:  # fmt: skip
    """Moves a player needs to meet `goal` from `start` (None: not within `cap`)."""
    board, got = start, 0
    for k in range(1, cap + 1):
        m = focused_move(board, colours, goal) if focused else blind_move(board, colours)
        if m is None:
            return None
        out = play(board, *m, colours, rng)
        assert out.board is not None
        board, got = out.board, got + outcome_progress(goal, out)
        if got >= goal.count:
            return k
    return None


def collected_in(start: Board, colours: int, goal: Goal, rng: np.random.Generator, moves: int,
                 focused: bool = True) -> int:  # fmt: skip
    """What a player gathers towards `goal` in `moves` moves."""
    board, got = start, 0
    for _ in range(moves):
        m = focused_move(board, colours, goal) if focused else blind_move(board, colours)
        if m is None:
            break
        out = play(board, *m, colours, rng)
        assert out.board is not None
        board, got = out.board, got + outcome_progress(goal, out)
    return got
