"""A simulated phone showing a Lights Out board (or any grid toggle puzzle).

A tap on a cell presses that button: the lights in its action set toggle, each fading
over `fade_ms` of clock time, so a screenshot taken right after a tap shows lights
half-way, as a real phone would. Taps outside the board do nothing. The inspection
properties (`state`, `presses`, ...) are for tests and summaries; the agent only sees
screenshots.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from agent.device.clock import Clock
from agent.simphone.phone import SimDevice
from agent.games.lightsout.gf2 import bits
from agent.games.lightsout.puzzle import Puzzle, lights_out
from agent.games.lightsout.render import Layout, layout_for, render
from agent.vision.grid import cell_at

from agent.simphone.sizes import DEFAULT_SIZE

KEEP_PRESSES = 1000
SIM_MODEL = "puzzle-sim"
SIM_SERIAL = "sim-lightsout"


@dataclass(frozen=True)
class Press:
    """What a tap did: the button pressed and the state it left."""

    button: int
    cell: tuple[int, int]
    state: int


@dataclass
class _Fade:
    start: float
    src: float
    dst: float


def _smooth(p: float) -> float:
    return p * p * (3 - 2 * p)


def random_start(puzzle: Puzzle, rng: np.random.Generator) -> int:
    """A start the puzzle can be solved from: the goal with a random set of buttons pressed
    (never the goal itself, unless every press set leaves it unchanged)."""
    for _ in range(64):
        presses = int(sum(1 << int(b) for b in np.flatnonzero(rng.integers(0, 2, size=puzzle.n_buttons))))
        state = puzzle.apply(puzzle.goal, presses)
        if state != puzzle.goal:
            return state
    return puzzle.goal


class LightsOutPhone(SimDevice):
    def __init__(
        self,
        puzzle: Puzzle | None = None,
        seed: int = 0,
        size: tuple[int, int] = DEFAULT_SIZE,
        clock: Clock | None = None,
        start: int | None = None,
        fade_ms: float = 120.0,
        model: str = SIM_MODEL,
        serial: str = SIM_SERIAL,
    ) -> None:
        super().__init__(size, model, serial, clock)
        self.puzzle = puzzle if puzzle is not None else lights_out(5)
        if not self.puzzle.is_grid:
            raise ValueError(f"{self.puzzle.name} is not a grid puzzle (its buttons are not its lights' cells)")
        if fade_ms < 0:
            raise ValueError(f"fade_ms must be >= 0, got {fade_ms}")
        rows, cols = self.puzzle.light_grid  # type: ignore[misc]
        self.layout: Layout = layout_for(self._size[0], self._size[1], rows, cols)
        self.seed = seed
        self.fade_s = fade_ms / 1000.0
        self.start = random_start(self.puzzle, np.random.default_rng(seed)) if start is None else int(start)
        if self.start < 0 or self.start >> self.puzzle.n_lights:
            raise ValueError(f"start has lights outside the {rows}x{cols} board")
        self._state = self.start
        self._fades: dict[int, _Fade] = {}
        self._settles_at = float("-inf")
        # The last presses (for tests and the journal); a phone left tapping for days keeps
        # its count, not every press.
        self.presses: deque[Press] = deque(maxlen=KEEP_PRESSES)
        self.press_count = 0
        self._cache: tuple[tuple[int, int, bool], np.ndarray] | None = None

    # -- inspection ---------------------------------------------------------------
    @property
    def state(self) -> int:
        """The lights as the game holds them (fades may still be on screen)."""
        return self._state

    @property
    def solved(self) -> bool:
        return self._state == self.puzzle.goal

    @property
    def animating(self) -> bool:
        return self.clock.now() < self._settles_at

    # -- the game -----------------------------------------------------------------
    def on_tap(self, x: int, y: int) -> Press | None:
        rows, cols = self.puzzle.light_grid  # type: ignore[misc]
        cell = cell_at(self.layout.board_bbox, rows, cols, x, y)
        if cell is None:
            return None
        button = cell[0] * cols + cell[1]
        now = self.clock.now()
        after = self.puzzle.press(self._state, button)
        for light in bits(self.puzzle.actions[button]):
            # a light tapped again mid-fade turns back from where it is, not from its end
            self._fades[light] = _Fade(now, self._level(light, now), float((after >> light) & 1))
        self._state = after
        self._settles_at = now + self.fade_s
        press = Press(button, cell, self._state)
        self.presses.append(press)
        self.press_count += 1
        return press

    def _level(self, light: int, t: float) -> float:
        fade = self._fades.get(light)
        if fade is None or self.fade_s <= 0 or t >= fade.start + self.fade_s:
            if fade is not None:
                return fade.dst
            return float((self.start >> light) & 1)
        p = max(0.0, (t - fade.start) / self.fade_s)
        return fade.src + (fade.dst - fade.src) * _smooth(p)

    def frame_at(self, t: float) -> np.ndarray:
        rows, cols = self.puzzle.light_grid  # type: ignore[misc]
        key = (self._state, self.press_count, self.solved)
        if t >= self._settles_at:
            if self._cache is None or self._cache[0] != key:
                levels = np.array([(self._state >> i) & 1 for i in range(rows * cols)], np.float32)
                self._cache = (key, render(self.layout, levels.reshape(rows, cols), self.press_count, self.solved))
            return self._cache[1].copy()
        levels = np.array([self._level(i, t) for i in range(rows * cols)], np.float32)
        return render(self.layout, levels.reshape(rows, cols), self.press_count, self.solved)

    def __repr__(self) -> str:
        w, h = self.screen_size()
        return f"LightsOutPhone({self.puzzle.name!r}, {w}x{h}, seed={self.seed})"
