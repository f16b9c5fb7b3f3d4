"""Playing Color Lines on a phone: settle -> read -> choose -> tap ball, tap cell -> check.

The discipline of the match-3 loop: never act on a board not read with confidence
(wait and re-read, stop with a reason if it stays unreadable), and after every move
check on the next still frame that the ball moved (or the predicted line vanished).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from agent.loopstats import LoopStats

from agent.device.base import Device
from agent.device.clock import Clock
from agent.games.lines.board import EMPTY, WILD, Position, format_board
from agent.games.lines.config import LinesConfig
from agent.games.lines.linefind import find_lines
from agent.games.lines.players import Player
from agent.games.lines.reader import LinesRead, read_board
from agent.games.lines.rules import Move
from agent.journal import Journal
from agent.screenloop import ScreenLoop
from agent.vision.grid import cell_centers
from agent.vision.profile import GameProfile


@dataclass(frozen=True)
class LinesPlayOptions:
    moves: int | None = None
    unreadable_timeout_s: float = 5.0
    tap_gap_s: float = 0.08  # between the two taps of a move, as a finger would
    max_failed_checks: int = 3


@dataclass
class LinesPlaySummary(LoopStats):
    moves: int = 0
    balls_removed: int = 0  # by the agent's moves, predicted and seen on screen
    stop_reason: str = ""
    game_over: bool = False


def predict(board: np.ndarray, move: Move, config: LinesConfig) -> tuple[np.ndarray, np.ndarray]:
    """The board right after `move` and its lines are resolved (before any new balls),
    and the mask of the balls the move removes."""
    after = board.copy()
    after[move.dst], after[move.src] = after[move.src], EMPTY
    gone = find_lines(after, config.line_length)
    after[gone] = EMPTY
    return after, gone


def check_move(before: np.ndarray, move: Move, observed: np.ndarray, config: LinesConfig) -> str:
    """"moved", "cleared", or why the screen does not show the move."""
    expected, gone = predict(before, move, config)
    if np.array_equal(observed, before):
        return "nothing happened"
    if gone.any():
        if expected.any():  # the board is not empty, so no new balls: exact
            return "cleared" if np.array_equal(observed, expected) else "line not cleared as predicted"
        return "cleared" if (observed[gone] == EMPTY).all() else "line not cleared as predicted"
    new = (expected == EMPTY) & (observed != EMPTY)
    lost = (expected != EMPTY) & (observed == EMPTY)
    both = (expected != EMPTY) & (observed != EMPTY)
    if (observed[both] != expected[both]).any():
        return "balls changed colour"
    if int(new.sum()) > config.spawn_count:
        return f"{int(new.sum())} new balls, at most {config.spawn_count} expected"
    # Balls may only vanish when new balls completed a line with them; then at least one
    # new ball went with the line, and the balls that went share one colour.
    if lost.any():
        colours = set(np.unique(expected[lost]).tolist()) - {WILD}
        if int(new.sum()) >= config.spawn_count or len(colours) > 1:
            return "ball not at its destination" if lost[move.dst] else "balls vanished"
    return "moved"


class LinesPlayLoop(ScreenLoop):
    def __init__(
        self, device: Device, profile: GameProfile, config: LinesConfig, player: Player, clock: Clock,
        options: LinesPlayOptions = LinesPlayOptions(), journal: Journal | None = None, seed: int = 0,
        on_move: Callable[[LinesPlaySummary], None] | None = None,
    ) -> None:
        self.device, self.profile, self.config, self.player = device, profile, config, player
        self.clock, self.options, self.journal, self.on_move = clock, options, journal, on_move
        self.rng = np.random.default_rng(seed)
        self.summary = LinesPlaySummary()
        self._centers = cell_centers(profile.board_bbox, profile.rows, profile.cols)

    def _read(self) -> LinesRead | None:
        """A confident read of a still board, or None after the unreadable timeout."""
        p = self.profile
        start = self.clock.now()
        while True:
            frame, still = self._settle()
            read = read_board(frame, p)
            if read.confident and still:
                return read
            self._log("unreadable", unknown=int((read.board < 0).sum()), min_confidence=read.min_confidence)
            if self.clock.now() - start >= self.options.unreadable_timeout_s:
                return None
            self.clock.sleep(0.2)

    def _tap_cell(self, cell: tuple[int, int]) -> None:
        x, y = (int(v) for v in self._centers[cell])
        self.device.tap(x, y)

    def run(self) -> LinesPlaySummary:
        s, opts = self.summary, self.options
        pending: tuple[np.ndarray, Move] | None = None
        failed = 0
        while True:
            read = self._read()
            if read is None:
                s.stop_reason = "board not readable with confidence"
                break
            board = read.board
            if pending is not None:
                before, move = pending
                result = check_move(before, move, board, self.config)
                s.checks[result] += 1
                self._log("check", move=str(move), result=result)
                if result in ("moved", "cleared"):
                    failed = 0
                    if result == "cleared":
                        s.balls_removed += int(predict(before, move, self.config)[1].sum())
                else:
                    failed += 1
                    if failed >= opts.max_failed_checks:
                        s.stop_reason = f"{failed} moves in a row did not show as predicted ({result})"
                        break
            if not (board == EMPTY).any():
                s.stop_reason, s.game_over = "game over (board full)", True
                break
            if opts.moves is not None and s.moves >= opts.moves:
                s.stop_reason = f"move limit ({opts.moves})"
                break
            t0 = time.perf_counter()
            move = self.player.choose(Position(board), self.rng)
            s.decision_ms.append(1000.0 * (time.perf_counter() - t0))
            if move is None:
                s.stop_reason, s.game_over = "no move left", True
                break
            self._log("move", move=str(move), board=format_board(board), decision_ms=round(s.decision_ms[-1], 2))
            self._tap_cell(move.src)
            self.clock.sleep(opts.tap_gap_s)
            self._tap_cell(move.dst)
            pending = (board, move)
            s.moves += 1
            if self.on_move is not None:
                self.on_move(s)
        self._log("stop", reason=s.stop_reason, moves=s.moves)
        return s
