"""A base for simulated phones of any game.

It holds what every simulated phone shares (identity, screen size, clock, gesture
checks and log) so a game only says how it draws itself and how it answers a tap or a
swipe. `agent.games.match3.sim.SimPhone` is the match-3 phone; other games subclass this.

The gesture log keeps only the last `GESTURE_LOG_SIZE` gestures (with counters of all of
them): a phone served for hours, or one command line of thousands of taps, must not
grow without bound.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from agent.device.base import KEYCODE_BACK, check_point
from agent.device.clock import Clock, RealClock
from agent.errors import GestureError

# Enough for any test or game to look back over a whole game; a few hundred KB at most.
GESTURE_LOG_SIZE = 1000
# The package a simulated phone's game runs as (what `--launch` starts).
SIM_PACKAGE = "com.puzzleagent.sim"
# Android's `input swipe` has no limit, but nothing a game does takes a minute.
MAX_SWIPE_MS = 60_000


@dataclass(frozen=True)
class SimGesture:
    kind: str  # "tap" or "swipe"
    points: tuple[int, ...]
    duration_ms: float
    at: float  # clock time it was received
    effect: Any = None  # what the game did with it (None: nothing)


class SimDevice:
    """Implements the Device protocol; subclasses provide `frame_at`, `on_tap`, `on_swipe`."""

    def __init__(
        self,
        size: tuple[int, int],
        model: str,
        serial: str,
        clock: Clock | None = None,
        keep_gestures: int = GESTURE_LOG_SIZE,
    ) -> None:
        if keep_gestures < 1:
            raise ValueError(f"keep_gestures must be at least 1, not {keep_gestures!r}")
        self._size = (int(size[0]), int(size[1]))
        self._model = model
        self._serial = serial
        self._clock: Clock = clock if clock is not None else RealClock()
        # The last gestures, oldest first (iterate it, index it from the end, len() it).
        self.gestures: deque[SimGesture] = deque(maxlen=keep_gestures)
        # Every gesture the phone took, including those the log no longer holds.
        self.taps = 0
        self.swipes = 0
        self.keys = 0
        # The app in front: the game's own package until a subclass says otherwise.
        self.package = SIM_PACKAGE
        self._foreground: str | None = SIM_PACKAGE

    # -- Device protocol --------------------------------------------------------
    @property
    def serial(self) -> str:
        return self._serial

    @property
    def model(self) -> str:
        return self._model

    @property
    def clock(self) -> Clock:
        return self._clock

    def screen_size(self) -> tuple[int, int]:
        return self._size

    def screencap(self) -> np.ndarray:
        return self.frame_at(self._clock.now())

    def tap(self, x: int, y: int) -> None:
        check_point(self._size, x, y)
        effect = self.on_tap(int(x), int(y))
        self.taps += 1
        self.gestures.append(SimGesture("tap", (int(x), int(y)), 0.0, self._clock.now(), effect))

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 200) -> None:
        check_point(self._size, x1, y1)
        check_point(self._size, x2, y2)
        if isinstance(duration_ms, bool) or not isinstance(duration_ms, (int, float, np.integer, np.floating)) or not (
            0 <= duration_ms <= MAX_SWIPE_MS
        ):
            raise GestureError(f"swipe duration must be 0..{MAX_SWIPE_MS} ms, got {duration_ms!r}")
        effect = self.on_swipe(int(x1), int(y1), int(x2), int(y2), float(duration_ms))
        self.swipes += 1
        self.gestures.append(SimGesture("swipe", (int(x1), int(y1), int(x2), int(y2)), float(duration_ms),
                                        self._clock.now(), effect))  # fmt: skip

    # -- AppControl (agent.device.base) ----------------------------------------------
    def back(self) -> None:
        self.keys += 1
        self.on_key(KEYCODE_BACK)

    def key(self, code: int) -> None:
        """Any key event (`input keyevent N`); Back is `KEYCODE_BACK`."""
        self.keys += 1
        self.on_key(int(code))

    def foreground(self) -> str | None:
        return self._foreground

    def launch(self, package: str) -> None:
        if package == self.package:
            self._foreground = package
            self.on_launch()
        # Any other package is not installed on a simulated phone: nothing happens, as
        # `monkey -p` of a missing package does nothing but say so.

    @property
    def gesture_count(self) -> int:
        """Every gesture taken since the phone started (the log keeps only the last ones)."""
        return self.taps + self.swipes

    # -- for subclasses -----------------------------------------------------------
    def frame_at(self, t: float) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def on_tap(self, x: int, y: int) -> Any:
        return None

    def on_swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: float) -> Any:
        return None

    def on_key(self, code: int) -> None:
        """A key event; by default a phone's game ignores them."""

    def on_launch(self) -> None:
        """The game was started or brought to the front."""
