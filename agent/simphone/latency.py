"""A simulated phone whose screenshots cost time, as a real phone's do.

A real phone's screencap takes 300-800 ms; the simulated one answers at once. Wrapping
it makes every screenshot cost `latency_s` on the phone's clock after the frame is
grabbed (the frame is the one at the start, as a real phone's is), so the play loop's
pacing can be tried against a slow phone in simulated time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agent.device.clock import Clock


class SlowCapture:
    """A Device (and AppControl, when the phone is one) whose screencap costs `latency_s`."""

    def __init__(self, phone: Any, clock: Clock, latency_s: float) -> None:
        if not latency_s >= 0:
            raise ValueError(f"latency must be >= 0 s, not {latency_s!r}")
        self._phone, self._clock, self.latency_s = phone, clock, latency_s

    @property
    def serial(self) -> str:
        return str(self._phone.serial)

    @property
    def model(self) -> str:
        return str(self._phone.model)

    def screen_size(self) -> tuple[int, int]:
        w, h = self._phone.screen_size()
        return int(w), int(h)

    def screencap(self) -> np.ndarray:
        frame: np.ndarray = self._phone.screencap()
        self._clock.sleep(self.latency_s)
        return frame

    def tap(self, x: int, y: int) -> None:
        self._phone.tap(x, y)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 200) -> None:
        self._phone.swipe(x1, y1, x2, y2, duration_ms)

    def back(self) -> None:
        self._phone.back()

    def foreground(self) -> str | None:
        fg = self._phone.foreground()
        return None if fg is None else str(fg)

    def launch(self, package: str) -> None:
        self._phone.launch(package)
