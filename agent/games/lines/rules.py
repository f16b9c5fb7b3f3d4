"""The game: moves, line removal, spawning, scoring, game over. Pure given a seeded rng.

Order of a turn (as the issue asks): move the ball along a path; remove the lines that
move made; if it removed nothing, the previewed balls land on random empty cells and
the lines they made are removed in turn. New balls also land when a move empties the
board, so a game never stalls. The game is over when no empty cell is left.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from agent.errors import AgentError
from agent.games.lines.board import EMPTY, UNKNOWN, WILD, Position
from agent.games.lines.config import LinesConfig
from agent.games.lines.linefind import find_lines
from agent.games.lines.paths import Cell, shortest_path


class IllegalMoveError(AgentError, ValueError):
    hint = "move a ball (not an empty cell) to an empty cell reachable through empty cells"


@dataclass(frozen=True)
class Move:
    src: Cell
    dst: Cell

    def __str__(self) -> str:
        return f"{self.src[0]},{self.src[1]}->{self.dst[0]},{self.dst[1]}"


@dataclass(frozen=True)
class Outcome:
    move: Move
    path: tuple[Cell, ...]
    removed_by_move: int
    spawned: tuple[tuple[int, int, int], ...]  # (row, col, value)
    removed_by_spawn: int
    points: int
    over: bool

    @property
    def removed(self) -> int:
        return self.removed_by_move + self.removed_by_spawn


def draw_balls(config: LinesConfig, rng: np.random.Generator, n: int) -> tuple[int, ...]:
    colours = rng.integers(1, config.colors + 1, size=n)
    if config.wildcard and config.wildcard_weight > 0:
        wild = rng.random(n) < config.wildcard_weight
        colours = np.where(wild, WILD, colours)
    return tuple(int(v) for v in colours)


def clear_lines(board: np.ndarray, config: LinesConfig) -> int:
    """Remove every line in place; return how many balls went."""
    mask = find_lines(board, config.line_length)
    n = int(mask.sum())
    if n:
        board[mask] = EMPTY
    return n


@dataclass
class LinesGame:
    """One game. `rng` drives every random choice, so a seed replays the game exactly."""

    config: LinesConfig
    rng: np.random.Generator
    board: np.ndarray = field(init=False)
    next_balls: tuple[int, ...] = field(init=False)
    score: int = 0
    turns: int = 0
    removed: int = 0
    over: bool = False

    def __post_init__(self) -> None:
        cfg = self.config
        self.board = np.zeros((cfg.rows, cfg.cols), dtype=np.int8)
        self.next_balls = draw_balls(cfg, self.rng, cfg.initial_balls)
        self._spawn()
        clear_lines(self.board, cfg)  # a lucky start with a line in it starts without it
        self.next_balls = draw_balls(cfg, self.rng, cfg.spawn_count)

    @classmethod
    def new(cls, config: LinesConfig, seed: int) -> "LinesGame":
        return cls(config, np.random.default_rng(seed))

    @classmethod
    def from_position(cls, config: LinesConfig, position: Position, rng: np.random.Generator) -> "LinesGame":
        """A game that continues from `position` (previewed balls kept if given)."""
        game = cls.__new__(cls)
        game.config, game.rng = config, rng
        b = np.array(position.board, dtype=np.int8)
        if b.shape != (config.rows, config.cols):
            raise IllegalMoveError(f"board is {b.shape[0]}x{b.shape[1]}, the game is {config.rows}x{config.cols}")
        if (b == UNKNOWN).any():
            raise IllegalMoveError("the board has unknown cells ('?')", "read the board again before playing")
        game.board = b
        game.next_balls = position.next_balls or draw_balls(config, rng, config.spawn_count)
        game.score, game.turns, game.removed = position.score, 0, 0
        game.over = not (b == EMPTY).any()
        return game

    # -- what a player sees -------------------------------------------------
    def position(self) -> Position:
        return Position(self.board.copy(), self.next_balls if self.config.preview else (), self.score)

    def path_for(self, move: Move) -> list[Cell]:
        rows, cols = self.board.shape
        for name, (r, c) in (("from", move.src), ("to", move.dst)):
            if not (0 <= r < rows and 0 <= c < cols):
                raise IllegalMoveError(f"{name} cell {r},{c} is off the {rows}x{cols} board")
        if self.board[move.src] == EMPTY:
            raise IllegalMoveError(f"there is no ball at {move.src[0]},{move.src[1]}")
        if self.board[move.dst] != EMPTY:
            raise IllegalMoveError(f"cell {move.dst[0]},{move.dst[1]} is not empty")
        path = shortest_path(self.board, move.src, move.dst)
        if path is None:
            raise IllegalMoveError(f"no path of empty cells from {move.src} to {move.dst}")
        return path

    # -- playing --------------------------------------------------------------
    def play(self, move: Move) -> Outcome:
        if self.over:
            raise IllegalMoveError("the game is over", "start a new game")
        path = self.path_for(move)
        b = self.board
        b[move.dst], b[move.src] = b[move.src], EMPTY
        by_move = clear_lines(b, self.config)
        spawned: tuple[tuple[int, int, int], ...] = ()
        by_spawn = 0
        points = self.config.points(by_move)
        if by_move == 0 or not b.any():
            spawned = self._spawn()
            by_spawn = clear_lines(b, self.config)
            points += self.config.points(by_spawn)
            self.next_balls = draw_balls(self.config, self.rng, self.config.spawn_count)
        self.turns += 1
        self.removed += by_move + by_spawn
        self.score += points
        self.over = not (b == EMPTY).any()
        return Outcome(move, tuple(path), by_move, spawned, by_spawn, points, self.over)

    def _spawn(self) -> tuple[tuple[int, int, int], ...]:
        empties = np.flatnonzero(self.board.ravel() == EMPTY)
        n = min(len(self.next_balls), len(empties))
        cells = self.rng.choice(empties, size=n, replace=False) if n else np.array([], dtype=int)
        cols = self.board.shape[1]
        out = []
        for idx, v in zip(cells.tolist(), self.next_balls):
            r, c = divmod(int(idx), cols)
            self.board[r, c] = v
            out.append((r, c, v))
        return tuple(out)
