"""Shared fixtures: a private adb server for the integration tier."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest
from adbutils import AdbError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def adb_binary() -> str | None:
    import adbutils

    try:
        exe = adbutils.adb_path()
    except AdbError:
        return None
    return exe if os.path.isfile(exe) and os.access(exe, os.X_OK) else None


@pytest.fixture
def private_adb_port(monkeypatch):
    exe = adb_binary()
    if exe is None:
        pytest.skip("no adb binary (install adb or adbutils)")
    port = free_port()
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(port))
    # Ports below 5555 mean "do not probe for emulators", so nothing else can show up.
    monkeypatch.setenv("ADB_LOCAL_TRANSPORT_MAX_PORT", "5554")
    # The libusb backend makes every server start wait 3 s for USB enumeration; Linux's
    # native backend starts at once (and still sees phones on USB).
    monkeypatch.setenv("ADB_LIBUSB", "0")
    monkeypatch.delenv("ANDROID_SERIAL", raising=False)
    yield exe, port
    subprocess.run([exe, "-P", str(port), "kill-server"], capture_output=True, timeout=20, env=dict(os.environ))
