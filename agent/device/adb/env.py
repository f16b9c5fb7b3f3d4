"""The adb server's port from the environment, checked before adbutils reads it."""

from __future__ import annotations

import os

from agent.errors import AdbServerError

DEFAULT_PORT = 5037


def env_port() -> int:
    raw = os.environ.get("ANDROID_ADB_SERVER_PORT", "").strip()
    if not raw:
        # Blank means unset (as adb itself takes it), but adbutils' import runs
        # int(os.environ[...]) and would die on it.
        os.environ.pop("ANDROID_ADB_SERVER_PORT", None)
        return DEFAULT_PORT
    try:
        port = int(raw)
    except ValueError:
        port = -1
    if not 0 < port < 65536:
        raise AdbServerError(
            f"ANDROID_ADB_SERVER_PORT={raw!r} is not a port number",
            hint="unset ANDROID_ADB_SERVER_PORT or set it to the adb server's port (default 5037)",
        )
    return port
