"""The play loop, one for every game: settle -> read -> decide -> gestures -> check.

It never acts on a board it did not read with confidence: it waits and re-reads, and
stops with a reason when the board stays unreadable. After every move it waits for the
screen to change, and on the next still board it asks the game's player whether the
screen did what the rules predicted; a few failed checks in a row stop the run. It
stops at once on Ctrl-C or a stop signal (SIGTERM, SIGHUP: `agent.signals`), and on a
farm's stop request between two moves; a device error, or a bug, ends the journal with
a stop line before it propagates. What a move is, and what counts as the game being
over, is the game's business (`agent.games.base`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic

import numpy as np

from agent import signals
from agent.device.base import Device
from agent.device.clock import Clock
from agent.errors import AgentError
from agent.games.base import (
    BoardRead,
    BoardT,
    Check,
    Decision,
    Game,
    MoveT,
    NoMove,
    Player,
    Status,
    StatusReader,
    gesture_json,
    perform,
)
from agent.play.journal import Journal
from agent.play.stats import PlaySummary, StopKind
from agent.vision.profile import GameProfile
from agent.vision.settle import wait_for_change, wait_until_still


@dataclass(frozen=True)
class PlayOptions:
    moves: int | None = None  # stop after this many moves
    unreadable_timeout_s: float = 5.0  # stop when the board stays unreadable this long
    change_timeout_s: float = 1.0  # how long a move may take to show on screen
    max_failed_checks: int = 3  # moves in a row that did not do what was predicted


@dataclass(frozen=True)
class _Pending(Generic[BoardT, MoveT]):
    before: BoardT
    decision: Decision[MoveT]
    index: int
    at: float  # clock time of the move


class PlayLoop(Generic[BoardT, MoveT]):
    def __init__(
        self,
        device: Device,
        game: Game[BoardT, MoveT],
        profile: GameProfile,
        player: Player[BoardT, MoveT],
        clock: Clock,
        options: PlayOptions = PlayOptions(),
        journal: Journal | None = None,
        status_reader: StatusReader | None = None,
        on_move: Callable[[PlaySummary], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> None:
        if game.screen is None:
            raise ValueError(f"{game.name} is not played on a screen")
        self.device, self.game, self.screen, self.profile = device, game, game.screen, profile
        self.player, self.clock, self.options, self.journal = player, clock, options, journal
        self.status_reader, self.on_move = status_reader, on_move
        self.should_stop = should_stop  # asked before every capture: a farm's stop signal
        self.summary = PlaySummary(game=game.name)
        self.pending: _Pending[BoardT, MoveT] | None = None
        self.stopped = False  # the stop line is written: the run is over, whatever comes after

    # -- the journal and the screen ---------------------------------------------------
    def _log(self, event: str, **fields: object) -> None:
        if self.journal is not None:
            self.journal.write(event, t=round(self.clock.now(), 4), **fields)

    def _settle(self) -> tuple[np.ndarray, bool]:
        """A frame once the board is still (or the settle timeout passed), and whether it is."""
        p = self.profile
        s = wait_until_still(self.device.screencap, p.board_bbox, p.rows, p.cols, self.clock, p.settle)
        self.summary.settle_s.append(s.waited_s)
        return s.frame, s.still

    def _wait_for_change(self, before: np.ndarray) -> bool:
        p = self.profile
        return wait_for_change(self.device.screencap, before, p.board_bbox, p.rows, p.cols, self.clock, p.settle,
                               self.options.change_timeout_s)  # fmt: skip

    def _pause(self) -> None:
        self.clock.sleep(self.profile.settle.poll_ms / 1000.0)

    # -- stopping -------------------------------------------------------------------------
    def _stop(self, reason: str, kind: StopKind, finished: bool = False, signum: int | None = None) -> PlaySummary:
        s = self.summary
        # Whole or not at all: a signal now waits until the stop line is written.
        with signals.deferred():
            if self.pending is not None:
                # The last move's result was never seen on a readable board (a game-over card
                # covers it, or the run was cut short): say so rather than count it.
                s.checks["unverified"] += 1
                self._log("check", index=self.pending.index, verdict="unverified", detail=reason)
                self.pending = None
            s.counts = self.player.counts()
            s.stop_reason, s.stop_kind, s.finished, s.stop_signal = reason, kind, finished, signum
            self._log("stop", reason=reason, kind=kind, finished=finished, summary=s.as_dict(),
                      **({} if signum is None else {"signal": signals.name(signum)}))  # fmt: skip
            self.stopped = True
        return s

    def _record_check(self, pending: _Pending[BoardT, MoveT], read: BoardRead[BoardT]) -> Check:
        check = self.player.check(pending.before, pending.decision, read.board)
        self.summary.checks[check.verdict] += 1
        if check.verdict == "rules_changed":
            self._log("rules", index=pending.index, detail=check.detail, **check.fields)
        self._log("check", index=pending.index, verdict=check.verdict, detail=check.detail, board=read.text,
                  **check.fields)  # fmt: skip
        return check

    def _status(self, frame: np.ndarray) -> Status | None:
        status = self.status_reader(frame) if self.status_reader is not None else None
        if status is not None:
            self.summary.score, self.summary.moves_left = status.score, status.moves_left
        return status

    # -- the loop -------------------------------------------------------------------------
    def run(self) -> PlaySummary:
        try:
            # However the caller defers signals, the loop itself stops at once on one.
            with signals.allowed():
                return self._run()
        except KeyboardInterrupt as exc:
            if self.stopped:
                return self.summary  # it came after the stop line: the run had ended by itself
            signum = signals.signal_of(exc)
            return self._stop(signals.reason(signum), "interrupted", signum=signum)
        except AgentError as exc:
            # The device failed (killed, unplugged, hung): the journal still ends with why.
            if not self.stopped:
                self._stop(f"device error: {exc}", "device_error")
            raise
        except Exception as exc:
            # A bug: it keeps its traceback, and the journal still says how the run ended.
            if not self.stopped:
                self._stop(f"error: {type(exc).__name__}: {exc}", "crashed")
            raise

    def _run(self) -> PlaySummary:
        s, opt = self.summary, self.options
        failed_checks = 0
        unreadable_since: float | None = None
        while True:
            if self.should_stop is not None and self.should_stop():
                return self._stop("stopped on request", "requested")
            frame, still = self._settle()
            t_read = time.perf_counter()
            read = self.screen.read(frame, self.profile) if still else None
            status = self._status(frame)
            game_over = status is not None and status.moves_left == 0
            if read is None or not read.confident:
                if game_over:
                    return self._stop("game over: no moves left", "finished", finished=True)
                now = self.clock.now()
                unreadable_since = now if unreadable_since is None else unreadable_since
                if now - unreadable_since >= opt.unreadable_timeout_s:
                    why = "the board never stopped moving" if read is None else (
                        f"{len(read.unknown_cells)} cells unknown, lowest confidence {read.min_confidence:.2f}"
                    )  # fmt: skip
                    return self._stop(
                        f"board not readable for {opt.unreadable_timeout_s:.0f} s ({why}): "
                        "a game-over screen, a dialog, or a profile that does not fit this screen",
                        "unreadable",
                    )
                self._log("unreadable", board=read.text if read else None)
                self._pause()
                continue
            unreadable_since = None
            if self.pending is not None and not self.player.at_rest(self.pending.before, read.board):
                if self.clock.now() - self.pending.at > self.profile.settle.timeout_s:
                    return self._stop(
                        f"the board did not come to rest within {self.profile.settle.timeout_s:.0f} s of move "
                        f"{self.pending.index}", "not_at_rest",
                    )  # fmt: skip
                self._log("moving", board=read.text)
                self._pause()
                continue
            pending, self.pending = self.pending, None
            if pending is not None:
                check = self._record_check(pending, read)
                failed_checks = 0 if check.ok else failed_checks + 1
                if failed_checks >= opt.max_failed_checks:
                    return self._stop(
                        f"{failed_checks} moves in a row did not do what the rules predicted "
                        f"(last: {check.verdict}{': ' + check.detail if check.detail else ''}): "
                        "check the profile's board box, and that the game plays by the rules the agent assumes",
                        "failed_checks",
                    )
            if s.first_board is None:
                s.first_board = read.text
            over = self.player.finished(read.board)
            if over is not None:
                return self._stop(over, "finished", finished=True)
            if opt.moves is not None and s.moves >= opt.moves:
                return self._stop(f"move limit reached ({opt.moves})", "limit")
            if game_over:
                return self._stop("game over: no moves left", "finished", finished=True)
            decision = self.player.decide(read.board)
            if isinstance(decision, NoMove):
                return self._stop(decision.reason, "finished" if decision.finished else "stuck",
                                  finished=decision.finished)  # fmt: skip
            decide_ms = (time.perf_counter() - t_read) * 1000.0
            gestures = self.screen.gestures(decision.move, self.profile)
            perform(self.device, gestures, self.clock)
            # A move made is counted, journaled and awaited together: a signal waits for all three.
            with signals.deferred():
                s.moves += 1
                s.decision_ms.append(decide_ms)
                self._log(
                    "decision", index=s.moves, board=read.text, min_confidence=round(read.min_confidence, 3),
                    move=decision.text, gestures=gesture_json(gestures), decide_ms=round(decide_ms, 3),
                    settle_s=round(s.settle_s[-1], 4), plan_step=decision.continues_plan, **decision.fields,
                )  # fmt: skip
                self.pending = _Pending(read.board, decision, s.moves, self.clock.now())
            self._wait_for_change(frame)
            if self.on_move is not None:
                s.counts = self.player.counts()
                self.on_move(s)

