"""What calibration records about a game beyond its board: the app it runs as and where
its header shows moves left and score."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from agent.vision.profile import GameProfile


def with_screen_facts(profile: GameProfile, frame: np.ndarray, package: str | None) -> GameProfile:
    """The profile with the app in front as the game's package, and the header's numbers
    where OCR finds them (left as they are when no OCR engine is installed)."""
    from agent.vision.header import LINE, find_header
    from agent.vision.ocr import default_ocr

    hud = dict(profile.hud)
    ocr = default_ocr()
    if ocr is not None:
        found = find_header(frame, ocr, profile)  # the goal's icon matched to the board's classes
        # a number found again replaces its line too (or drops one it no longer has)
        for name in [k for k in found if not k.endswith(LINE)]:
            hud.pop(f"{name}{LINE}", None)
        hud.update(found)
    return replace(profile, package=package or profile.package, hud=hud)
