"""The commercial-style phone's profile, learned as a real phone's is: by calibration.

The plain simulated phone knows its layout and writes its profile from it; the
commercial-style one is played like a game the agent has never seen, so its profile
comes from `agent calibrate`'s own steps on its screen: a still frame, the board found
and its classes learned, the app in front recorded as the game's package, and the
header's numbers found by OCR when an engine is installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agent.games.match3.hints import ROLE_HINTS
from agent.vision.frames import calibrate_frames
from agent.vision.profile import GameProfile, write_phone_profile
from agent.vision.screen_facts import with_screen_facts

def calibrate_phone(phone: Any) -> GameProfile:
    """Calibrate on the phone's screen, as `agent calibrate` does on a phone: a map, a card
    or a dialog is first left by its safe button (read by OCR), else Back, and the board is
    taken once it is still (an animated sky around it does not count)."""
    from agent.vision.ocr import default_ocr
    from agent.vision.way_in import reach_board, settled

    def board(frame: np.ndarray) -> tuple[int, int, int, int]:
        return calibrate_frames([frame], "match3", hints=ROLE_HINTS).profile.board_bbox

    way = reach_board(phone, phone.clock, phone.serial, board, "match3", default_ocr())
    frame = settled(phone.screencap, phone.clock, way.bbox, phone.serial)
    cal = calibrate_frames([frame], "match3", hints=ROLE_HINTS)
    return with_screen_facts(cal.profile, frame, phone.foreground())


def calibrated_profile(phone: Any, directory: Path) -> tuple[Path, str]:
    saved = write_phone_profile(phone, calibrate_phone(phone), directory)
    return saved.path, saved.told("calibrated on the phone's screen")
