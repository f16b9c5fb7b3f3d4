"""Calibrating a phone that has no profile, unattended (what `agent farm --calibrate` does
on each such device): on a still screen, strict about confidence."""

from __future__ import annotations

import numpy as np
import pytest

from agent.device.clock import ManualClock
from agent.games.match3.sim import SimPhone
from agent.errors import ProfileError
from agent.farm.worker import calibrate_device, still_frame
from agent.vision.profile import find_profile


def test_a_phone_is_calibrated_on_its_own_screen(tmp_path):
    clock = ManualClock()
    phone = SimPhone(seed=3, size=(720, 1280), clock=clock)
    path = calibrate_device(phone, "match3", tmp_path, clock)
    assert path.exists() and path.with_name(f"{path.stem}.match3.png").exists()
    match = find_profile(phone.model, 720, 1280, "match3", [tmp_path])
    assert (match.profile.rows, match.profile.cols) == (8, 8)


class _Restless:
    """A screen that never stops changing."""

    serial, model = "restless", "restless"

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def screencap(self) -> np.ndarray:
        return self.rng.integers(0, 256, size=(64, 32, 3), dtype=np.uint8)


def test_a_screen_that_keeps_moving_is_not_calibrated(tmp_path):
    with pytest.raises(ProfileError, match="kept moving") as err:
        still_frame(_Restless(), ManualClock())
    assert "agent calibrate --serial restless" in err.value.hint
    assert not list(tmp_path.iterdir())


def test_an_unsure_calibration_writes_the_overlay_but_no_profile(tmp_path, monkeypatch):
    from agent.vision import calibrate as cal_mod

    real = cal_mod.calibrate_frame

    def unsure(frame, game, **kw):
        cal = real(frame, game, **kw)
        monkeypatch.setattr(type(cal), "low_confidence", property(lambda self: [(0, 0)]))
        return cal

    monkeypatch.setattr(cal_mod, "calibrate_frame", unsure)
    clock = ManualClock()
    phone = SimPhone(seed=1, size=(720, 1280), clock=clock)
    with pytest.raises(ProfileError, match="unsure of 1 cells"):
        calibrate_device(phone, "match3", tmp_path, clock)
    assert not list(tmp_path.glob("*.toml")) and list(tmp_path.glob("*.png"))
