"""A simulated phone running a commercial-style match-3 game, level after level.

It behaves as a real game does, not as the project's own simulator: a swap that
matches nothing is animated and undone; specials, crates and holes; a new board shape
and place each level; a "LEVEL k COMPLETE" card with Next (and Share, never right);
"Out of moves" with a priced offer, Retry and a close X; seeded popups (a daily bonus,
an offer with an X, a tip over the board); interstitial ads whose X shows after a
while; once in the sequence another app comes in front. Moves animate in clock time;
after a few idle seconds a hint tile wiggles while the board stays at rest; a swipe
while the board moves is ignored. `latency_ms` makes each screencap cost that much of
the phone's clock (the frame is the one at capture start).

A `world` (agent.games.match3.saga.family) makes it one game of a family: world 0 is
the game above; the others draw their cards with the card painter (`cards`) and play
their own flows: a map between levels, an intro card showing the goal, goals other than
score (collect N of a colour, break N blockers, counted from the rules' phases), score
levels that run until the moves are spent, an out-of-moves card priced in coins that
leads to a failed card with Retry, a "Quit level?" dialog on Back, ads whose close
control follows a countdown, an animated backdrop, their own header, hint and speed;
and a phone that serves one screenshot at a time (`serial_captures`).

What the game did is counted (`truth()`); the agent must not use it to decide anything.
"""

from __future__ import annotations

from collections import deque

import math
import threading
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import cv2
import numpy as np

from agent.device.base import KEYCODE_BACK
from agent.device.clock import Clock, RealClock
from agent.games.match3.lookalike.backdrop import BACKGROUNDS, background
from agent.games.match3.saga import cards as C
from agent.games.match3.saga import header as H
from agent.games.match3.saga import screens as S
from agent.games.match3.saga.family import SagaWorld, world_of
from agent.games.match3.saga.goal_levels import world_level
from agent.games.match3.saga.goals import BREAK, COLLECT, SCORE, Goal, outcome_progress, phase_progress
from agent.games.match3.saga.levels import Level, level_of, stream
from agent.games.match3.saga.looks import TileArt, sprite_key
from agent.games.match3.saga.motion import Motion
from agent.games.match3.saga.rules import Board, Cell, Outcome, Phase, can_swap, matching_swaps, play
from agent.simphone.phone import SimDevice

CHAT_PACKAGE = "com.example.chat"
STORE_PACKAGE = "com.android.vending"
GAME_PACKAGE = "com.puzzleagent.saga"


@dataclass(frozen=True)
class SagaTiming:
    """How long things take on screen, in milliseconds."""

    swap_ms: float = 150
    clear_ms: float = 180
    fall_ms: float = 220
    shuffle_ms: float = 450
    hint_after_ms: float = 3000  # idle time before the hint tile wiggles
    wiggle_period_ms: float = 600
    ad_close_after_ms: float = 2000  # the ad's X appears after this

    def __post_init__(self) -> None:
        for name, value in self.__dict__.items():
            if value < 0:
                raise ValueError(f"{name} must be >= 0, got {value}")

    def faster(self, speed: float) -> SagaTiming:
        """The same game animated `speed` times as fast (idle times and the ad's wait unchanged)."""
        k = 1.0 / max(1e-3, speed)
        return SagaTiming(self.swap_ms * k, self.clear_ms * k, self.fall_ms * k, self.shuffle_ms * k,
                          self.hint_after_ms, self.wiggle_period_ms * k, self.ad_close_after_ms)  # fmt: skip

    def move_ms(self, out: Outcome) -> float:
        if not out.applied:
            return 2 * self.swap_ms
        return self.swap_ms + len(out.phases) * (self.clear_ms + self.fall_ms) + (
            self.shuffle_ms if out.shuffled_from is not None else 0.0)  # fmt: skip


@dataclass(frozen=True)
class Geometry:
    """Where a level's cells are on the screen."""

    x0: int
    y0: int
    cell: int
    rows: int
    cols: int

    @property
    def bbox(self) -> tuple[int, int, int, int]:
        return self.x0, self.y0, self.x0 + self.cols * self.cell, self.y0 + self.rows * self.cell

    def centre(self, r: float, c: float) -> tuple[float, float]:
        return self.x0 + (c + 0.5) * self.cell, self.y0 + (r + 0.5) * self.cell

    def cell_at(self, x: int, y: int) -> Cell | None:
        c, r = (x - self.x0) // self.cell, (y - self.y0) // self.cell
        return (int(r), int(c)) if 0 <= r < self.rows and 0 <= c < self.cols else None


@dataclass(frozen=True)
class Item:
    """Something drawn on the board: a sprite key at a point, scaled, faded, turned."""

    key: tuple[object, ...]
    x: float
    y: float
    scale: float = 1.0
    alpha: float = 1.0
    angle: float = 0.0


@dataclass(frozen=True)
class _Segment:
    start: float
    end: float
    draw: Callable[[float], list[Item]]
    score: int
    moves: int
    goal: int = 0  # the goal's progress shown meanwhile


@dataclass(frozen=True)
class Script:
    """The seeded events of a level: popups at its start, a tip, an ad after it, an app switch."""

    daily: bool
    offer: bool
    tip_after: int | None  # moves made before the tip shows
    ad_after: bool
    switch_after: int | None  # moves made before another app comes in front


def draw_scripts(seed: int, levels: int) -> list[Script]:
    """The seeded events of each level of `seed`'s sequence: another app comes in front
    once, on level 2 or 3 (level 1 when there is only one)."""
    rng = stream(seed, 2)
    switch_level = int(rng.integers(2, 4)) if levels >= 2 else 1
    out = []
    for k in range(1, levels + 1):
        daily = bool(rng.random() < (0.6 if k == 1 else 0.25))
        offer = bool(rng.random() < 0.3)
        tip = int(rng.integers(2, 6)) if rng.random() < 0.35 else None
        ad = bool(rng.random() < 0.4)
        switch = int(rng.integers(1, 4)) if k == switch_level else None
        out.append(Script(daily, offer, tip, ad, switch))
    return out


def draw_family_scripts(seed: int, levels: int, world: SagaWorld) -> list[Script]:
    """A family world's seeded events: as `draw_scripts`, at the world's rates."""
    rng = stream(seed, 2, world.number)
    switch_level = int(rng.integers(2, 4)) if levels >= 2 else 1
    out = []
    for k in range(1, levels + 1):
        daily = bool(rng.random() < (min(1.0, world.daily_p * 2) if k == 1 else world.daily_p))
        offer = bool(rng.random() < world.offer_p)
        tip = int(rng.integers(2, 6)) if rng.random() < world.tip_p else None
        ad = bool(rng.random() < world.ad_p)
        switch = int(rng.integers(1, 4)) if k == switch_level else None
        out.append(Script(daily, offer, tip, ad, switch))
    return out


@dataclass(frozen=True)
class Shown:
    """A card of a family world as drawn: its frame, its tappables, and where the
    background shows through it (the animated backdrop goes on there)."""

    kind: str
    frame: np.ndarray
    taps: tuple[C.Tappable, ...]
    through: np.ndarray | None  # uint8 mask, or None where nothing moves behind


SCREEN_KINDS = ("map", "intro", "daily", "offer", "tip", "complete", "failed", "out_of_moves", "quit", "ad", "done")
LOSES_LEVEL = ("quit", "give_up")


def _smooth(p: float) -> float:
    return p * p * (3 - 2 * p)


class SagaPhone(SimDevice):
    """A phone showing a commercial-style match-3 game. See the module docstring."""

    def __init__(self, seed: int = 0, size: tuple[int, int] | None = None, clock: Clock | None = None,
                 serial: str = "sim-0", model: str = "puzzle-saga", latency_ms: float = 0.0,
                 shots: Path | None = None, timing: SagaTiming | None = None, levels: int = 20,
                 world: SagaWorld | int = 0, serial_captures: bool | None = None) -> None:  # fmt: skip
        if levels < 1:
            raise ValueError(f"levels must be at least 1, not {levels!r}")
        if not latency_ms >= 0:
            raise ValueError(f"latency_ms must be >= 0, not {latency_ms!r}")
        self._world = world_of(world)
        super().__init__(size or self._world.size, model, serial, clock)
        self.package = GAME_PACKAGE if self._world.number == 0 else self._world.package
        self._foreground = self.package
        self._seed = int(seed)
        self._latency = float(latency_ms)
        self._serial_captures = self._world.serial_captures if serial_captures is None else bool(serial_captures)
        self._capture_lock = threading.Lock()
        fam = self._world.cards
        if timing is None:
            timing = SagaTiming()
            if fam:
                timing = dataclasses.replace(timing.faster(self._world.speed),
                                             ad_close_after_ms=1000 * self._world.ad_close_after_s)  # fmt: skip
        self._timing = timing
        self._levels_total = int(levels)
        self._art = TileArt.load(shots) if not fam else TileArt.for_world(self._world.art, self._world.art_pick, shots)
        # separate streams: what the boards hold, what the script does, how screens look
        self._board_rng = stream(self._seed, 3)
        self._scripts = (draw_family_scripts(self._seed, self._levels_total, self._world) if fam
                         else draw_scripts(self._seed, self._levels_total))  # fmt: skip
        self._style = C.card_style(stream(self._world.style_seed, self._seed % 1000)) if fam else None
        self._motion = (Motion(self._world.backdrop, self._size, stream(self._seed, 7, self._world.number))
                        if fam and self._world.backdrop != "still" else None)  # fmt: skip
        self._cards: list[Shown] = []  # a family world's cards, the top one last
        self._on_map = False
        self._goal_got = 0
        self._records: list[dict[str, object]] = []
        self._recorded = False
        self._shown_counts = {k: 0 for k in SCREEN_KINDS}
        self._left_counts = {k: 0 for k in SCREEN_KINDS}
        self._card_serial = 0
        self._level_retries = 0
        self._mask_for: tuple[tuple[int, tuple[int, int]], np.ndarray] | None = None
        self._levels: dict[int, Level] = {}
        # the level being played (set by _start_level)
        self._level: Level = self._level_of(1)
        self._board: Board = self._level.start_board(np.random.default_rng(0))
        self._score = 0
        self._moves_left = 0
        self._moves_made = 0
        self._settles_at = 0.0
        self._idle_from = 0.0
        self._pending_rest = False
        self._tip_shown = False
        # bumped on every change of what the game shows: the key of the frame cache
        self._version = 0
        self._segments: list[_Segment] = []
        self._pre_items: list[Item] = []
        self._looks: dict[int, tuple[Geometry, np.ndarray, np.ndarray, tuple[int, ...]]] = {}
        self._counts = {k: 0 for k in ("levels_completed", "swipes_accepted", "swipes_undone", "swipes_ignored",
                                       "swipes_while_moving", "dialogs_shown", "dialogs_closed", "forbidden_taps",
                                       "taps_ignored", "back_presses", "app_switches", "launches", "cards_shown",
                                       "ads_shown", "ads_closed", "retries", "levels_lost")}  # fmt: skip
        self._frame_cache: tuple[tuple[object, ...], np.ndarray] | None = None
        self._ad: tuple[np.ndarray, S.Button, S.Button] | None = None
        self._ad_since = 0.0
        self._card: S.Popup | None = None
        self._dialogs: list[S.Popup] = []
        self._screen = "board"
        self._switched = False
        self._last_anim_ms = 0.0
        self._anim_ms: deque[float] = deque(maxlen=1000)  # each move's animation, for the benchmark's target
        self._pre_hud = (0, 0)
        self._pre_goal = 0
        self._hint_for: tuple[Board | None, Cell | None] = (None, None)
        if fam:
            self._enter_level(1, self._clock.now())
        else:
            self._start_level(1, self._clock.now(), fresh=True)

    # -- Device protocol --------------------------------------------------------------
    def screencap(self) -> np.ndarray:
        if self._serial_captures:
            # a phone that serves one screenshot at a time: the next waits for this one
            with self._capture_lock:
                return self._capture()
        return self._capture()

    def _capture(self) -> np.ndarray:
        frame = self.frame_at(self._clock.now())
        if self._latency:
            self._clock.sleep(self._latency / 1000)
        return frame

    def on_tap(self, x: int, y: int) -> str | None:
        now = self._clock.now()
        self._advance(now)
        if self._foreground != self.package:
            self._counts["taps_ignored"] += 1  # another app has it
            return None
        if self._world.cards:
            for tp in self._tappables(now):
                x0, y0, x1, y1 = tp.box
                if x0 <= x < x1 and y0 <= y < y1:
                    self._f_act(tp, now)
                    return tp.action
            self._counts["taps_ignored"] += 1
            return None
        buttons: tuple[S.Button, ...] = ()
        if self._screen == "ad" and self._ad is not None:
            buttons = (self._ad[1],) + ((self._ad[2],) if self._ad_close_shown(now) else ())
        elif self._screen in ("card", "done") and self._card is not None:
            buttons = self._card.buttons
        elif self._dialogs:
            buttons = self._dialogs[0].buttons
        for b in buttons:
            if b.hit(x, y):
                self._act(b, now)
                return b.action
        self._counts["taps_ignored"] += 1
        return None

    def on_swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: float) -> str:
        now = self._clock.now()
        self._advance(now)
        if self._foreground != self.package or self._screen != "board" or self._dialogs or self._cards or self._on_map:
            self._counts["swipes_ignored"] += 1
            return "ignored"
        if now < self._settles_at:
            self._counts["swipes_while_moving"] += 1
            return "while_moving"
        self._idle_from = now
        cells = self._swap_for(x1, y1, x2, y2)
        if cells is None:
            self._counts["swipes_ignored"] += 1
            return "ignored"
        before = self._board
        out = play(before, cells[0], cells[1], self._level.colours, self._board_rng)
        start = now + duration_ms / 1000  # the game reacts when the finger lifts
        self._schedule(before, out, start)
        if not out.applied:
            self._counts["swipes_undone"] += 1
            return "undone"
        assert out.board is not None
        self._counts["swipes_accepted"] += 1
        self._board = out.board
        self._version += 1
        self._score += out.points
        self._goal_got += outcome_progress(self._level.goal, out)
        self._moves_left -= 1
        self._moves_made += 1
        self._pending_rest = True
        return "accepted"

    def on_key(self, code: int) -> None:
        now = self._clock.now()
        self._advance(now)
        if code != KEYCODE_BACK:
            return
        self._counts["back_presses"] += 1
        if self._foreground == STORE_PACKAGE:
            self._foreground = self.package  # the store goes back to the game that opened it
        elif self._foreground != self.package:
            return
        elif self._world.cards:
            self._f_back(now)
        elif self._screen == "ad":
            if self._ad_close_shown(now):
                self._close_ad(now)
        elif self._screen == "board" and self._dialogs and self._dialogs[0].back_closes:
            self._close_dialog(now)

    def on_launch(self) -> None:
        self._counts["launches"] += 1
        # the game comes back where it was: nothing of its state changes

    # -- inspection (tests, truth) -----------------------------------------------------
    def truth(self) -> dict[str, object]:
        self._advance(self._clock.now())
        out: dict[str, object] = dict(self._counts)
        g = self._level.goal
        out.update(world=self._world.number, levels_won=self._counts["levels_completed"],
                   levels=[dict(r) for r in self._records], screens_shown=dict(self._shown_counts),
                   screens_left=dict(self._left_counts), goal_kind=g.kind,
                   goal_count=g.count if g.kind != SCORE else self._level.target,
                   goal_progress=self._goal_got if g.kind != SCORE else self._score,
                   screen_detail=self.screen_detail)  # fmt: skip
        out.update(level=self._level.number, score=self._score, moves_left=self._moves_left, target=self._level.target,
                   screen=self.screen_kind, foreground=self._foreground, tiles=self._art.source,
                   shape=self._level.shape, rows=self._level.rows, cols=self._level.cols,
                   colours=self._level.colours, moves_budget=self._level.moves,
                   animation_ms_median=float(np.median(self._anim_ms)) if self._anim_ms else 0.0,
                   animation_ms_each=[round(v, 1) for v in self._anim_ms])  # fmt: skip
        return out

    def status_line(self) -> str:
        c = self._counts
        return (f"level {self._level.number} moves {self._moves_left} score {self._score}/{self._level.target}"
                f" | completed {c['levels_completed']} accepted {c['swipes_accepted']} undone {c['swipes_undone']}"
                f" ignored {c['swipes_ignored']} while-moving {c['swipes_while_moving']}"
                f" dialogs {c['dialogs_closed']}/{c['dialogs_shown']} forbidden {c['forbidden_taps']}"
                f" | {self.screen_kind}")  # fmt: skip

    @property
    def screen_kind(self) -> str:
        self._advance(self._clock.now())
        if self._foreground != self.package:
            return "other_app"
        if self._screen == "ad":
            return "ad"
        if self._cards:
            return "dialog" if self._cards[-1].kind in ("daily", "offer", "tip", "quit") else "card"
        if self._on_map:
            return "map"
        if self._screen in ("card", "done"):
            return "card"
        return "dialog" if self._dialogs else "board"

    @property
    def screen_detail(self) -> str:
        """What is in front, finer than `screen_kind`: a card's kind, "map", "ad", "board"."""
        kind = self.screen_kind
        if kind in ("card", "dialog"):
            if self._cards:
                return self._cards[-1].kind
            if self._screen in ("card", "done") and self._card is not None:
                return self._card.kind
            return self._dialogs[0].kind if self._dialogs else kind
        return kind

    @property
    def world(self) -> SagaWorld:
        return self._world

    def true_goal(self) -> Goal:
        """The current level's goal (tests; a score goal's target is `level.target`)."""
        return self._level.goal

    @property
    def board_kinds(self) -> list[str]:
        return self._board.kinds()

    @property
    def board(self) -> Board:
        return self._board

    @property
    def board_bbox(self) -> tuple[int, int, int, int]:
        return self._geometry().bbox

    @property
    def level(self) -> Level:
        return self._level

    @property
    def timing(self) -> SagaTiming:
        return self._timing

    @property
    def animating(self) -> bool:
        return self._clock.now() < self._settles_at

    @property
    def settles_at(self) -> float:
        return self._settles_at

    @property
    def buttons(self) -> tuple[S.Button, ...]:
        """The buttons on screen now (tests); a family world's tappables as buttons."""
        now = self._clock.now()
        self._advance(now)
        if self._foreground != self.package:
            return ()
        if self._world.cards:
            return tuple(S.Button(t.label, t.action, t.box, forbidden=t.forbidden) for t in self._tappables(now))
        if self._screen == "ad" and self._ad is not None:
            return (self._ad[1],) + ((self._ad[2],) if self._ad_close_shown(now) else ())
        if self._screen in ("card", "done") and self._card is not None:
            return self._card.buttons
        return self._dialogs[0].buttons if self._dialogs else ()

    def planned_level(self, k: int) -> Level:
        """Level k as this game will play it (tests and benchmarks pick games by it)."""
        return self._family_level(k) if self._world.number else self._level_of(k)

    def script(self, k: int) -> Script:
        """The seeded events of level k (tests)."""
        return self._scripts[k - 1]

    def cell_centre(self, r: int, c: int) -> tuple[int, int]:
        x, y = self._geometry().centre(r, c)
        return int(x), int(y)

    def animation_ms(self) -> float:
        """The animation time of the last move (the swap, its waves, a reshuffle)."""
        return self._last_anim_ms

    def __repr__(self) -> str:
        w, h = self._size
        return f"SagaPhone(serial={self._serial!r}, {w}x{h}, seed={self._seed}, tiles={self._art.source!r})"

    # -- levels and events ---------------------------------------------------------------
    def _level_of(self, k: int) -> Level:
        if k not in self._levels:
            self._levels[k] = self._family_level(k) if self._world.cards else level_of(self._seed, k)
        return self._levels[k]

    def _start_level(self, k: int, now: float, fresh: bool) -> None:
        self._version += 1
        again = k == self._level.number and self._moves_made + len(self._records) > 0
        self._level_retries = self._level_retries + 1 if again else 0
        self._level = self._level_of(k)
        self._goal_got = 0
        self._recorded = False
        self._cards = []
        self._board = self._level.start_board(self._board_rng)
        self._score = 0
        self._moves_left = self._level.moves
        self._moves_made = 0
        self._segments = []
        self._settles_at = now
        self._idle_from = now
        self._pending_rest = False
        self._pre_items = []
        self._screen = "board"
        self._card = None
        self._tip_shown = False
        self._dialogs = []
        if k < self._levels_total and isinstance(self._clock, RealClock):
            # on a phone in real time, the next level (its target is found by playing it)
            # is drawn meanwhile, so tapping Next does not stall the screen
            threading.Thread(target=self._level_of, args=(k + 1,), daemon=True).start()
        script = self._scripts[k - 1]
        if fresh and not self._world.cards:
            if script.daily:
                self._show(self._daily_popup(), now)
            if script.offer:
                self._show(self._offer_popup(), now)

    def _show(self, p: S.Popup, now: float) -> None:
        self._version += 1
        self._dialogs.append(p)
        self._counts["dialogs_shown"] += 1

    def _close_dialog(self, now: float) -> None:
        self._version += 1
        self._dialogs.pop(0)
        self._counts["dialogs_closed"] += 1
        self._idle_from = now

    def _advance(self, now: float) -> None:
        """What happens on its own once the board comes to rest after a move."""
        if not self._pending_rest or now < self._settles_at or self._screen != "board":
            return
        self._pending_rest = False
        t = self._settles_at
        self._idle_from = t
        script = self._scripts[self._level.number - 1]
        if script.switch_after is not None and not self._switched and (
                self._moves_made >= script.switch_after or self._score >= self._level.target):
            # another app comes in front (a notification tapped, a call): the game stays where it is
            self._switched = True
            self._foreground = CHAT_PACKAGE
            self._counts["app_switches"] += 1
        if self._world.cards:
            if not self._f_level_end(t) and script.tip_after is not None and not self._tip_shown and (
                    self._moves_made >= script.tip_after):
                self._tip_shown = True
                self._push("tip", t)
            return
        if self._score >= self._level.target:
            self._counts["levels_completed"] += 1
            self._show_card(self._complete_card())
        elif self._moves_left <= 0:
            self._show_card(self._failed_card())
        else:
            if script.tip_after is not None and not self._tip_shown and self._moves_made >= script.tip_after:
                self._tip_shown = True
                self._show(self._tip_popup(), t)

    def _show_card(self, card: S.Popup) -> None:
        self._version += 1
        self._card = card
        self._screen = "done" if card.kind == "done" else "card"
        self._counts["cards_shown"] += 1

    def _act(self, b: S.Button, now: float) -> None:
        self._version += 1
        if b.forbidden:
            self._counts["forbidden_taps"] += 1
            self._foreground = STORE_PACKAGE  # what a purchase or an install opens
            return
        if b.action in ("close", "collect", "ok"):
            self._close_dialog(now)
        elif b.action == "next":
            k = self._level.number
            if k >= self._levels_total:
                self._show_card(self._done_card())
            elif self._scripts[k - 1].ad_after:
                self._screen, self._card = "ad", None
                self._ad = S.ad_screen(self._size[0], self._size[1], stream(self._seed, 5, k))
                self._ad_since = now
                self._counts["ads_shown"] += 1
                self._counts["dialogs_shown"] += 1  # an ad is one more thing to dismiss
            else:
                self._start_level(k + 1, now, fresh=True)
        elif b.action == "retry":
            self._counts["retries"] += 1
            self._start_level(self._level.number, now, fresh=False)
        elif b.action == "close_ad":
            self._close_ad(now)

    def _ad_close_shown(self, now: float) -> bool:
        return now - self._ad_since >= self._timing.ad_close_after_ms / 1000

    def _close_ad(self, now: float) -> None:
        self._version += 1
        self._counts["ads_closed"] += 1
        self._counts["dialogs_closed"] += 1
        self._ad = None
        self._start_level(self._level.number + 1, now, fresh=True)

    # -- a family world's flow: map, intro, cards, dialogs, ads --------------------------------
    def _family_level(self, k: int) -> Level:
        w = self._world
        return world_level(self._seed, w.number, k, w.goal_mix, w.score_to_end, min(w.max_colours, self._art.colours))

    def _enter_level(self, k: int, now: float) -> None:
        """Level k comes next: its map (a daily bonus over it), else its intro or board."""
        self._start_level(k, now, fresh=False)
        script = self._scripts[k - 1]
        if self._world.map:
            self._on_map = True
            self._shown("map")
            if script.daily:
                self._push("daily", now)
        else:
            self._begin_play(now, daily=script.daily)

    def _begin_play(self, now: float, daily: bool = False) -> None:
        """From the map: the intro card when the world has one, else the board."""
        if self._on_map:
            self._on_map = False
            self._left("map")
        if self._world.intro:
            self._push("intro", now)
        else:
            self._board_dialogs(now, daily)

    def _board_dialogs(self, now: float, daily: bool = False) -> None:
        script = self._scripts[self._level.number - 1]
        self._idle_from = now
        if daily:
            self._push("daily", now)
        if script.offer:
            self._push("offer", now)

    def _shown(self, kind: str) -> None:
        self._shown_counts[kind] += 1
        if kind not in ("map", "intro"):
            self._counts["dialogs_shown" if kind in ("daily", "offer", "tip", "quit", "ad") else "cards_shown"] += 1

    def _left(self, kind: str) -> None:
        self._left_counts[kind] += 1
        if kind in ("daily", "offer", "tip", "quit", "ad"):
            self._counts["dialogs_closed"] += 1

    def _push(self, kind: str, now: float) -> None:
        """A card of `kind` over what is shown now, drawn once."""
        assert self._style is not None
        self._version += 1
        lv, g = self._level, self._level.goal
        icon = self._goal_icon()
        content = C.CardContent(kind, lv.number,  # type: ignore[arg-type]
                                score=self._score if kind in ("complete", "failed") else None,
                                target=lv.target if g.kind == SCORE else None,
                                goal_kind=g.kind if kind == "intro" else None,
                                goal_count=(g.count if g.kind != SCORE else None) if kind == "intro" else None,
                                goal_icon=icon if kind == "intro" else None,
                                coins=int(stream(self._seed, 9, lv.number).choice([500, 700, 900, 1200]))
                                if kind == "out_of_moves" else None)  # fmt: skip
        behind = self._behind(now)
        self._card_serial += 1
        tag = (self._seed, 8, lv.number, self._card_serial)
        frame, taps = C.draw_card(self._style, content, behind, stream(*tag))
        through = None
        if self._motion is not None and not self._on_map and not self._cards:
            # where the backdrop shows through the card: what a brighter backdrop changes
            # (over another card, the one below stays as it was drawn: nothing moves)
            lit = cv2.add(behind, np.full_like(behind, 24))
            other, _ = C.draw_card(self._style, content, lit, stream(*tag))
            through = ((np.abs(other.astype(np.int16) - frame.astype(np.int16)).max(2) > 4)
                       .astype(np.uint8) & self._look_mask())  # fmt: skip
        self._cards.append(Shown(kind, frame, taps, through))
        self._shown(kind)

    def _pop(self, now: float) -> Shown:
        self._version += 1
        top = self._cards.pop()
        self._left(top.kind)
        self._idle_from = now
        return top

    def _behind(self, now: float) -> np.ndarray:
        if self._on_map:
            assert self._style is not None
            return C.draw_map(self._style, self._size, self._level.number, self._map_rng(), now)[0]
        if self._cards:
            return self._cards[-1].frame.copy()
        _, _, base, _ = self._look()
        return self._compose(base, self._items(self._board), self._score, self._moves_left, self._goal_got)

    def _map_rng(self) -> np.random.Generator:
        return stream(self._seed, 10, self._level.number)

    def _ad_rng(self) -> np.random.Generator:
        return stream(self._seed, 5, self._level.number)

    def _goal_icon(self) -> tuple[np.ndarray, np.ndarray] | None:
        g = self._level.goal
        n = max(16, self._geometry().cell)
        if g.kind == COLLECT:
            return self._art.sprite(sprite_key(g.colour, 0, self._variant(g.colour)), n)
        if g.kind == BREAK:
            return self._art.sprite(("blocker", 2), n)
        return None

    def _tappables(self, now: float) -> tuple[C.Tappable, ...]:
        assert self._style is not None
        if self._foreground != self.package:
            return ()
        if self._screen == "ad":
            return C.draw_ad(self._style, self._size, self._ad_rng(), now, self._ad_since,
                             self._timing.ad_close_after_ms / 1000)[1]  # fmt: skip
        if self._cards:
            return self._cards[-1].taps
        if self._on_map:
            return C.draw_map(self._style, self._size, self._level.number, self._map_rng(), now)[1]
        return ()

    def _f_act(self, tp: C.Tappable, now: float) -> None:
        self._version += 1
        a = tp.action
        if tp.forbidden:
            self._counts["forbidden_taps"] += 1
            if a in LOSES_LEVEL:
                self._lose_level(now)
            else:
                self._foreground = STORE_PACKAGE  # what a purchase, an install or a share opens
            return
        if self._screen == "ad":
            if a == "close_ad":
                self._f_close_ad(now)
            return
        top = self._cards[-1].kind if self._cards else ("map" if self._on_map else "board")
        if a == "none":
            self._counts["taps_ignored"] += 1
        elif top == "map":
            if a == "play_level":
                self._begin_play(now, daily=False)
        elif top == "intro":
            self._pop(now)
            if a == "close" and self._world.map:
                self._on_map = True
                self._shown("map")
            else:
                self._board_dialogs(now)
        elif top in ("daily", "offer", "tip"):
            self._pop(now)
        elif top == "quit":
            self._pop(now)  # resume: the level goes on where it was
        elif top == "complete":
            self._pop(now)
            self._after_win(now)
        elif top == "out_of_moves":
            self._pop(now)
            self._record(False)
            self._push("failed", now)
        elif top == "failed":
            self._pop(now)
            if a == "retry" or not self._world.map:
                self._counts["retries"] += 1
                self._retry(now)
            else:
                self._enter_level(self._level.number, now)
        elif top == "done":
            pass

    def _retry(self, now: float) -> None:
        self._start_level(self._level.number, now, fresh=False)
        if self._world.intro:
            self._push("intro", now)
        else:
            self._board_dialogs(now)

    def _after_win(self, now: float) -> None:
        k = self._level.number
        if k >= self._levels_total:
            self._push("done", now)
        elif self._scripts[k - 1].ad_after:
            self._screen = "ad"
            self._ad_since = now
            self._counts["ads_shown"] += 1
            self._shown("ad")
        else:
            self._enter_level(k + 1, now)

    def _f_close_ad(self, now: float) -> None:
        self._version += 1
        self._screen = "board"
        self._counts["ads_closed"] += 1
        self._left("ad")
        self._enter_level(self._level.number + 1, now)

    def _lose_level(self, now: float) -> None:
        """Quit or Give up: the level is lost, and it starts again (from the map)."""
        while self._cards:
            self._pop(now)
        self._record(False)
        if self._world.map:
            self._enter_level(self._level.number, now)
        else:
            self._retry(now)

    def _record(self, won: bool) -> None:
        if self._recorded:
            return
        self._recorded = True
        g = self._level.goal
        if won:
            self._counts["levels_completed"] += 1
        else:
            self._counts["levels_lost"] += 1
        self._records.append({"level": self._level.number, "goal": g.kind,
                              "target": g.count if g.kind != SCORE else self._level.target,
                              "moves_used": self._moves_made, "won": won, "score": self._score,
                              "retries": self._level_retries})  # fmt: skip

    def _f_back(self, now: float) -> None:
        if self._screen == "ad":
            if self._ad_close_shown(now):
                self._f_close_ad(now)
            return
        if self._cards:
            top = self._cards[-1]
            closes = {t.action for t in top.taps} & {"close", "resume", "ok"}
            if top.kind == "quit":
                self._pop(now)
            elif top.kind in ("daily", "offer", "tip") and closes:
                self._pop(now)
            elif top.kind == "out_of_moves":
                self._pop(now)
                self._record(False)
                self._push("failed", now)
            elif top.kind == "intro" and self._world.map:
                self._pop(now)
                self._on_map = True
                self._shown("map")
            return
        if self._on_map:
            return
        if self._world.quit_dialog and now >= self._settles_at:
            self._push("quit", now)

    def _f_level_end(self, t: float) -> bool:
        """After a move comes to rest: the level won or out of moves (True), else False."""
        lv, g = self._level, self._level.goal
        if g.kind == SCORE:
            met = self._score >= lv.target
            over = self._moves_left <= 0
            won = met and (over or not g.to_the_end)
        else:
            won = self._goal_got >= g.count
            over = self._moves_left <= 0
        if won:
            self._record(True)
            self._push("complete", t)
            return True
        if over:
            self._push("out_of_moves", t)
            return True
        return False

    def _look_mask(self) -> np.ndarray:
        """Where the animated backdrop shows on the board's screen: not the board's panel
        (it shows through the board's holes and cut corners, as behind real games' boards),
        not the header."""
        k = self._level.number
        if self._mask_for is None or self._mask_for[0] != (k, self._size):
            w, h = self._size
            mask = np.ones((h, w), np.uint8)
            geo = self._geometry()
            m = max(2, geo.cell // 10) * 3
            holes = self._level.hole_mask()
            for r in range(geo.rows):
                for c in range(geo.cols):
                    if not holes[r, c]:
                        cx0, cy0 = geo.x0 + c * geo.cell, geo.y0 + r * geo.cell
                        mask[max(0, cy0 - m) : cy0 + geo.cell + m, max(0, cx0 - m) : cx0 + geo.cell + m] = 0
            mask[: int(h * H.HEADER_BOTTOM)] = 0
            self._mask_for = ((k, self._size), mask)
        return self._mask_for[1]

    # -- popups and cards ----------------------------------------------------------------
    def _panel(self, w_share: float, h_share: float, cy_share: float = 0.5) -> tuple[int, int, int, int]:
        w, h = self._size
        pw, ph = int(w * w_share), int(h * h_share)
        x0, y0 = (w - pw) // 2, int(h * cy_share - ph / 2)
        return x0, y0, x0 + pw, y0 + ph

    def _row_buttons(self, box: tuple[int, int, int, int], specs: list[tuple[str, str, tuple[int, int, int], bool]],
                     y_share: float = 0.72) -> list[S.Button]:  # fmt: skip
        x0, y0, x1, y1 = box
        w, h = x1 - x0, y1 - y0
        n = len(specs)
        bh = int(min(h * 0.2, self._size[1] * 0.055))
        gap = int(w * 0.06)
        bw = (w - gap * (n + 1)) // n
        by = y0 + int(h * y_share)
        return [S.Button(label, action, (x0 + gap + i * (bw + gap), by, x0 + gap + i * (bw + gap) + bw, by + bh), colour, bad)
                for i, (label, action, colour, bad) in enumerate(specs)]  # fmt: skip

    def _close_x(self, box: tuple[int, int, int, int]) -> S.Button:
        x0, y0, x1, y1 = box
        s = int((x1 - x0) * 0.13)
        return S.Button("X", "close", (x1 - s * 3 // 4, y0 - s // 4, x1 + s // 4, y0 + s * 3 // 4), S.RED, round_=True)

    def _daily_popup(self) -> S.Popup:
        box = self._panel(0.8, 0.3)
        buttons = self._row_buttons(box, [("Collect", "collect", S.GREEN, False)])
        return S.Popup("daily", "Daily Bonus", ("Day 3 reward:", "100 coins"), tuple(buttons), box, False, True, S.ORANGE)

    def _offer_popup(self) -> S.Popup:
        box = self._panel(0.84, 0.32)
        buttons = self._row_buttons(box, [("Buy", "buy", S.GREEN, True)])
        return S.Popup("offer", "Special Offer!", ("500 coins $4.99",), tuple(buttons) + (self._close_x(box),), box, True,
                       True, S.RED)  # fmt: skip

    def _tip_popup(self) -> S.Popup:
        x0, y0, x1, y1 = self._geometry().bbox
        w, h = self._size
        ph = int(h * 0.2)
        top = min(max(y0 + (y1 - y0) // 2, int(h * 0.2)), h - ph - int(h * 0.02))
        box = (int(w * 0.08), top, int(w * 0.92), top + ph)
        buttons = self._row_buttons(box, [("OK", "ok", S.BLUE, False)], 0.68)
        return S.Popup("tip", "Tip", ("Match 4 for a striped tile",), tuple(buttons), box, True, False, S.BLUE)

    def _complete_card(self) -> S.Popup:
        box = self._panel(0.84, 0.36)
        buttons = self._row_buttons(box, [("Share", "share", S.BLUE, True), ("Next", "next", S.GREEN, False)])
        return S.Popup("complete", f"LEVEL {self._level.number} COMPLETE", (f"Score {self._score}",), tuple(buttons),
                       box, False, False, S.GREEN)  # fmt: skip

    def _failed_card(self) -> S.Popup:
        box = self._panel(0.84, 0.36)
        buttons = self._row_buttons(box, [("+5 Moves $0.99", "buy_moves", S.ORANGE, True), ("Retry", "retry", S.GREEN, False)])
        return S.Popup("failed", "Out of moves", (f"Score {self._score} of {self._level.target}",),
                       tuple(buttons) + (S.Button("X", "retry", self._close_x(box).box, S.RED, round_=True),), box,
                       False, False, S.RED)  # fmt: skip

    def _done_card(self) -> S.Popup:
        return S.Popup("done", "ALL LEVELS COMPLETE", ("Thanks for playing",), (), self._panel(0.84, 0.3), False, False,
                       S.GREEN)  # fmt: skip

    # -- swipes and animation ---------------------------------------------------------------
    def _swap_for(self, x1: int, y1: int, x2: int, y2: int) -> tuple[Cell, Cell] | None:
        g = self._geometry()
        a = g.cell_at(x1, y1)
        if a is None or not self._board.is_tile(*a):
            return None
        dx, dy = x2 - x1, y2 - y1
        if abs(dx) >= abs(dy):
            dist, o = abs(dx), (a[0], a[1] + (1 if dx > 0 else -1))
        else:
            dist, o = abs(dy), (a[0] + (1 if dy > 0 else -1), a[1])
        if dist <= g.cell / 3 or not can_swap(self._board, a, o):
            return None
        return a, o

    def _schedule(self, before: Board, out: Outcome, start: float) -> None:
        tm = self._timing
        self._pre_items = self._items(before)
        self._pre_hud = (self._score, self._moves_left)
        segs: list[_Segment] = []
        t = start
        score, moves, got = self._score, self._moves_left, self._goal_got
        self._pre_goal = got
        goal = self._level.goal

        def add(ms: float, draw: Callable[[float], list[Item]]) -> None:
            nonlocal t
            if ms > 0:
                segs.append(_Segment(t, t + ms / 1000, draw, score, moves, got))
                t += ms / 1000

        a, o = out.move
        if not out.applied:
            add(tm.swap_ms, self._swap_draw(before, a, o, True))
            add(tm.swap_ms, self._swap_draw(before, a, o, False))
        else:
            moves -= 1
            add(tm.swap_ms, self._swap_draw(before, a, o, True))
            for ph in out.phases:
                score += ph.points
                got += phase_progress(goal, ph)
                add(tm.clear_ms, self._clear_draw(ph))
                add(tm.fall_ms, self._fall_draw(ph))
            if out.shuffled_from is not None and out.board is not None:
                add(tm.shuffle_ms, self._shuffle_draw(out.shuffled_from, out.board))
        self._segments = segs
        self._settles_at = t
        self._last_anim_ms = tm.move_ms(out)
        self._anim_ms.append(self._last_anim_ms)

    def _variant(self, colour: int) -> int:
        return self._look()[3][colour % len(self._look()[3])]

    def _item(self, b: Board, r: int, c: int, rr: float | None = None, cc: float | None = None) -> Item | None:
        g = self._geometry()
        x, y = g.centre(r if rr is None else rr, c if cc is None else cc)
        if b.hole[r, c]:
            return None
        if b.blocker[r, c] > 0:
            return Item(("blocker", int(b.blocker[r, c])), x, y)
        colour, special = int(b.colour[r, c]), int(b.special[r, c])
        if colour < 0 and special == 0:
            return None
        return Item(sprite_key(colour, special, self._variant(colour) if colour >= 0 else 0), x, y)

    def _items(self, b: Board, skip: frozenset[Cell] | set[Cell] = frozenset()) -> list[Item]:
        rows, cols = b.shape
        out = []
        for r in range(rows):
            for c in range(cols):
                if (r, c) in skip:
                    continue
                it = self._item(b, r, c)
                if it is not None:
                    out.append(it)
        return out

    def _swap_draw(self, b: Board, a: Cell, o: Cell, forward: bool) -> Callable[[float], list[Item]]:
        still = self._items(b, {a, o})
        ia, io = self._item(b, *a), self._item(b, *o)
        assert ia is not None and io is not None

        def draw(p: float) -> list[Item]:
            e = _smooth(p if forward else 1 - p)
            return still + [Item(ia.key, ia.x + (io.x - ia.x) * e, ia.y + (io.y - ia.y) * e),
                            Item(io.key, io.x + (ia.x - io.x) * e, io.y + (ia.y - io.y) * e)]  # fmt: skip

        return draw

    def _clear_draw(self, ph: Phase) -> Callable[[float], list[Item]]:
        still = self._items(ph.before, set(ph.cleared) | set(ph.hits))
        popping = [it for cell in sorted(ph.cleared) if (it := self._item(ph.before, *cell)) is not None]
        hit_before = [it for cell in sorted(ph.hits) if (it := self._item(ph.before, *cell)) is not None]
        hit_after = [it for cell in sorted(ph.hits) if (it := self._item(ph.after_clear, *cell)) is not None]
        made = [it for r, c, _, _ in ph.created if (it := self._item(ph.after_clear, r, c)) is not None]
        # the points pop up over what cleared, as games show them, and rise
        cx = float(np.mean([it.x for it in popping])) if popping else 0.0
        cy = float(np.mean([it.y for it in popping])) if popping else 0.0
        label: tuple[object, ...] = ("text", f"+{ph.points}")
        rise = self._geometry().cell * 0.6

        def draw(p: float) -> list[Item]:
            out = still + [Item(it.key, it.x, it.y, 1 - 0.8 * p, 1 - p * p) for it in popping]
            if p < 0.5:
                out += [Item(it.key, it.x, it.y, 1 + 0.1 * math.sin(p * 6 * math.pi)) for it in hit_before]
            else:
                out += [Item(it.key, it.x, it.y, 0.4 + 0.6 * p, p) for it in hit_after]
            out += [Item(it.key, it.x, it.y, p, p) for it in made]
            return out + ([Item(label, cx, cy - rise * p)] if popping and ph.points else [])

        return draw

    def _fall_draw(self, ph: Phase) -> Callable[[float], list[Item]]:
        b = ph.after
        rows, cols = b.shape
        moving: list[tuple[int, int, int]] = []
        fixed: list[Item] = []
        for r in range(rows):
            for c in range(cols):
                if b.hole[r, c]:
                    continue
                src = int(ph.sources[r, c])
                if b.blocker[r, c] > 0 or src == -999:
                    it = self._item(b, r, c)
                    if it is not None:
                        fixed.append(it)
                else:
                    moving.append((src, r, c))

        def draw(p: float) -> list[Item]:
            e = p * p  # accelerating, like something dropped
            out = list(fixed)
            for src, r, c in moving:
                it = self._item(b, r, c, src + (r - src) * e, c)
                if it is not None:
                    out.append(it)
            return out

        return draw

    def _shuffle_draw(self, was: Board, now: Board) -> Callable[[float], list[Item]]:
        old, new = self._items(was), self._items(now)

        def draw(p: float) -> list[Item]:
            if p < 0.5:
                k = 1 - 2 * p
                return [it if it.key[0] == "blocker" else Item(it.key, it.x, it.y, 0.2 + 0.8 * k, k, 90 * (1 - k)) for it in old]
            k = 2 * p - 1
            return [it if it.key[0] == "blocker" else Item(it.key, it.x, it.y, 0.2 + 0.8 * k, k, -90 * (1 - k)) for it in new]

        return draw

    # -- frames ----------------------------------------------------------------------------
    def _geometry(self) -> Geometry:
        return self._look()[0]

    def _look(self) -> tuple[Geometry, np.ndarray, np.ndarray, tuple[int, ...]]:
        """The level's geometry, its screen without the board (background and header),
        with the board's panel and slots, and each colour's exemplar."""
        k = self._level.number
        if k not in self._looks:
            if len(self._looks) > 3:
                self._looks.pop(min(self._looks))
            self._looks[k] = self._make_look(self._level)
        return self._looks[k]

    def _make_look(self, lv: Level) -> tuple[Geometry, np.ndarray, np.ndarray, tuple[int, ...]]:
        w, h = self._size
        rng = stream(self._seed, 4, lv.number)
        cell = int(min(w * rng.uniform(0.84, 0.95) / lv.cols, h * 0.5 / lv.rows))
        bw, bh = cell * lv.cols, cell * lv.rows
        top, bottom = int(h * 0.17), int(h * 0.9) - bh
        y0 = int(rng.uniform(top, max(top, bottom)))
        slack = max(0, (w - bw) // 2 - int(w * 0.02))
        x0 = (w - bw) // 2 + int(rng.uniform(-1, 1) * min(slack, w * 0.03))
        geo = Geometry(x0, y0, cell, lv.rows, lv.cols)
        kind = BACKGROUNDS[int(rng.integers(len(BACKGROUNDS)))]
        sw, sh = max(16, w // 4), max(16, h // 4)  # textured at a quarter size: the look, not the cost
        bg = background(rng, sw, sh, kind)
        base = cv2.resize(np.clip(bg * 255 + 0.5, 0, 255).astype(np.uint8), (w, h), interpolation=cv2.INTER_CUBIC)
        grain = cv2.resize(rng.integers(-6, 7, (h // 4, w // 4), dtype=np.int16), (w, h), interpolation=cv2.INTER_NEAREST)
        base = np.clip(base.astype(np.int16) + grain[..., None], 0, 255).astype(np.uint8)
        if self._world.cards:
            H.draw_base(base, self._world.header)
        else:
            S.header_base(base)
        plain = base.copy()
        # the board's panel under every cell that is not a hole, then the slots
        holes = lv.hole_mask()
        m = max(2, cell // 10)
        # (drawn inside the board's box and a margin only: the rest of the screen is untouched)
        px0, py0 = max(0, x0 - 3 * m), max(0, y0 - 3 * m)
        px1, py1 = min(w, x0 + bw + 3 * m), min(h, y0 + bh + 3 * m)
        mask = np.zeros((py1 - py0, px1 - px0), np.uint8)
        for r in range(lv.rows):
            for c in range(lv.cols):
                if not holes[r, c]:
                    cx0, cy0 = x0 + c * cell - px0, y0 + r * cell - py0
                    cv2.rectangle(mask, (cx0 - m, cy0 - m), (cx0 + cell + m - 1, cy0 + cell + m - 1), 255, -1)
        soft = cv2.GaussianBlur(mask, (0, 0), max(1.0, m / 2))
        a = (soft.astype(np.float32) / 255 * 0.78)[..., None]
        panel = np.array([40, 22, 30], np.float32)
        region = base[py0:py1, px0:px1]
        region[:] = (region.astype(np.float32) * (1 - a) + panel * a).astype(np.uint8)
        tints = (np.array([88, 62, 72], np.int16), np.array([70, 48, 58], np.int16))
        for r in range(lv.rows):
            for c in range(lv.cols):
                if holes[r, c]:
                    continue
                cx0, cy0 = x0 + c * cell, y0 + r * cell
                inset = max(1, cell // 30)
                tint = tuple(int(v) for v in tints[(r + c) % 2])
                S.rounded(base, (cx0 + inset, cy0 + inset, cx0 + cell - inset, cy0 + cell - inset), cell // 8, tint)  # type: ignore[arg-type]
        variants = tuple(int(rng.integers(self._art.variants)) for _ in range(8))
        return geo, plain, base, variants

    def frame_at(self, t: float) -> np.ndarray:
        self._advance(t)
        w, h = self._size
        if self._foreground == CHAT_PACKAGE:
            return self._cached(("chat",), lambda: S.app_screen(w, h, "Chat", _CHAT_ROWS, (160, 110, 20)))
        if self._foreground == STORE_PACKAGE:
            return self._cached(("store",), lambda: S.app_screen(w, h, "Store", _STORE_ROWS, (90, 140, 30)))
        if self._world.cards:
            return self._f_frame(t)
        if self._screen == "ad" and self._ad is not None:
            shown = self._ad_close_shown(t)
            ad = self._ad

            def draw_ad() -> np.ndarray:
                img = ad[0].copy()
                if shown:
                    S.button(img, ad[2])
                return img

            return self._cached(("ad", self._version, shown), draw_ad)
        geo, plain, base, _ = self._look()
        if self._screen in ("card", "done") and self._card is not None:
            card = self._card

            def draw_card() -> np.ndarray:
                img = plain.copy()
                S.header_text(img, self._level.number, self._level.target, self._moves_left, self._score)
                S.popup(img, card)
                return img

            return self._cached(("card", self._version), draw_card)
        if self._dialogs:
            dlg = self._dialogs[0]

            def draw_dialog() -> np.ndarray:
                img = self._board_frame(t, hint=False)
                if dlg.dim:
                    img = S.dim(img)
                S.popup(img, dlg)
                return img

            return self._cached(("dialog", self._version), draw_dialog)
        return self._board_frame(t, hint=True)

    def _f_frame(self, t: float) -> np.ndarray:
        style = self._style
        assert style is not None
        if self._screen == "ad":
            return C.draw_ad(style, self._size, self._ad_rng(), t, self._ad_since, self._timing.ad_close_after_ms / 1000)[0]
        if self._cards:
            top = self._cards[-1]
            img = top.frame.copy()
            if self._motion is not None and top.through is not None:
                self._motion.apply(img, t, top.through, style.dim)
            return img
        if self._on_map:
            return C.draw_map(style, self._size, self._level.number, self._map_rng(), t)[0]
        img = self._board_frame(t, hint=True)
        if self._motion is not None:
            self._motion.apply(img, t, self._look_mask())
        return img

    def _cached(self, key: tuple[object, ...], make: Callable[[], np.ndarray]) -> np.ndarray:
        if self._frame_cache is None or self._frame_cache[0] != key:
            self._frame_cache = (key, make())
        return self._frame_cache[1].copy()

    def _board_frame(self, t: float, hint: bool) -> np.ndarray:
        geo, _, base, _ = self._look()
        if t < self._settles_at and self._segments:
            if t < self._segments[0].start:
                # the finger is still on the glass: the board has not reacted yet
                return self._compose(base, self._pre_items, *self._pre_hud, self._pre_goal)
            for seg in self._segments:
                if seg.start <= t < seg.end:
                    return self._compose(base, seg.draw((t - seg.start) / (seg.end - seg.start)), seg.score, seg.moves,
                                         seg.goal)  # fmt: skip
        # at rest: one picture of the board, and the hint tile drawn over it when idle
        wiggle = hint and t - max(self._idle_from, self._settles_at) >= self._timing.hint_after_ms / 1000
        hint_cell = self._hint_cell() if wiggle else None
        key = ("rest", self._version, hint_cell)
        items_skip = {hint_cell} if hint_cell is not None else set()
        img = self._cached(key, lambda: self._compose(base, self._items(self._board, items_skip), self._score,
                                                      self._moves_left, self._goal_got))  # fmt: skip
        if hint_cell is not None:
            it = self._item(self._board, *hint_cell)
            if it is not None:
                ph = 2 * math.pi * (t - max(self._idle_from, self._settles_at)) / max(1e-3, self._timing.wiggle_period_ms / 1000)
                if self._world.hint == "glow":
                    self._glow(img, it, geo, 0.5 + 0.5 * math.sin(ph))
                    self._paste(img, it, geo)
                elif self._world.hint == "sparkle":
                    self._paste(img, it, geo)
                    self._sparkle(img, it, geo, ph)
                else:
                    off = 0.05 * geo.cell * math.sin(ph)
                    self._paste(img, Item(it.key, it.x + off, it.y, 1.0, 1.0, 12 * math.sin(ph)), geo)
        return img

    def _glow(self, img: np.ndarray, it: Item, geo: Geometry, k: float) -> None:
        """A pulsing light behind the hint tile."""
        n = geo.cell
        x0, y0 = int(it.x - n / 2), int(it.y - n / 2)
        region = img[max(0, y0) : y0 + n, max(0, x0) : x0 + n]
        lift = np.zeros(region.shape[:2], np.uint8)
        cv2.circle(lift, (n // 2 - max(0, -x0), n // 2 - max(0, -y0)), int(n * 0.48), int(40 + 100 * k), -1, cv2.LINE_AA)
        cv2.add(region, cv2.cvtColor(lift, cv2.COLOR_GRAY2BGR), dst=region)

    def _sparkle(self, img: np.ndarray, it: Item, geo: Geometry, ph: float) -> None:
        """A small star circling the hint tile."""
        n = geo.cell
        cx, cy = it.x + 0.36 * n * math.cos(ph), it.y + 0.36 * n * math.sin(ph)
        r = max(2, n // 9)
        for a in (0.0, math.pi / 2):
            dx, dy = r * math.cos(a), r * math.sin(a)
            cv2.line(img, (int(cx - dx), int(cy - dy)), (int(cx + dx), int(cy + dy)), (255, 255, 255), max(1, n // 30), cv2.LINE_AA)
        cv2.circle(img, (int(cx), int(cy)), max(1, r // 3), (200, 255, 255), -1, cv2.LINE_AA)

    def _hint_cell(self) -> Cell | None:
        if self._hint_for[0] is not self._board:
            moves = matching_swaps(self._board)
            self._hint_for = (self._board, moves[0][0] if moves else None)
        return self._hint_for[1]

    def _compose(self, base: np.ndarray, items: list[Item], score: int, moves: int, got: int = 0) -> np.ndarray:
        img = base.copy()
        if self._world.cards:
            g, lv = self._level.goal, self._level
            values = H.HeaderValues(lv.number, max(0, moves), score, lv.target, g.kind, max(0, g.count - got), g.count)
            H.draw_text(img, self._world.header, values, self._goal_icon())
        else:
            S.header_text(img, self._level.number, self._level.target, max(0, moves), score)
        geo = self._geometry()
        for it in items:
            self._paste(img, it, geo)
        return img

    def _paste(self, img: np.ndarray, it: Item, geo: Geometry) -> None:
        if it.alpha <= 0.01 or it.scale <= 0.02:
            return
        n = geo.cell
        if it.key[0] == "text":
            half = n // 2
            box = (int(it.x) - n, int(it.y) - half, int(it.x) + n, int(it.y) + half)
            S.text_in(img, str(it.key[1]), box, (60, 200, 255), S.INK, 0.6)
            return
        bgr, alpha = self._art.sprite(it.key, n)
        if it.scale != 1.0 or it.angle:
            m = cv2.getRotationMatrix2D((n / 2, n / 2), it.angle, it.scale)
            bgr = cv2.warpAffine(bgr, m, (n, n), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0))
            alpha = cv2.warpAffine(alpha, m, (n, n), flags=cv2.INTER_LINEAR, borderValue=0)
        x, y = int(round(it.x - n / 2)), int(round(it.y - n / 2))
        bx0, by0, bx1, by1 = geo.bbox
        # pieces falling in from above appear from the board's top edge
        cx0, cy0, cx1, cy1 = max(x, bx0, 0), max(y, by0, 0), min(x + n, bx1, img.shape[1]), min(y + n, by1, img.shape[0])
        if cx1 <= cx0 or cy1 <= cy0:
            return
        a = np.ascontiguousarray(alpha[cy0 - y : cy1 - y, cx0 - x : cx1 - x], np.float32)
        if it.alpha != 1.0:
            a = a * np.float32(it.alpha)
        region = img[cy0:cy1, cx0:cx1]
        src = np.ascontiguousarray(bgr[cy0 - y : cy1 - y, cx0 - x : cx1 - x])
        # OpenCV's blend: the same mix as the float sum, at a tenth of its cost
        region[:] = cv2.blendLinear(src, np.ascontiguousarray(region), a, 1.0 - a)


_CHAT_ROWS = [("Alex", "are you coming tonight?"), ("Sam", "sent a photo"), ("Mum", "call me when you can"),
              ("Team", "meeting moved to 3pm"), ("Jo", "haha yes"), ("Chris", "see you there"),
              ("Dana", "thanks!"), ("Lee", "ok")]  # fmt: skip
_STORE_ROWS = [("Coin pack", "500 coins  $4.99"), ("Mega pack", "2000 coins  $14.99"),
               ("Extra moves", "+5 moves  $0.99"), ("Kingdom Builder", "Install")]  # fmt: skip
