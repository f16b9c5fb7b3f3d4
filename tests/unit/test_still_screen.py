"""Calibration waits for a still screen: moving boards wait, an idle hint's glow does not
keep the screen from ever being still, and a screen that never stops is refused."""

from __future__ import annotations

import numpy as np
import pytest

from agent.device.clock import ManualClock
from agent.errors import ProfileError
from agent.vision.settle import STILL_GAP_S, still_screen


class Screen:
    """Frames of a 400x800 screen: a board that falls for `moving` frames, then stays,
    with a small glowing hint that never stops."""

    def __init__(self, moving: int, glow: bool = True, forever: bool = False) -> None:
        self.n, self.moving, self.glow, self.forever = 0, moving, glow, forever
        self.rng = np.random.default_rng(0)
        self.board = self.rng.integers(0, 255, (800, 400, 3), dtype=np.uint8)

    def __call__(self) -> np.ndarray:
        self.n += 1
        frame = self.board.copy()
        if self.forever or self.n <= self.moving:
            frame = np.roll(frame, 40 * self.n, axis=0)  # tiles falling
        if self.glow:  # a 40x40 hint pulsing between dark and bright
            frame[100:140, 100:140] = 255 if self.n % 2 else 0
        return frame


def test_waits_until_the_board_stops():
    clock, screen = ManualClock(), Screen(moving=6)
    frame = still_screen(screen, clock, "phone")
    assert screen.n >= 7 and clock.now() >= 6 * STILL_GAP_S
    assert np.array_equal(frame[200:], screen.board[200:])


def test_an_idle_hint_does_not_keep_it_waiting():
    clock, screen = ManualClock(), Screen(moving=0, glow=True)
    still_screen(screen, clock, "phone")
    assert screen.n == 2


def test_a_screen_that_never_stops_is_refused():
    clock, screen = ManualClock(), Screen(moving=0, forever=True)
    with pytest.raises(ProfileError, match="kept moving for 3 s") as info:
        still_screen(screen, clock, "emulator-5554", timeout_s=3)
    assert "agent calibrate --serial emulator-5554" in info.value.hint
    assert clock.now() == pytest.approx(3, abs=STILL_GAP_S)
