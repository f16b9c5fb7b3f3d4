"""Stuck and loop guards, and the frames that explain a stop.

The trusted game bots stop rather than flail: the same screen for a minute, or the same
tap on the same screen again and again, means the bot is not getting anywhere, and the
frames that led there are what a person needs to see. The loop keeps the last few
settled frames in memory and writes them next to the journal when it stops for such a
reason (or on a screen it does not recognise).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agent.files import save_png

KEEP_FRAMES = 6
STUCK_AFTER_S = 60.0  # the same screen, with nothing played, this long
SAME_TAP_LIMIT = 3  # the same tap on the same screen this many times


@dataclass(frozen=True)
class _Tap:
    screen: str  # the screen's hash
    point: tuple[int, int]


class Guards:
    def __init__(self, stuck_after_s: float = STUCK_AFTER_S, same_tap_limit: int = SAME_TAP_LIMIT) -> None:
        self.stuck_after_s, self.same_tap_limit = stuck_after_s, same_tap_limit
        self.frames: deque[tuple[float, np.ndarray]] = deque(maxlen=KEEP_FRAMES)
        self._screen: str | None = None
        self._since = 0.0
        self._taps: deque[_Tap] = deque(maxlen=same_tap_limit)

    def keep(self, t: float, frame: np.ndarray) -> None:
        self.frames.append((t, frame))

    def progress(self) -> None:
        """A move was made: whatever screen comes next is new."""
        self._screen = None
        self._taps.clear()

    def same_screen_for(self, t: float, screen: str) -> float:
        """Seconds this screen has been in front without progress (0 when it just came)."""
        if screen != self._screen:
            self._screen, self._since = screen, t
        return t - self._since

    def tap_repeats(self, screen: str, point: tuple[int, int]) -> bool:
        """Record a tap; True once it is the same tap on the same screen `same_tap_limit` times."""
        self._taps.append(_Tap(screen, point))
        return len(self._taps) == self.same_tap_limit and len(set(self._taps)) == 1

    def save(self, directory: Path, why: str) -> list[Path]:
        """Write the kept frames (oldest first) as PNGs; the paths written."""
        out: list[Path] = []
        slug = "".join(ch if ch.isalnum() else "-" for ch in why.lower())[:40].strip("-") or "stop"
        for i, (t, frame) in enumerate(self.frames):
            out.append(save_png(frame, directory / f"{slug}-{i:02d}-t{t:.2f}.png"))
        return out
