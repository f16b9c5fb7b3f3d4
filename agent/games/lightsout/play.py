"""Playing Lights Out on a phone: capture -> settle -> read -> solve -> tap -> check.

The same discipline as the match-3 loop (`agent.play`): it never taps on a board it did
not read with confidence, and after every tap it waits for the screen to change, reads
the board again and checks that exactly the lights the rules predict have toggled.
Each decision solves from the board just read, for the fewest presses; when every check
passes, that is the first read's minimum plan played one press at a time.

The game's rule is assumed to be plain Lights Out (a press toggles its cell and its
four neighbours) on the profile's grid. Two things can change that: a tap that toggles
exactly what the torus variant would (the loop switches rules and carries on), and a
board the plain rule cannot solve but the torus can (a game only deals boards its rule
solves, so the loop tries the torus and lets the next taps' checks confirm it). Any
other surprise counts as a failed check, and a few in a row stop the run with the reason.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from agent.loopstats import LoopStats

from agent.device.base import Device
from agent.device.clock import Clock
from agent.games.lightsout.gf2 import bits
from agent.games.lightsout.puzzle import Puzzle, lights_out, torus
from agent.games.lightsout.reader import LightsRead, read_lights
from agent.games.lightsout.solver import solver_for
from agent.journal import Journal
from agent.screenloop import ScreenLoop
from agent.vision.grid import cell_centers
from agent.vision.profile import GameProfile


@dataclass(frozen=True)
class LightsPlayOptions:
    moves: int | None = None  # stop after this many taps
    unreadable_timeout_s: float = 5.0  # stop when the board stays unreadable this long
    change_timeout_s: float = 1.0  # how long a tap may take to show on screen
    max_failed_checks: int = 3  # taps in a row that did not do what the rules predict
    max_taps_per_button: int = 3  # a safety stop: taps at most this many times the buttons


@dataclass
class LightsSummary(LoopStats):
    puzzle: str = ""
    first_board: str | None = None  # as first read, '1'/'0' rows
    planned_presses: int | None = None  # fewest presses for the first board read
    solutions: int | None = None  # how many press sets solve the first board
    taps: int = 0
    solved: bool = False
    stop_reason: str = ""
    rule_changes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Pending:
    before: int
    button: int
    predicted: int
    index: int


def grid_variants(rows: int, cols: int) -> list[Puzzle]:
    """The rules a tap's effect is compared against, the assumed one first."""
    return [lights_out(rows, cols), torus(rows, cols)]


class LightsOutLoop(ScreenLoop):
    def __init__(
        self,
        device: Device,
        profile: GameProfile,
        clock: Clock,
        puzzle: Puzzle | None = None,
        options: LightsPlayOptions = LightsPlayOptions(),
        journal: Journal | None = None,
        on_tap: Callable[[LightsSummary], None] | None = None,
    ) -> None:
        self.device, self.profile, self.clock, self.options, self.journal = device, profile, clock, options, journal
        self.puzzle = puzzle if puzzle is not None else lights_out(profile.rows, profile.cols)
        if self.puzzle.light_grid != (profile.rows, profile.cols) or not self.puzzle.is_grid:
            raise ValueError(f"{self.puzzle.name} does not fit the profile's {profile.rows}x{profile.cols} board")
        self.on_tap = on_tap
        self.summary = LightsSummary(puzzle=self.puzzle.name)
        self.pending: _Pending | None = None
        self._centers = cell_centers(profile.board_bbox, profile.rows, profile.cols)

    def _stop(self, reason: str, solved: bool = False) -> LightsSummary:
        if self.pending is not None:
            # the last tap's result was never seen on a readable board: say so rather than count it
            self.summary.checks["unverified"] += 1
            self._log("check", tap_index=self.pending.index, verdict="unverified", detail=reason)
            self.pending = None
        self.summary.stop_reason = reason
        self.summary.solved = solved
        self._log("stop", reason=reason, solved=solved, summary=self.summary.as_dict())
        return self.summary

    def _check(self, pending: _Pending, read: LightsRead) -> bool:
        """Did the tap toggle exactly the predicted lights? Switches rules if another
        variant explains what happened."""
        observed = read.state ^ pending.before
        if read.state == pending.predicted:
            verdict, detail = "ok", ""
        elif observed == 0:
            verdict, detail = "no_effect", "the tap changed nothing"
        else:
            verdict = "unexpected"
            toggled = ", ".join(self.puzzle.light_label(i) for i in bits(observed))
            predicted = ", ".join(self.puzzle.light_label(i) for i in bits(self.puzzle.actions[pending.button]))
            detail = f"toggled {toggled}; the rules predicted {predicted}"
            for variant in grid_variants(self.profile.rows, self.profile.cols):
                if variant != self.puzzle and variant.actions[pending.button] == observed:
                    change = f"{self.puzzle.name} -> {variant.name} (after tap {pending.index})"
                    self.summary.rule_changes.append(change)
                    self._log("rules", change=change, detail=detail)
                    self.puzzle = variant
                    verdict = "rules_changed"
                    break
        self.summary.checks[verdict] += 1
        self._log("check", tap_index=pending.index, verdict=verdict, detail=detail, board=read.text)
        return verdict in ("ok", "rules_changed")

    def _variant_that_solves(self, state: int) -> Puzzle | None:
        for variant in grid_variants(self.profile.rows, self.profile.cols):
            if variant != self.puzzle and solver_for(variant).solvable(state, variant.goal):
                return variant
        return None

    def run(self) -> LightsSummary:
        try:
            return self._run()
        except KeyboardInterrupt:
            return self._stop("interrupted (Ctrl-C)")

    def _run(self) -> LightsSummary:
        s, opt = self.summary, self.options
        failed = 0
        unreadable_since: float | None = None
        while True:
            frame, still = self._settle()
            t_read = time.perf_counter()
            read = read_lights(frame, self.profile) if still else None
            if read is None or not read.confident:
                now = self.clock.now()
                unreadable_since = now if unreadable_since is None else unreadable_since
                if now - unreadable_since >= opt.unreadable_timeout_s:
                    why = "the board never stopped changing" if read is None else (
                        f"{read.reading.unknown_count} cells unknown, lowest confidence {read.min_confidence:.2f}"
                    )  # fmt: skip
                    return self._stop(
                        f"board not readable for {opt.unreadable_timeout_s:.0f} s ({why}): a dialog over the "
                        "board, or a profile that does not fit this screen"
                    )
                self._log("unreadable", board=read.text if read else None)
                self.clock.sleep(self.profile.settle.poll_ms / 1000.0)
                continue
            unreadable_since = None
            if self.pending is not None:
                pending, self.pending = self.pending, None
                failed = 0 if self._check(pending, read) else failed + 1
                if failed >= opt.max_failed_checks:
                    return self._stop(
                        f"{failed} taps in a row did not toggle the lights the rules predict: check the profile's "
                        "board box, and that the game is Lights Out (a press toggles its cell and its neighbours)"
                    )
            if s.first_board is None:
                s.first_board = read.text
            if read.state == self.puzzle.goal:
                return self._stop("solved: every light is off", solved=True)
            if opt.moves is not None and s.taps >= opt.moves:
                return self._stop(f"tap limit reached ({opt.moves})")
            if s.taps >= opt.max_taps_per_button * self.puzzle.n_buttons:
                return self._stop(f"gave up after {s.taps} taps without reaching the goal")
            result = solver_for(self.puzzle).solve(read.state, self.puzzle.goal)
            decide_ms = (time.perf_counter() - t_read) * 1000.0
            if s.planned_presses is None:
                s.planned_presses, s.solutions = result.min_presses, result.solutions
            if not result.solvable:
                other = self._variant_that_solves(read.state)
                if other is not None:
                    # a game only deals boards its own rule can solve: try the rule that can,
                    # and let the checks after each tap confirm it (or switch back)
                    change = f"{self.puzzle.name} -> {other.name} (the board is unsolvable under {self.puzzle.name})"
                    s.rule_changes.append(change)
                    self._log("rules", change=change, detail=result.reason)
                    self.puzzle = other
                    result = solver_for(other).solve(read.state, other.goal)
                    if s.taps == 0:
                        s.planned_presses, s.solutions = result.min_presses, result.solutions
            if not result.solvable:
                self._log("unsolvable", board=read.text, reason=result.reason)
                return self._stop(f"this board cannot be solved: {result.reason}")
            button = result.presses[0]
            r, c = divmod(button, self.profile.cols)
            x, y = (int(v) for v in self._centers[r, c])
            self.device.tap(x, y)
            s.taps += 1
            s.decision_ms.append(decide_ms)
            self._log(
                "decision", index=s.taps, board=read.text, min_confidence=round(read.min_confidence, 3),
                press=[r, c], tap=[x, y], presses_left=result.min_presses, exact=result.exact,
                decide_ms=round(decide_ms, 3),
            )  # fmt: skip
            self.pending = _Pending(read.state, button, self.puzzle.press(read.state, button), s.taps)
            self._wait_for_change(frame)
            if self.on_tap:
                self.on_tap(s)
