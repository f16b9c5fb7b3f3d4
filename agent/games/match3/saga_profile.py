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

from agent.errors import AgentError
from agent.games.match3.hints import ROLE_HINTS
from agent.vision.frames import calibrate_frames
from agent.vision.profile import GameProfile, save_game_profile
from agent.vision.screen_facts import with_screen_facts
from agent.vision.settle import still_screen

# A popup may be up when the phone starts: Back closes it, as a person would first.
_TRIES = 3


def calibrate_phone(phone: Any) -> GameProfile:
    """Calibrate on the phone's screen. A dialog over the board is first dismissed as a
    person would: its safe button (read by OCR), else Back."""
    last: AgentError | None = None
    for _ in range(_TRIES):
        frame = still_screen(phone.screencap, phone.clock, phone.serial)
        try:
            cal = calibrate_frames([frame], "match3", hints=ROLE_HINTS)
        except AgentError as exc:
            last = exc
            _dismiss(phone, frame)
            continue
        return with_screen_facts(cal.profile, frame, phone.foreground())
    assert last is not None
    raise last


def _dismiss(phone: Any, frame: np.ndarray) -> None:
    from agent.vision.ocr import default_ocr
    from agent.vision.screens import forbidden, safe_rank

    ocr = default_ocr()
    words = ocr.words(frame) if ocr is not None else []
    ranked = sorted((rank, i) for i, w in enumerate(words)
                    if not forbidden(w.text) and (rank := safe_rank(w.text)) is not None)  # fmt: skip
    if ranked:
        x0, y0, x1, y1 = words[ranked[0][1]].box
        phone.tap((x0 + x1) // 2, (y0 + y1) // 2)
    else:
        phone.back()
    phone.clock.sleep(1.0)


def calibrated_profile(phone: Any, directory: Path) -> tuple[Path, str]:
    profile = calibrate_phone(phone)
    w, h = phone.screen_size()
    path = save_game_profile(phone.model, w, h, profile, directory)
    return path, f"{path} (calibrated on the phone's screen)"
