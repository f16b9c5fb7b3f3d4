"""Match-3 solvers. `GreedySolver` tries every adjacent swap with the rules engine.

Only what can be known is scored: the swap's clears and the cascades that happen before
any new tile drops in (`rng=None`), since the phone draws refills we cannot see coming.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from agent.games.match3.board import Board, Move
from agent.games.match3.rules import GameState, Match3Config, apply_move, legal_moves


@dataclass(frozen=True)
class Choice:
    move: Move
    tiles_cleared: int
    steps_gained: int
    steps_spent: int
    points: int
    objective: tuple[int, ...]  # larger is better; compared lexicographically
    predicted: Board  # the board after the predictable part (EMPTY where tiles will drop in)
    # A multi-swap plan's next swap, verified before the first one was made; it is taken
    # only if this swap left the board exactly as predicted.
    then: "Choice | None" = None

    def next_on(self, board: Board) -> "Choice | None":
        """The plan's next swap if `board` is exactly what this swap should have left."""
        return self.then if self.then is not None and board == self.predicted else None


class Solver(Protocol):
    name: str

    def choose(self, config: Match3Config, board: Board) -> Choice | None: ...


def evaluate(config: Match3Config, board: Board, move: Move) -> Choice:
    state = GameState(board=board, steps_left=max(1, config.start_steps))
    out = apply_move(config, state, move, rng=None)
    predicted = out.phases[-1].refilled if out.phases else (out.swapped if out.applied else board)
    objective: tuple[int, ...]
    if config.variant == "step":
        objective = (out.steps_gained - out.steps_spent, out.tiles_cleared, out.points)
    else:
        objective = (out.points, out.tiles_cleared)
    return Choice(move, out.tiles_cleared, out.steps_gained, out.steps_spent, out.points, objective, predicted)


def candidate_moves(config: Match3Config, board: Board) -> list[Move]:
    # Judge legality on the board as read, not on a game we cannot see (steps left etc.).
    state = GameState(board=board, steps_left=1, moves_made=0)
    # Swapping two equal tiles is legal but changes nothing on screen, so it can be neither
    # useful nor checked.
    return [m for m in legal_moves(config, state) if board[m.cells()[0]] != board[m.other]]


class GreedySolver:
    """The best single swap by the variant's objective; ties go to the first swap in
    reading order, so the choice is deterministic."""

    name = "greedy"

    def rank(self, config: Match3Config, board: Board) -> list[Choice]:
        choices = [evaluate(config, board, m) for m in candidate_moves(config, board)]
        # Stable sort keeps reading order among equal objectives.
        return sorted(choices, key=lambda c: c.objective, reverse=True)

    def choose(self, config: Match3Config, board: Board) -> Choice | None:
        ranked = self.rank(config, board)
        return ranked[0] if ranked else None


class RandomSolver:
    """A legal swap at random: the baseline benchmarks compare against."""

    name = "random"

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def choose(self, config: Match3Config, board: Board) -> Choice | None:
        moves = candidate_moves(config, board)
        if not moves:
            return None
        return evaluate(config, board, moves[int(self.rng.integers(0, len(moves)))])


SOLVERS = ("plan", "greedy", "random")


def make_solver(name: str, seed: int = 0) -> Solver:
    if name == "plan":
        from agent.games.match3.plan_solver import PlanSolver  # loads the plan library

        solver = PlanSolver()
        _ = solver.index  # the library is read (and refused, if broken) now, before any journal opens
        return solver
    if name == "greedy":
        return GreedySolver()
    if name == "random":
        return RandomSolver(np.random.default_rng(seed))
    raise ValueError(f"unknown solver {name!r}: choose one of {', '.join(SOLVERS)}")
