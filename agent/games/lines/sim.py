"""A simulated phone showing Color Lines.

Tap a ball to select it (a ring marks it; tapping another ball selects that one), then
tap an empty cell: if a path of empty cells leads there the ball travels along it,
lines made vanish, and otherwise the new balls grow in. Taps during an animation, on
an empty cell with nothing selected, or on an unreachable cell do nothing, as in the
game. Time comes from the clock, so a ManualClock plays the animations in no real time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from agent.device.clock import Clock
from agent.simphone.phone import SimDevice
from agent.games.lines.board import EMPTY
from agent.games.lines.config import LinesConfig, preset
from agent.games.lines.linefind import find_lines
from agent.games.lines.render import DrawBall, Layout, board_balls, layout_for, render
from agent.games.lines.rules import IllegalMoveError, LinesGame, Move, Outcome


@dataclass(frozen=True)
class LinesTiming:
    step_ms: float = 35.0  # per cell of the path
    clear_ms: float = 220.0
    spawn_ms: float = 180.0


# An animation ends at a time summed from float steps, and the clock that reaches it is
# summed from others: within this of the end, the phone draws and takes input as settled,
# so that a frame that shows the final board is never one that refuses a tap.
_EDGE_S = 1e-6


@dataclass(frozen=True)
class _Phase:
    start: float
    end: float
    board: np.ndarray  # the balls that stand still during the phase
    moving: tuple[DrawBall, ...] = ()
    path: tuple[tuple[int, int], ...] = ()  # for the travelling ball
    value: int = 0
    shrink: np.ndarray | None = None  # cells vanishing during the phase
    grow: tuple[tuple[int, int, int], ...] = ()  # balls appearing during the phase


@dataclass(frozen=True)
class TapEffect:
    kind: str  # "select", "move", "no-path"
    cell: tuple[int, int]
    outcome: Outcome | None = None


class LinesSimPhone(SimDevice):
    def __init__(
        self,
        config: LinesConfig | None = None,
        seed: int = 0,
        size: tuple[int, int] = (1080, 2400),
        model: str = "puzzle-sim-lines",
        serial: str = "sim-lines-0",
        clock: Clock | None = None,
        timing: LinesTiming | None = None,
    ) -> None:
        super().__init__(size, model, serial, clock)
        self.config = config or preset("seed")
        self.seed = seed
        self.timing = timing or LinesTiming()
        self.game = LinesGame.new(self.config, seed)
        self.layout: Layout = layout_for(self._size[0], self._size[1], self.config.rows, self.config.cols)
        self.selected: tuple[int, int] | None = None
        self.outcomes: list[Outcome] = []
        self._phases: list[_Phase] = []
        self._settles_at = -math.inf

    @property
    def board(self) -> np.ndarray:
        return self.game.board.copy()

    @property
    def settles_at(self) -> float:
        return self._settles_at

    @property
    def animating(self) -> bool:
        return self._clock.now() < self._settles_at - _EDGE_S

    # -- taps ----------------------------------------------------------------------
    def on_tap(self, x: int, y: int) -> TapEffect | None:
        now = self._clock.now()
        cell = self.layout.cell_at(x, y)
        if cell is None or now < self._settles_at - _EDGE_S or self.game.over:
            return None
        if self.game.board[cell] != EMPTY:
            self.selected = cell
            return TapEffect("select", cell)
        if self.selected is None:
            return None
        before = self.game.board.copy()
        try:
            outcome = self.game.play(Move(self.selected, cell))
        except IllegalMoveError:
            return TapEffect("no-path", cell)
        self.selected = None
        self.outcomes.append(outcome)
        self._schedule(before, outcome, now)
        return TapEffect("move", cell, outcome)

    def _schedule(self, before: np.ndarray, out: Outcome, start: float) -> None:
        t = self.timing
        cfg = self.config
        phases: list[_Phase] = []
        src, dst = out.move.src, out.move.dst
        value = int(before[src])
        still = before.copy()
        still[src] = EMPTY
        end = start + t.step_ms * (len(out.path) - 1) / 1000
        phases.append(_Phase(start, end, still, path=out.path, value=value))
        moved = still.copy()
        moved[dst] = value
        gone = find_lines(moved, cfg.line_length)
        if gone.any():
            phases.append(_Phase(end, end + t.clear_ms / 1000, moved, shrink=gone))
            end += t.clear_ms / 1000
            moved = moved.copy()
            moved[gone] = EMPTY
        if out.spawned:
            phases.append(_Phase(end, end + t.spawn_ms / 1000, moved, grow=out.spawned))
            end += t.spawn_ms / 1000
            landed = moved.copy()
            for r, c, v in out.spawned:
                landed[r, c] = v
            gone = find_lines(landed, cfg.line_length)
            if gone.any():
                phases.append(_Phase(end, end + t.clear_ms / 1000, landed, shrink=gone))
                end += t.clear_ms / 1000
        self._phases = phases
        self._settles_at = end

    # -- drawing ---------------------------------------------------------------------
    def frame_at(self, t: float) -> np.ndarray:
        preview = self.game.next_balls if self.config.preview else ()
        for ph in self._phases:
            if ph.start <= t < ph.end - _EDGE_S:
                return self._draw_phase(ph, (t - ph.start) / max(1e-9, ph.end - ph.start), preview)
        return render(self.layout, board_balls(self.game.board), self.game.score, preview, self.selected,
                      self.game.over)

    def _draw_phase(self, ph: _Phase, p: float, preview: tuple[int, ...]) -> np.ndarray:
        balls = board_balls(ph.board)
        if ph.path:
            pos = p * (len(ph.path) - 1)
            i = min(int(pos), len(ph.path) - 2) if len(ph.path) > 1 else 0
            f = pos - i
            (r1, c1), (r2, c2) = ph.path[i], ph.path[min(i + 1, len(ph.path) - 1)]
            balls.append(DrawBall(ph.value, r1 + (r2 - r1) * f, c1 + (c2 - c1) * f))
        if ph.shrink is not None:
            balls = [DrawBall(b.value, b.row, b.col, 1.0 - p if ph.shrink[int(b.row), int(b.col)] else 1.0)
                     for b in balls]
        for r, c, v in ph.grow:
            balls.append(DrawBall(v, r, c, p))
        return render(self.layout, balls, self.game.score, preview, None, False)
