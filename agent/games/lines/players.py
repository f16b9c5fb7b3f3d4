"""Players: random, greedy (clear if possible, else random) and the search player.

Every player answers `choose(position, rng) -> Move | None` (None: no move left). The
search player scores every move with `Evaluator` (line potential kept or built), takes
the best line-clearing move when one is good, and otherwise ranks the rest by worth,
how many cells the move cuts off from the largest empty region, and — within its time
budget — an expectation over the balls that will land, sampled from the preview when
the variant shows one and from the colour distribution otherwise.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from agent.games.lines.board import EMPTY, Position
from agent.games.lines.config import LinesConfig
from agent.games.lines.evaluate import Evaluator, MoveTable, fragmentation
from agent.games.lines.rules import Move, clear_lines, draw_balls


class Player(Protocol):
    name: str

    def choose(self, position: Position, rng: np.random.Generator) -> Move | None: ...


def _move(s: int, d: int, cols: int) -> Move:
    return Move(divmod(int(s), cols), divmod(int(d), cols))


def _random_move(legal: np.ndarray, cols: int, rng: np.random.Generator) -> Move | None:
    pairs = np.flatnonzero(legal.ravel())
    if pairs.size == 0:
        return None
    s, d = divmod(int(rng.choice(pairs)), legal.shape[1])
    return _move(s, d, cols)


@dataclass
class RandomPlayer:
    config: LinesConfig
    name: str = "random"
    _ev: Evaluator = field(init=False)

    def __post_init__(self) -> None:
        c = self.config
        self._ev = Evaluator(c.rows, c.cols, c.colors, c.line_length)

    def choose(self, position: Position, rng: np.random.Generator) -> Move | None:
        return _random_move(self._ev.reach(position.board), self.config.cols, rng)


@dataclass
class GreedyPlayer:
    config: LinesConfig
    name: str = "greedy"
    _ev: Evaluator = field(init=False)

    def __post_init__(self) -> None:
        c = self.config
        self._ev = Evaluator(c.rows, c.cols, c.colors, c.line_length)

    def choose(self, position: Position, rng: np.random.Generator) -> Move | None:
        table = self._ev.table(position.board)
        if table.clears.any():
            return _random_move(table.clears, self.config.cols, rng)
        return _random_move(table.legal, self.config.cols, rng)


@dataclass(frozen=True)
class SearchWeights:
    # Each ball on the board costs this much worth. Tuned on the bench: at 12 the player
    # hoards balls to build long lines and the seed game lasts ~100 turns; at 25 it clears
    # as soon as it can and outlives the 3,000-turn cap.
    ball: float = 25.0
    cut_off: float = 4.0  # each empty cell outside the largest empty region
    region: float = 2.0  # each empty region beyond the first
    spawn_samples: int = 3  # spawn draws per candidate in the lookahead
    candidates: int = 4  # candidates that get the lookahead
    shortlist: int = 16  # candidates that get the connectivity check


@dataclass
class SearchPlayer:
    """The strong player. `budget_ms` bounds the lookahead per move (0: none)."""

    config: LinesConfig
    budget_ms: float = 12.0
    weights: SearchWeights = SearchWeights()
    name: str = "player"
    _ev: Evaluator = field(init=False)

    def __post_init__(self) -> None:
        c = self.config
        self._ev = Evaluator(c.rows, c.cols, c.colors, c.line_length)

    # -- one position, no lookahead ---------------------------------------------------
    def _static(self, board: np.ndarray, worth: float | None = None) -> float:
        w = self.weights
        cut, regions = fragmentation(board)
        balls = int((board != EMPTY).sum())
        if worth is None:
            worth = self._ev.worth(board)
        return worth - w.ball * balls - w.cut_off * cut - w.region * max(0, regions - 1)

    def _ranked(self, board: np.ndarray, table: MoveTable) -> list[tuple[float, int, int, np.ndarray | None]]:
        """Candidates as (value, s, d, board after a clearing move or None), best first."""
        w = self.weights
        out: list[tuple[float, int, int, np.ndarray | None]] = []
        for s, d in zip(*np.nonzero(table.clears)):
            after = board.copy()
            after.flat[d], after.flat[s] = after.flat[s], EMPTY
            clear_lines(after, self.config)
            out.append((self._static(after), int(s), int(d), after))
        plain = table.legal & ~table.clears
        if plain.any():
            score = np.where(plain, table.delta, -np.inf).ravel()
            k = min(w.shortlist, int(plain.sum()))
            top = np.argpartition(-score, k - 1)[:k]
            balls = int((board != EMPTY).sum())
            # The balls about to land cost the same whatever non-clearing move is made.
            base = table.worth - w.ball * (balls + self.config.spawn_count)
            for idx in top:
                s, d = divmod(int(idx), board.size)
                after = board.copy()
                after.flat[d], after.flat[s] = after.flat[s], EMPTY
                cut, regions = fragmentation(after)
                value = base + score[idx] - w.cut_off * cut - w.region * max(0, regions - 1)
                out.append((value, s, d, None))
        out.sort(key=lambda t: (-t[0], t[1], t[2]))
        return out

    def _best_value(self, board: np.ndarray) -> float:
        """Worth of the best move from `board` (no further lookahead)."""
        if not (board == EMPTY).any():
            return -1e6
        ranked = self._ranked(board, self._ev.table(board))
        return ranked[0][0] if ranked else self._static(board)

    # -- choosing ------------------------------------------------------------------------
    def choose(self, position: Position, rng: np.random.Generator) -> Move | None:
        start = time.perf_counter()
        board = np.asarray(position.board)
        table = self._ev.table(board)
        ranked = self._ranked(board, table)
        if not ranked:
            return None
        cols = self.config.cols
        best = ranked[0]
        if best[3] is not None or self.budget_ms <= 0:
            return _move(best[1], best[2], cols)
        # Lookahead over the balls that land after a non-clearing move.
        w = self.weights
        deadline = start + self.budget_ms / 1000.0
        candidates = [(s, d) for _, s, d, after in ranked[: w.candidates] if after is None]
        if len(candidates) < 2:
            return _move(best[1], best[2], cols)
        totals = np.zeros(len(candidates))
        rounds = 0
        # Common random numbers: in one round every candidate meets the same draw, so the
        # comparison is not drowned by the luck of the draw; a round cut short by the
        # deadline is dropped for the same reason.
        for seed in rng.integers(0, 2**63 - 1, size=w.spawn_samples).tolist():
            values = []
            for s, d in candidates:
                if time.perf_counter() > deadline:
                    break
                after = board.copy()
                after.flat[d], after.flat[s] = after.flat[s], EMPTY
                self._land(after, position.next_balls, np.random.default_rng(seed))
                values.append(self._best_value(after))
            if len(values) < len(candidates):
                break
            totals += values
            rounds += 1
        if rounds == 0:
            return _move(best[1], best[2], cols)
        s, d = candidates[int(np.argmax(totals))]
        return _move(s, d, cols)

    def _land(self, board: np.ndarray, preview: tuple[int, ...], rng: np.random.Generator) -> None:
        cfg = self.config
        balls = preview or draw_balls(cfg, rng, cfg.spawn_count)
        empties = np.flatnonzero(board.ravel() == EMPTY)
        n = min(len(balls), len(empties))
        if n:
            cells = rng.choice(empties, size=n, replace=False)
            board.flat[cells] = balls[:n]
            clear_lines(board, cfg)


PLAYERS = ("random", "greedy", "player")


def make_player(name: str, config: LinesConfig, budget_ms: float = 12.0) -> Player:
    if name == "random":
        return RandomPlayer(config)
    if name == "greedy":
        return GreedyPlayer(config)
    if name == "player":
        return SearchPlayer(config, budget_ms=budget_ms)
    raise ValueError(f"unknown player {name!r}: choose one of {', '.join(PLAYERS)}")
