"""Time as the agent and the simulated phone see it.

Everything that waits or timestamps goes through a `Clock`, so tests and fast
simulated play can swap real time for a `ManualClock` that only moves when told:
an animation of 500 ms then costs no real time at all, and runs are repeatable.
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic scale; only differences mean anything."""
        ...

    def sleep(self, seconds: float) -> None: ...


class RealClock:
    """Wall time: what a real phone lives in."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class ManualClock:
    """A clock that only moves when slept on or advanced; sleeping returns at once."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def sleep(self, seconds: float) -> None:
        # A negative sleep is a no-op on a real clock too; mirroring that keeps
        # callers that compute "time left" from having to clamp.
        if seconds > 0:
            self._now += float(seconds)

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"a clock cannot go backwards (advance by {seconds})")
        self._now += float(seconds)

    def __repr__(self) -> str:
        return f"ManualClock(now={self._now:.3f})"
