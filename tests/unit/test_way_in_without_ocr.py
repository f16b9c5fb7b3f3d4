"""The way in on a machine without an OCR engine: a dialog over the board cannot be read,
and the stop says that the engine is missing and how to install it, not only that no
board was found."""

from __future__ import annotations

import pytest

from agent.device.clock import ManualClock
from agent.games.match3.saga import SagaPhone
from agent.games.match3.saga.family import world_of
from agent.vision import ocr as ocr_module


def test_a_dialog_that_needs_ocr_on_a_machine_without_it_names_the_missing_engine(monkeypatch):
    from agent.games.registry import role_hints
    from agent.vision.frames import calibrate_frames
    from agent.vision.way_in import WayInError, reach_board

    ph = SagaPhone(seed=0, size=world_of(0).size, clock=ManualClock(), world=0)
    ph.launch(ph.package)
    ph.clock.advance(1.0)  # type: ignore[attr-defined]
    assert ph.screen_kind != "board"  # a dialog first, as a real game opens
    monkeypatch.setattr(ocr_module.shutil, "which", lambda name, *a, **k: None)
    assert ocr_module.default_ocr() is None
    hints = role_hints("match3")
    with pytest.raises(WayInError) as caught:
        reach_board(ph, ph.clock, ph.serial,
                    lambda f: calibrate_frames([f], "match3", hints=hints).profile.board_bbox, "match3",
                    ocr_module.default_ocr())  # fmt: skip
    exc = caught.value
    assert "tesseract" in str(exc) and "tesseract" in (exc.hint or ""), (str(exc), exc.hint)
    assert exc.seen and ph.truth()["forbidden_taps"] == 0
