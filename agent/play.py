"""The play loop: capture -> settle -> read -> solve -> swipe -> check.

It never swipes on a board it did not read with confidence: it waits and re-reads, and
stops with a reason when the board stays unreadable.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Protocol

import numpy as np

from agent.loopstats import LoopStats

from agent.device.base import Device
from agent.device.clock import Clock
from agent.errors import AgentError
from agent.games.match3.board import Board, Move
from agent.games.match3.reader import BoardRead, read_board
from agent.games.match3.rules import Match3Config
from agent.games.match3.solver import Choice, Solver
from agent.games.match3.verify import Check, at_rest, check_outcome
from agent.journal import Journal
from agent.screenloop import ScreenLoop
from agent.vision.grid import cell_centers
from agent.vision.profile import GameProfile


class Status(Protocol):
    """What a game's header says, when the game has a reader for it."""

    steps: int | None
    score: int


StatusReader = Callable[[np.ndarray], Status | None]


@dataclass(frozen=True)
class PlayOptions:
    moves: int | None = None  # stop after this many swipes
    unreadable_timeout_s: float = 5.0  # stop when the board stays unreadable this long
    change_timeout_s: float = 1.0  # how long a swipe may take to show on screen
    max_failed_checks: int = 3  # consecutive moves that did not do what was predicted


@dataclass
class PlaySummary(LoopStats):
    moves: int = 0
    tiles_cleared: int = 0  # predicted and checked on screen (refill cascades not included)
    steps_gained: int = 0
    steps_spent: int = 0
    points: int = 0  # the same, in the game's points
    score: int | None = None  # the game's own score, when its header can be read
    steps_left: int | None = None
    stop_reason: str = ""
    game_over: bool = False


@dataclass(frozen=True)
class Pending:
    before: Board
    choice: Choice
    index: int
    at: float  # clock time of the swipe


def _swaps_after(choice: Choice) -> int:
    n, nxt = 0, choice.then
    while nxt is not None:
        n, nxt = n + 1, nxt.then
    return n


def swipe_points(profile: GameProfile, move: Move) -> tuple[int, int, int, int]:
    centers = cell_centers(profile.board_bbox, profile.rows, profile.cols)
    (r1, c1), (r2, c2) = move.cells()
    x1, y1 = (int(v) for v in centers[r1, c1])
    x2, y2 = (int(v) for v in centers[r2, c2])
    return x1, y1, x2, y2


class PlayLoop(ScreenLoop):
    def __init__(
        self,
        device: Device,
        profile: GameProfile,
        config: Match3Config,
        solver: Solver,
        clock: Clock,
        options: PlayOptions = PlayOptions(),
        journal: Journal | None = None,
        status_reader: StatusReader | None = None,
        on_move: Callable[[PlaySummary], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> None:
        self.device, self.profile, self.config, self.solver = device, profile, config, solver
        self.clock, self.options, self.journal = clock, options, journal
        self.status_reader, self.on_move = status_reader, on_move
        self.should_stop = should_stop  # asked before every capture: a farm's stop signal
        self.summary = PlaySummary()
        self.pending: Pending | None = None

    # -- helpers --------------------------------------------------------------
    def _stop(self, reason: str, game_over: bool = False) -> PlaySummary:
        if self.pending is not None:
            # The last swipe's result was never seen on a readable board (a game-over card
            # covers it, or the run was cut short): say so rather than count it.
            self.summary.checks["unverified"] += 1
            self._log("check", move_index=self.pending.index, verdict="unverified", detail=reason)
            self.pending = None
        self.summary.stop_reason = reason
        self.summary.game_over = game_over
        self._log("stop", reason=reason, game_over=game_over, summary=self.summary.as_dict())
        return self.summary

    def _record_check(self, pending: Pending, read: BoardRead) -> Check:
        check = check_outcome(pending.before, pending.choice, read.board)
        self.summary.checks[check.verdict] += 1
        self._log(
            "check", move_index=pending.index, verdict=check.verdict, known=check.known_cells,
            agreeing=check.agreeing, detail=check.detail, board=str(read.board),
        )
        return check

    # -- the loop -------------------------------------------------------------
    def run(self) -> PlaySummary:
        try:
            return self._run()
        except KeyboardInterrupt:
            return self._stop("interrupted (Ctrl-C)")
        except AgentError as exc:
            # The device failed (killed, unplugged, hung): the journal still ends with why.
            self._stop(f"device error: {exc}")
            raise

    def _run(self) -> PlaySummary:
        s, opt = self.summary, self.options
        failed_checks = 0
        unreadable_since: float | None = None
        while True:
            if self.should_stop is not None and self.should_stop():
                return self._stop("stopped on request")
            frame, still = self._settle()
            t_read = time.perf_counter()
            read = read_board(frame, self.profile) if still else None
            status = self.status_reader(frame) if self.status_reader else None
            if status is not None:
                s.score, s.steps_left = status.score, status.steps
            if read is None or not read.confident:
                if status is not None and status.steps == 0:
                    return self._stop("game over: no steps (or moves) left", game_over=True)
                now = self.clock.now()
                unreadable_since = now if unreadable_since is None else unreadable_since
                if now - unreadable_since >= opt.unreadable_timeout_s:
                    why = "the board never stopped moving" if read is None else (
                        f"{read.reading.unknown_count} cells unknown, lowest confidence {read.min_confidence:.2f}"
                    )
                    return self._stop(
                        f"board not readable for {opt.unreadable_timeout_s:.0f} s ({why}): "
                        "a game-over screen, a dialog, or a profile that does not fit this screen"
                    )
                self._log("unreadable", board=str(read.board) if read else None)
                self.clock.sleep(self.profile.settle.poll_ms / 1000.0)
                continue
            unreadable_since = None
            if self.pending is not None and not at_rest(self.pending.before, read.board):
                if self.clock.now() - self.pending.at > self.profile.settle.timeout_s:
                    return self._stop(
                        f"the board did not come to rest within {self.profile.settle.timeout_s:.0f} s of move "
                        f"{self.pending.index} (it still shows 3 in a row or new holes)"
                    )
                self._log("moving", board=str(read.board))
                self.clock.sleep(self.profile.settle.poll_ms / 1000.0)
                continue
            pending, self.pending = self.pending, None
            planned: Choice | None = None  # the next swap of a multi-swap plan under way
            if pending is not None:
                check = self._record_check(pending, read)
                failed_checks = 0 if check.ok else failed_checks + 1
                if check.verdict == "as_predicted":
                    # Verified with the rest of the plan before its first swap; any surprise
                    # on screen drops the plan and the solver decides afresh.
                    planned = pending.choice.next_on(read.board)
                if check.ok:
                    s.tiles_cleared += pending.choice.tiles_cleared
                    s.steps_gained += pending.choice.steps_gained
                    s.points += pending.choice.points
                if failed_checks >= opt.max_failed_checks:
                    return self._stop(
                        f"{failed_checks} moves in a row did not do what the rules predicted "
                        f"(last: {check.detail}): check the profile's board box and the game variant"
                    )
            if opt.moves is not None and s.moves >= opt.moves:
                return self._stop(f"move limit reached ({opt.moves})")
            if status is not None and status.steps == 0:
                return self._stop("game over: no steps (or moves) left", game_over=True)
            choice = planned if planned is not None else self.solver.choose(self.config, read.board)
            if choice is None:
                over = self.config.variant == "classic"
                return self._stop("game over: no swap makes a match" if over else "no legal swap", game_over=over)
            decide_ms = (time.perf_counter() - t_read) * 1000.0
            x1, y1, x2, y2 = swipe_points(self.profile, choice.move)
            self.device.swipe(x1, y1, x2, y2, self.profile.swipe_ms)
            s.moves += 1
            s.steps_spent += choice.steps_spent
            s.decision_ms.append(decide_ms)
            self._log(
                "decision", index=s.moves, board=str(read.board), min_confidence=round(read.min_confidence, 3),
                move=str(choice.move), swipe=[x1, y1, x2, y2], predicted_cleared=choice.tiles_cleared,
                predicted_gain=choice.steps_gained, decide_ms=round(decide_ms, 3), settle_s=round(s.settle_s[-1], 4),
                plan_step=planned is not None, plan_swaps_left=_swaps_after(choice),
            )
            self.pending = Pending(read.board, choice, s.moves, self.clock.now())
            self._wait_for_change(frame)
            if self.on_move:
                self.on_move(s)
