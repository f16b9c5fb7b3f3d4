"""Stuck and loop guards.

The trusted game bots stop rather than flail: the same screen for a minute, or the same
tap on the same screen again and again, means the bot is not getting anywhere. (The
frames that led there are kept by the loop's recorder: `agent.play.recording`.)
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

STUCK_AFTER_S = 60.0  # the same screen, with nothing played, this long
SAME_TAP_LIMIT = 3  # the same tap on the same screen this many times


@dataclass(frozen=True)
class _Tap:
    screen: str  # the screen's hash
    point: tuple[int, int]


class Guards:
    def __init__(self, stuck_after_s: float = STUCK_AFTER_S, same_tap_limit: int = SAME_TAP_LIMIT) -> None:
        self.stuck_after_s, self.same_tap_limit = stuck_after_s, same_tap_limit
        self._screen: str | None = None
        self._since = 0.0
        self._taps: deque[_Tap] = deque(maxlen=same_tap_limit)

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
