"""A simulated phone running a match-3 game, for CI, demos and tests.

It implements the same `Device` protocol as a real phone: the agent sees only
screenshots and sends only screen-pixel gestures. Moves animate in (clock) time, so a
screenshot taken too early shows tiles in motion, exactly the trap a real phone sets.
The inspection properties (`board`, `state`, `outcomes`, ...) are for tests and the
play summary; the agent must not use them to decide anything.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Literal

import numpy as np

from agent.simphone.phone import SimDevice
from agent.simphone.sizes import DEFAULT_SIZE
from agent.device.clock import Clock
from agent.games.match3.board import Board, Move
from agent.games.match3.hud import Hud
from agent.games.match3.render import DrawTile, Layout, board_tiles, layout_for, render, render_board
from agent.games.match3.rules import (
    GameState,
    Match3Config,
    MoveOutcome,
    Phase,
    apply_move,
    group_points,
    is_legal_swap,
    is_over,
    new_game,
    step_gain,
)

@dataclass(frozen=True)
class AnimationTiming:
    """How long each part of a move takes on screen, in milliseconds.

    `capture_ms` is how long a screenshot takes; the phone sleeps that long on its clock
    after grabbing the frame (free on a ManualClock), so polling loops move time on.
    """

    swap_ms: float = 150
    clear_ms: float = 180
    fall_ms: float = 220
    capture_ms: float = 0

    def __post_init__(self) -> None:
        for name in ("swap_ms", "clear_ms", "fall_ms", "capture_ms"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")

    @classmethod
    def instant(cls) -> "AnimationTiming":
        return cls(0, 0, 0)

    def move_ms(self, outcome: MoveOutcome) -> float:
        """Total animation time of one move (a swap undone plays the swap twice)."""
        if not outcome.applied:
            return 2 * self.swap_ms
        return self.swap_ms + len(outcome.phases) * (self.clear_ms + self.fall_ms)


@dataclass(frozen=True)
class Gesture:
    """A gesture the phone received, and what it did."""

    kind: Literal["tap", "swipe"]
    points: tuple[int, ...]  # (x, y) for a tap, (x1, y1, x2, y2) for a swipe
    duration_ms: float
    at: float  # clock time the finger went down
    move: Move | None = None  # the swap it played on the board, if any
    applied: bool = False  # False for no swap, or a classic swap that matched nothing (undone)


@dataclass(frozen=True)
class _Segment:
    start: float
    end: float
    draw: Callable[[float], list[DrawTile]]  # progress 0..1 -> tiles
    hud: Hud


def _smooth(p: float) -> float:
    return p * p * (3 - 2 * p)


class SimPhone(SimDevice):
    """A phone showing a match-3 game. See the module docstring."""

    def __init__(
        self,
        config: Match3Config | None = None,
        seed: int = 0,
        size: tuple[int, int] = DEFAULT_SIZE,
        model: str = "puzzle-sim",
        serial: str = "sim-0",
        clock: Clock | None = None,
        timing: AnimationTiming | None = None,
    ) -> None:
        self._config = config or Match3Config()
        self._seed = seed
        super().__init__(size, model, serial, clock)
        self._timing = timing or AnimationTiming()
        counter = "STEPS" if self._config.variant == "step" else "MOVES"
        self._layout = layout_for(self._size[0], self._size[1], self._config.rows, self._config.cols, counter)
        # One generator for the whole game: the start board and every refill, in order,
        # so a seed and a sequence of moves fix everything the player sees.
        self._rng = np.random.default_rng(seed)
        self._state = new_game(self._config, self._rng)
        self._outcomes: list[MoveOutcome] = []
        self._segments: list[_Segment] = []
        self._settles_at = -math.inf
        self._pre_tiles: list[DrawTile] = []
        self._pre_hud = self._hud_for(self._state)

    # -- Device protocol (the rest is SimDevice's) ----------------------------------
    def screencap(self) -> np.ndarray:
        frame = super().screencap()
        if self._timing.capture_ms:
            self._clock.sleep(self._timing.capture_ms / 1000)
        return frame

    def on_swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: float) -> tuple[Move, bool] | None:
        now = self._clock.now()
        move = self._swap_for(x1, y1, x2, y2) if now >= self._settles_at else None
        if move is None:
            return None
        before = self._state
        outcome = apply_move(self._config, before, move, self._rng)
        # The game reacts when the finger lifts; the phone does not block meanwhile.
        self._schedule(before, outcome, now + duration_ms / 1000)
        if outcome.applied:
            self._state = outcome.state
            self._outcomes.append(outcome)
        return move, outcome.applied

    # -- inspection (tests and summaries only) ------------------------------------
    @property
    def config(self) -> Match3Config:
        return self._config

    @property
    def seed(self) -> int:
        return self._seed

    @property
    def timing(self) -> AnimationTiming:
        return self._timing

    @property
    def layout(self) -> Layout:
        return self._layout

    @property
    def state(self) -> GameState:
        return self._state

    @property
    def board(self) -> Board:
        """The board after the last move, even while that move is still animating."""
        return self._state.board

    @property
    def hud(self) -> Hud:
        """The header numbers once the current animation has settled."""
        return self._hud_for(self._state)

    @property
    def game_over(self) -> bool:
        return is_over(self._config, self._state)

    @property
    def animating(self) -> bool:
        """True from a move's swipe until its last tile lands."""
        return self._clock.now() < self._settles_at

    @property
    def settles_at(self) -> float:
        """Clock time the last move's animation ends (-inf before any move)."""
        return self._settles_at

    @property
    def gesture_log(self) -> list[Gesture]:
        out = []
        for g in self.gestures:
            move, applied = g.effect if g.effect is not None else (None, False)
            out.append(Gesture(g.kind, g.points, g.duration_ms, g.at, move, applied))  # type: ignore[arg-type]
        return out

    @property
    def outcomes(self) -> list[MoveOutcome]:
        """The moves that changed the game (not classic swaps that were undone)."""
        return list(self._outcomes)

    # -- frames -------------------------------------------------------------------
    def frame_at(self, t: float) -> np.ndarray:
        """The screen at clock time t (t should not be before the last gesture)."""
        if t >= self._settles_at:
            return render_board(self._layout, self._state.board, self.hud, game_over=self.game_over)
        if not self._segments or t < self._segments[0].start:
            # The finger is still on the glass: the board has not reacted yet.
            return render(self._layout, self._pre_tiles, self._pre_hud)
        for seg in self._segments:
            if seg.start <= t < seg.end:
                return render(self._layout, seg.draw((t - seg.start) / (seg.end - seg.start)), seg.hud)
        raise AssertionError("unreachable: segments cover up to settles_at")  # pragma: no cover

    # -- internals ----------------------------------------------------------------
    def _hud_for(self, state: GameState) -> Hud:
        # Classic games count the moves left in the budget where step games count steps.
        if self._config.variant == "step":
            return Hud(steps=state.steps_left, score=state.score)
        return Hud(steps=max(0, self._config.move_budget - state.moves_made), score=state.score)

    def _swap_for(self, x1: int, y1: int, x2: int, y2: int) -> Move | None:
        """The swap a swipe means, as a touch screen game reads it; None for anything else."""
        if self.game_over:
            return None
        cell = self._layout.cell_at(x1, y1)
        if cell is None:
            return None
        dx, dy = x2 - x1, y2 - y1
        if abs(dx) >= abs(dy):
            dist, direction = abs(dx), ("R" if dx > 0 else "L")
        else:
            dist, direction = abs(dy), ("D" if dy > 0 else "U")
        if dist <= self._layout.cell_px / 3:
            return None
        move = Move(cell[0], cell[1], direction)
        return move if is_legal_swap(self._state.board, move) else None

    def _schedule(self, before: GameState, outcome: MoveOutcome, start: float) -> None:
        tm = self._timing
        hud = self._hud_for(before)
        self._pre_tiles = board_tiles(self._layout, before.board)
        self._pre_hud = hud
        segs: list[_Segment] = []
        t = start

        def add(ms: float, draw: Callable[[float], list[DrawTile]], shown: Hud) -> None:
            nonlocal t
            if ms > 0:  # a zero-length part is simply never on screen
                segs.append(_Segment(t, t + ms / 1000, draw, shown))
                t += ms / 1000

        if not outcome.applied:
            add(tm.swap_ms, self._swap_draw(before.board, outcome.move, forward=True), hud)
            add(tm.swap_ms, self._swap_draw(before.board, outcome.move, forward=False), hud)
        else:
            steps, score = hud.steps, hud.score
            if steps is not None:
                steps -= outcome.steps_spent
            add(tm.swap_ms, self._swap_draw(before.board, outcome.move, forward=True), Hud(steps, score))
            for depth, phase in enumerate(outcome.phases, 1):
                # Points and steps count up as each wave of tiles pops.
                score += sum(group_points(g, depth) for g in phase.groups)
                if steps is not None and self._config.variant == "step":
                    steps += sum(step_gain(self._config, g) for g in phase.groups)
                shown = Hud(steps, score)
                add(tm.clear_ms, self._clear_draw(phase), shown)
                add(tm.fall_ms, self._fall_draw(phase), shown)
        self._segments = segs
        self._settles_at = t

    def _swap_draw(self, board: Board, move: Move, forward: bool) -> Callable[[float], list[DrawTile]]:
        lay = self._layout
        (r1, c1), (r2, c2) = move.cells()
        still = [d for d in board_tiles(lay, board) if lay.cell_at(d.x, d.y) not in ((r1, c1), (r2, c2))]
        a, b = board[r1, c1], board[r2, c2]
        (ax, ay), (bx, by) = lay.cell_center(r1, c1), lay.cell_center(r2, c2)

        def draw(p: float) -> list[DrawTile]:
            e = _smooth(p if forward else 1 - p)
            return still + [
                DrawTile(a, ax + (bx - ax) * e, ay + (by - ay) * e),
                DrawTile(b, bx + (ax - bx) * e, by + (ay - by) * e),
            ]

        return draw

    def _clear_draw(self, phase: Phase) -> Callable[[float], list[DrawTile]]:
        lay = self._layout
        gone = {cell for g in phase.groups for cell in g.cells}
        tiles = board_tiles(lay, phase.before)
        still = [d for d in tiles if lay.cell_at(d.x, d.y) not in gone]
        popping = [d for d in tiles if lay.cell_at(d.x, d.y) in gone]

        def draw(p: float) -> list[DrawTile]:
            return still + [DrawTile(d.kind, d.x, d.y, scale=1 - p, alpha=1 - p * p) for d in popping]

        return draw

    def _fall_draw(self, phase: Phase) -> Callable[[float], list[DrawTile]]:
        lay = self._layout
        cells = phase.refilled.cells
        moves = [
            (int(cells[r, c]), int(phase.sources[r, c]), r, c)
            for r in range(cells.shape[0])
            for c in range(cells.shape[1])
            if cells[r, c] >= 0
        ]

        def draw(p: float) -> list[DrawTile]:
            e = p * p  # accelerating, like something dropped
            out = []
            for kind, src, r, c in moves:
                x, y = lay.cell_center(src + (r - src) * e, c)
                out.append(DrawTile(kind, x, y))
            return out

        return draw

    def __repr__(self) -> str:
        w, h = self._size
        return f"SimPhone(serial={self._serial!r}, {w}x{h}, variant={self._config.variant!r}, seed={self._seed})"
