"""The phone's apps and capture methods through a real adb server: the Back key, which
app is in front, launching it, `screencap | gzip` and a slow phone's screencap latency,
all between the agent's AdbDevice (or the adb CLI) and the simulated phone on the wire."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import zlib

import numpy as np
import pytest

from agent.device.adb import AdbDevice
from agent.device.adb.device import _TIE_MS, _TIE_SHARE
from agent.device.base import KEYCODE_BACK, AppControl
from agent.device.rawframe import parse_raw_screencap
from agent.errors import DeviceError
from agent.games.match3.sim import SimPhone
from agent.simphone.adbd import AdbdServer, PhoneFacts
from agent.simphone.phone import SIM_PACKAGE

pytestmark = pytest.mark.integration

SIZE = (720, 1280)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class KeyedPhone(SimPhone):
    """The match-3 phone, noting the keys it gets and starting in another app."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.codes: list[int] = []
        self.launched = 0

    def on_key(self, code: int) -> None:
        self.codes.append(code)

    def on_launch(self) -> None:
        self.launched += 1


@pytest.fixture
def adb(private_adb_port):
    exe, port = private_adb_port

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([exe, "-P", str(port), *args], capture_output=True, timeout=30, env=dict(os.environ))

    assert run("start-server").returncode == 0
    return run


@pytest.fixture
def serve(adb):
    servers: list[AdbdServer] = []

    def start(phone: SimPhone | None = None, **kw) -> AdbdServer:
        server = AdbdServer(phone or KeyedPhone(seed=3, size=SIZE, serial="sim-keys"), **kw).start()
        servers.append(server)
        said = adb("connect", server.address).stdout.decode()
        assert said.startswith(("connected to", "already connected to")), said
        until = time.monotonic() + 10
        while b"\tdevice" not in adb("devices").stdout:
            assert time.monotonic() < until, "the phone never became ready"
            time.sleep(0.05)
        return server

    yield start
    for server in servers:
        server.stop()


def test_back_key_reaches_the_phone(serve, adb) -> None:
    server = serve()
    phone = server.phone
    dev = AdbDevice(server.address, timeout_s=10)
    assert isinstance(dev, AppControl)
    dev.back()
    assert phone.codes == [KEYCODE_BACK]
    # The adb CLI's ways of saying it, by name and by number, and another key.
    assert adb("-s", server.address, "shell", "input", "keyevent", "KEYCODE_BACK").returncode == 0
    assert adb("-s", server.address, "shell", "input keyevent 3").returncode == 0
    assert phone.codes == [KEYCODE_BACK, KEYCODE_BACK, 3]
    assert phone.keys == 3


def test_foreground_follows_the_phone(serve) -> None:
    server = serve()
    phone = server.phone
    dev = AdbDevice(server.address, timeout_s=10)
    assert dev.foreground() == SIM_PACKAGE
    phone._foreground = "com.android.launcher3"  # the user went home
    assert dev.foreground() == "com.android.launcher3"
    phone._foreground = None  # a transition: Android prints mCurrentFocus=null
    assert dev.foreground() is None


def test_launch_brings_the_game_back(serve, adb) -> None:
    server = serve()
    phone = server.phone
    phone._foreground = "com.android.launcher3"
    dev = AdbDevice(server.address, timeout_s=10)
    dev.launch(SIM_PACKAGE)
    assert phone.launched == 1 and dev.foreground() == SIM_PACKAGE
    # What monkey prints for a package the phone does not have, with a failing status.
    r = adb("-s", server.address, "shell", "monkey -p com.example.absent -c android.intent.category.LAUNCHER 1")
    assert b"No activities found to run, monkey aborted." in r.stdout and r.returncode != 0
    with pytest.raises(DeviceError, match="not installed") as info:
        dev.launch("com.example.absent")
    assert "pm list packages" in info.value.hint
    assert phone.launched == 1
    # am start -n, as the fallback sends it.
    r = adb("-s", server.address, "shell", f"am start -n {SIM_PACKAGE}/.MainActivity")
    assert r.returncode == 0 and b"Starting: Intent" in r.stdout and phone.launched == 2


def test_dumpsys_window_shows_the_focus_as_android_does(serve, adb) -> None:
    server = serve()
    out = adb("-s", server.address, "shell", "dumpsys", "window", "windows").stdout.decode()
    assert "mCurrentFocus=Window{" in out and f" u0 {SIM_PACKAGE}/{SIM_PACKAGE}.MainActivity}}" in out
    assert "mFocusedApp=ActivityRecord{" in out and f"{SIM_PACKAGE}/.MainActivity t12}}" in out
    out = adb("-s", server.address, "shell", "dumpsys activity activities").stdout.decode()
    assert "mResumedActivity: ActivityRecord{" in out


def test_gzip_capture_through_adb(serve, adb) -> None:
    server = serve()
    r = adb("-s", server.address, "exec-out", "screencap | gzip -1")
    assert r.returncode == 0 and r.stdout[:2] == b"\x1f\x8b"
    frame = parse_raw_screencap(zlib.decompress(r.stdout, 16 + zlib.MAX_WBITS))
    with server.lock:
        np.testing.assert_array_equal(frame, server.phone.screencap())
    dev = AdbDevice(server.address, capture="gzip", timeout_s=10)
    with server.lock:
        shown = server.phone.screencap()
    np.testing.assert_array_equal(dev.screencap(), shown)
    assert dev.capture_mode == "gzip" and dev.capture_ms > 0


def test_auto_times_every_method_and_uses_a_correct_one(serve) -> None:
    server = serve()
    dev = AdbDevice(server.address, timeout_s=10)
    frame = dev.screencap()
    report = dev.capture_report()
    assert set(report) == {"raw", "gzip", "png"}
    assert all(isinstance(ms, float) and ms > 0 for ms in report.values()), report
    # One timed capture each is noisy: the pick is the first method (raw, gzip, PNG) whose
    # cost is within the tie band of the fastest.
    fastest = min(float(ms) for ms in report.values())
    band = max(_TIE_SHARE * fastest, _TIE_MS)
    assert dev.capture_mode == next(m for m in ("raw", "gzip", "png") if float(report[m]) <= fastest + band)
    with server.lock:
        np.testing.assert_array_equal(frame, server.phone.screencap())


def test_a_phone_without_gzip_lacks_only_that_method(serve) -> None:
    phone = KeyedPhone(seed=4, size=SIZE, serial="sim-nogzip")
    server = serve(phone, facts=PhoneFacts(gzip=False))
    dev = AdbDevice(server.address, timeout_s=10)
    dev.screencap()
    report = dev.capture_report()
    assert str(report["gzip"]).startswith("not available") and "gzip: not found" in str(report["gzip"])
    assert dev.capture_mode in ("raw", "png")


def test_latency_slows_every_screencap(serve) -> None:
    latency_ms = 150
    server = serve(latency_ms=latency_ms)
    for method in ("raw", "gzip", "png"):
        dev = AdbDevice(server.address, capture=method, timeout_s=10)
        dev.screencap()
        start = time.monotonic()
        dev.screencap()
        took_ms = (time.monotonic() - start) * 1000
        assert took_ms >= latency_ms, (method, took_ms)
        assert dev.capture_ms >= latency_ms
