"""Lights Out behind the `Game` protocol: each press solved for from the board just read,
tapped on its cell and checked on screen.

Each decision solves from the board just read, for the fewest presses; when every check
passes, that is the first read's minimum plan played one press at a time. The check
after a tap asks whether exactly the lights the rule predicts have toggled.

The game's rule is assumed to be plain Lights Out (a press toggles its cell and its
four neighbours) on the profile's grid. Two things can change that: a tap that toggled
exactly what the torus variant would (the check says `rules_changed` and the player
plays by the torus from then on), and a board the plain rule cannot solve but the torus
can (a game only deals boards its rule solves, so the player tries the torus and lets
the next taps' checks confirm it). Any other surprise is a failed check, and the loop
stops after a few in a row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agent.device.clock import Clock
from agent.games.base import (
    BoardRead,
    Check,
    Decision,
    Gesture,
    NoMove,
    Option,
    Settings,
    StatusReader,
    Tap,
)
from agent.games.lightsout.gf2 import bits, from_bits
from agent.games.lightsout.puzzle import (
    MAX_LIGHTS,
    OFF_CHARS,
    ON_CHARS,
    Puzzle,
    PuzzleError,
    board_lines,
    lights_out,
    torus,
)
from agent.games.lightsout.reader import check_labels, read_lights
from agent.games.lightsout.solver import SolveResult, solver_for
from agent.vision.classify import UNKNOWN_LABEL
from agent.vision.grid import cell_centers
from agent.vision.profile import GameProfile
from agent.vision.roles import RoleHints

VARIANTS = ("plain", "torus")  # the simulated phone's rule; the player starts from plain and learns


# -- boards and presses ------------------------------------------------------------------


@dataclass(frozen=True)
class Lights:
    """A board of lights: bit r * cols + c of `state` set for a light that is on; bits of
    `unknown` for cells not read (they count as off in `state`)."""

    rows: int
    cols: int
    state: int
    unknown: int = 0

    @property
    def known(self) -> bool:
        return self.unknown == 0

    @classmethod
    def parse(cls, text: str) -> Lights:
        """'1'/'0' rows separated by newlines or '/' ('#', '*', 'x' also mean on, '.' off,
        '?' unknown); spaces are ignored."""
        lines = board_lines(text)
        if not lines:
            raise PuzzleError("the board is empty", hint="give one character per light: 1 (on) or 0 (off)")
        if len({len(ln) for ln in lines}) != 1:
            raise PuzzleError(
                f"the board's rows have different lengths ({'/'.join(str(len(ln)) for ln in lines)})",
                hint="give every row the same number of lights (1 = on, 0 = off)",
            )
        flat = "".join(lines)
        if len(flat) > MAX_LIGHTS:  # as for puzzles (and building the bitsets is quadratic)
            raise PuzzleError(f"the board has {len(flat)} lights; at most {MAX_LIGHTS} are supported")
        for i, ch in enumerate(flat):
            if ch not in ON_CHARS and ch not in OFF_CHARS and ch != UNKNOWN_LABEL:
                r, c = divmod(i, len(lines[0]))
                raise PuzzleError(
                    f"the board has {ch!r} at row {r}, column {c}",
                    hint="lights are 1 (or # * x) for on, 0 (or .) for off and ? for unknown",
                )
        return cls(
            len(lines), len(lines[0]), from_bits(i for i, ch in enumerate(flat) if ch in ON_CHARS),
            from_bits(i for i, ch in enumerate(flat) if ch == UNKNOWN_LABEL),
        )  # fmt: skip

    def __str__(self) -> str:
        def ch(i: int) -> str:
            return UNKNOWN_LABEL if (self.unknown >> i) & 1 else ("1" if (self.state >> i) & 1 else "0")

        return "\n".join("".join(ch(r * self.cols + c) for c in range(self.cols)) for r in range(self.rows))


@dataclass(frozen=True)
class Press:
    """A press of the button at (row, col)."""

    row: int
    col: int

    @property
    def cell(self) -> tuple[int, int]:
        return self.row, self.col

    def button(self, cols: int) -> int:
        return self.row * cols + self.col

    def __str__(self) -> str:
        return f"({self.row}, {self.col})"


def grid_variants(rows: int, cols: int) -> list[Puzzle]:
    """The rules a tap's effect is compared against, the assumed one first."""
    return [lights_out(rows, cols), torus(rows, cols)]


def tap_point(profile: GameProfile, press: Press) -> tuple[int, int]:
    centers = cell_centers(profile.board_bbox, profile.rows, profile.cols)
    x, y = (int(v) for v in centers[press.row, press.col])
    return x, y


# -- the player ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Made:
    before: int
    button: int
    predicted: int
    index: int  # which tap it was, counting from 1


class LightsOutPlayer:
    """Solves every board it is shown under the current rule and presses the first button
    of the fewest-press solution; learns the torus rule from what the taps do."""

    def __init__(self, rows: int, cols: int, puzzle: Puzzle | None = None, max_taps_per_button: int = 3) -> None:
        self.puzzle = puzzle if puzzle is not None else lights_out(rows, cols)
        if self.puzzle.light_grid != (rows, cols) or not self.puzzle.is_grid:
            raise ValueError(f"{self.puzzle.name} does not fit the profile's {rows}x{cols} board")
        self.rows, self.cols = rows, cols
        self.max_taps_per_button = max_taps_per_button  # a safety stop: taps at most this many times the buttons
        self.planned_presses: int | None = None  # fewest presses for the first board decided on
        self.solutions: int | None = None  # how many press sets solve that board
        self.rule_changes: list[str] = []
        self.taps = 0
        self._made: _Made | None = None

    def _solve(self, state: int) -> SolveResult:
        return solver_for(self.puzzle).solve(state, self.puzzle.goal)

    def _variant_that_solves(self, state: int) -> Puzzle | None:
        for variant in grid_variants(self.rows, self.cols):
            if variant != self.puzzle and solver_for(variant).solvable(state, variant.goal):
                return variant
        return None

    def decide(self, board: Lights) -> Decision[Press] | NoMove:
        if self.taps >= self.max_taps_per_button * self.puzzle.n_buttons:
            return NoMove(f"gave up after {self.taps} taps without reaching the goal", finished=False)
        fields: dict[str, object] = {}
        result = self._solve(board.state)
        if self.planned_presses is None and self.solutions is None:
            self.planned_presses, self.solutions = result.min_presses, result.solutions
        if not result.solvable:
            other = self._variant_that_solves(board.state)
            if other is not None:
                # A game only deals boards its own rule can solve: try the rule that can,
                # and let the checks after each tap confirm it (or switch back).
                change = f"{self.puzzle.name} -> {other.name} (the board is unsolvable under {self.puzzle.name})"
                self.rule_changes.append(change)
                fields["rules"] = change
                fields["rules_detail"] = result.reason
                self.puzzle = other
                result = self._solve(board.state)
                if self.taps == 0:
                    self.planned_presses, self.solutions = result.min_presses, result.solutions
        if not result.solvable:
            return NoMove(f"this board cannot be solved: {result.reason}", finished=False)
        button = result.presses[0]
        press = Press(*divmod(button, self.cols))
        self.taps += 1
        self._made = _Made(board.state, button, self.puzzle.press(board.state, button), self.taps)
        fields.update(press=[press.row, press.col], presses_left=result.min_presses, exact=result.exact)
        return Decision(press, str(press), fields=fields)

    def check(self, before: Lights, decision: Decision[Press], after: Lights) -> Check:
        made = self._made
        assert made is not None and made.button == decision.move.button(self.cols), "check() follows decide()"
        self._made = None
        observed = after.state ^ made.before
        if after.state == made.predicted:
            return Check("as_predicted")
        if observed == 0:
            return Check("not_applied", "the tap changed nothing")
        toggled = ", ".join(self.puzzle.light_label(i) for i in bits(observed))
        predicted = ", ".join(self.puzzle.light_label(i) for i in bits(self.puzzle.actions[made.button]))
        detail = f"toggled {toggled}; the rules predicted {predicted}"
        for variant in grid_variants(self.rows, self.cols):
            if variant != self.puzzle and variant.actions[made.button] == observed:
                change = f"{self.puzzle.name} -> {variant.name} (after tap {made.index})"
                self.rule_changes.append(change)
                self.puzzle = variant
                return Check("rules_changed", detail, {"rules": change})
        return Check("unexpected", detail)

    def at_rest(self, before: Lights, after: Lights) -> bool:
        return True  # a tap's fades are one phase: a still board is the board once they are over

    def finished(self, board: Lights) -> str | None:
        return "solved: every light is off" if board.known and board.state == self.puzzle.goal else None

    def counts(self) -> dict[str, int]:
        out = {"solutions": self.solutions or 0, "rule_changes": len(self.rule_changes)}
        if self.planned_presses is not None:  # none for a board that cannot be solved (or none decided on)
            out = {"planned_presses": self.planned_presses, **out}
        return out


# -- the screen, the simulated phone, the game ----------------------------------------------


class LightsOutScreen:
    # lit and dark buttons lie in any pattern, symmetric puzzles included
    role_hints = RoleHints()
    options = (
        Option("variant", "Simulated phone: the rule the phone plays by, plain Lights Out or the torus (neighbours "
               "wrap around the edges); the agent assumes plain and learns the torus from its taps.",
               choices=VARIANTS, default="plain", sim_only=True),
    )  # fmt: skip

    def check_profile(self, profile: GameProfile) -> None:
        check_labels(profile)

    def read(self, frame: np.ndarray, profile: GameProfile) -> BoardRead[Lights]:
        r = read_lights(frame, profile)
        unknown = from_bits(i for i, v in enumerate(v for row in r.reading.labels for v in row) if v == UNKNOWN_LABEL)
        return BoardRead(Lights(profile.rows, profile.cols, r.state, unknown), r.reading, r.confident, r.text)

    def player(self, profile: GameProfile, settings: Settings, seed: int) -> LightsOutPlayer:
        return LightsOutPlayer(profile.rows, profile.cols)

    def gestures(self, move: Press, profile: GameProfile) -> tuple[Gesture, ...]:
        return (Tap(*tap_point(profile, move)),)

    def summary_rows(self, counts: Mapping[str, int]) -> list[tuple[str, str]]:
        planned = counts.get("planned_presses")
        changes = counts.get("rule_changes", 0)
        return [
            ("fewest presses (planned)", "-" if planned is None else f"{planned} (of {counts.get('solutions', 0)} solutions)"),
            ("rules learned", "none: plain Lights Out held" if not changes else
             f"{changes} switch{'es' if changes != 1 else ''} (from what a tap did or a board the rule cannot "
             "solve; the journal's `rules` fields say which)"),
        ]  # fmt: skip


class LightsOutSim:
    # A board is solved in at most one press per button, and the player gives up after a
    # few times that: a run always ends by itself.
    default_moves: int | None = None

    def phone(self, settings: Settings, seed: int, size: tuple[int, int], clock: Clock, serial: str | None) -> Any:
        from agent.games.lightsout.sim import SIM_SERIAL, LightsOutPhone

        puzzle = torus(5) if settings.get("variant") == "torus" else lights_out(5)
        return LightsOutPhone(puzzle, seed=seed, size=size, clock=clock, serial=serial or SIM_SERIAL)

    def save_profile(self, phone: Any, directory: Path) -> tuple[Path, str]:
        from agent.games.lightsout.sim_profile import sim_game_profile
        from agent.vision.profile import write_phone_profile

        saved = write_phone_profile(phone, sim_game_profile(phone), directory)
        return saved.path, saved.told("written from the simulator's known layout")

    def true_board(self, phone: Any) -> Lights:
        rows, cols = phone.puzzle.light_grid
        return Lights(rows, cols, phone.state)

    def status_reader(self, phone: Any) -> StatusReader | None:
        return None  # the phone's header shows presses, which the loop counts itself

    def truth(self, phone: Any) -> dict[str, object]:
        return {"solved": phone.solved, "presses": phone.press_count}

    def status_line(self, phone: Any) -> str:
        return f"{'solved' if phone.solved else 'not solved'} after {phone.press_count} presses"


class LightsOutGame:
    name = "lightsout"
    title = "Lights Out (a press toggles its light and its neighbours; turn every light off)"
    screen = LightsOutScreen()
    sim = LightsOutSim()

    @property
    def solver(self) -> Any:
        from agent.games.lightsout.solve import LightsOutSolver

        return LightsOutSolver()

    def parse_board(self, text: str) -> Lights:
        return Lights.parse(text)

    def format_board(self, board: Lights) -> str:
        return str(board)


GAME = LightsOutGame()
