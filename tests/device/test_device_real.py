"""Real-device tier: runs only when a phone is attached (`adb devices` shows one in state
`device`) and a profile for it exists; skipped otherwise, so CI needs no phone."""

from __future__ import annotations

import pytest

from agent.errors import AgentError

pytestmark = pytest.mark.device


@pytest.fixture(scope="module")
def phone():
    from agent.device.adb import AdbDevice, AdbTarget, list_devices
    from agent.device.adb.server import _server_answers

    if not _server_answers(AdbTarget()):
        pytest.skip("no adb server running (start one with `adb start-server` and attach a phone)")
    try:
        ready = [d for d in list_devices(AdbTarget(), timeout_s=3.0) if d.state == "device"]
    except AgentError as exc:
        pytest.skip(f"no adb server: {exc}")
    if not ready:
        pytest.skip("no phone attached")
    return AdbDevice(ready[0].serial)


def test_capture_is_a_full_non_black_frame(phone):
    frame = phone.screencap()
    w, h = phone.screen_size()
    assert frame.shape == (h, w, 3) and frame.max() > 10


def test_profile_reads_the_board_when_one_exists(phone):
    from agent.vision.profile import find_profile

    w, h = phone.screen_size()
    try:
        match = find_profile(phone.model, w, h, "match3")
    except AgentError:
        pytest.skip("no match3 profile for this phone: run `agent calibrate`")
    reading = match.profile.read(phone.screencap())
    assert reading.rows == match.profile.rows and reading.cols == match.profile.cols
