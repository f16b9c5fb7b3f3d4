"""The Device protocol every phone (real, simulated, or on the wire) implements."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Device(Protocol):
    """A phone screen the agent can look at and touch. Coordinates are screen pixels."""

    @property
    def serial(self) -> str: ...

    @property
    def model(self) -> str: ...

    def screen_size(self) -> tuple[int, int]:
        """(width, height) in pixels, in the current orientation."""
        ...

    def screencap(self) -> np.ndarray:
        """The screen as an (H, W, 3) uint8 BGR array."""
        ...

    def tap(self, x: int, y: int) -> None: ...

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 200) -> None: ...


def check_point(device_size: tuple[int, int], x: int, y: int) -> None:
    """Gestures take integer pixels inside the screen; anything else is a bug upstream."""
    from agent.errors import GestureError

    w, h = device_size
    if not (isinstance(x, (int, np.integer)) and isinstance(y, (int, np.integer))):
        raise GestureError(f"gesture coordinates must be integers, got ({x!r}, {y!r})")
    if not (0 <= x < w and 0 <= y < h):
        raise GestureError(f"gesture point ({x}, {y}) is outside the {w}x{h} screen")


# Android's key code for Back (KeyEvent.KEYCODE_BACK).
KEYCODE_BACK = 4


@runtime_checkable
class AppControl(Protocol):
    """What a phone offers beyond the screen: the Back key, which app is in front, and
    starting an app. Real phones (over adb) and simulated ones implement it; the play
    loop uses it to dismiss what has no button, and to bring the game back."""

    def back(self) -> None:
        """Press the Back key."""
        ...

    def foreground(self) -> str | None:
        """The package of the app in front, or None when the phone does not say."""
        ...

    def launch(self, package: str) -> None:
        """Start (or bring to the front) the app `package`, as its launcher icon would."""
        ...
