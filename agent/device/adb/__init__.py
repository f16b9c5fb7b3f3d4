"""Real phones over adb: listing them, choosing one, and driving one within a time bound.

Everything here goes through adbutils (which talks to the adb server's socket), with
three things added on top, all measured in the shared notes (`shared/notes/adb.md` beside the repository):

- a hard deadline on every call (adbutils' transport open waits up to 600 s on a hung
  phone, whatever socket_timeout says): `calls`;
- errors mapped onto agent.errors with a hint the user can act on (`faults`), one retry
  after a transient fault, and for phones on the network (serial HOST:PORT) an
  `adb connect` again when the server has lost them (`devices`);
- the fast paths: transport ids instead of serials, and a linear read of raw frames.

`server` starts and reaches the adb server, `wm` parses what the phone says about its
screen, `capture` holds the screenshot methods (raw, gzip, png) and how auto mode
judges them, `apps` parses which app is in front, and `device` holds AdbDevice. The phone side is reached through a small seam
(`ShellDevice`: adbutils' `open_transport()`), so unit tests inject a fake; the
integration tests put the project's own phone on the wire (agent.simphone.adbd) behind
a real adb server.
"""

from agent.device.adb.env import env_port

# adbutils parses ANDROID_ADB_SERVER_PORT when it is imported and dies with a bare
# ValueError on a bad value; check it before any submodule imports adbutils, so the
# user gets our message and hint.
env_port()

from agent.device.adb.apps import check_package  # noqa: E402
from agent.device.adb.calls import ServiceConnection, ShellDevice  # noqa: E402
from agent.device.adb.capture import CAPTURE_MODES, METHODS, Method  # noqa: E402
from agent.device.adb.device import CAPTURE_ENV, MAX_SWIPE_MS, RECONNECT_PAUSE_S, AdbDevice, CaptureMode  # noqa: E402
from agent.device.adb.devices import (  # noqa: E402
    LIST_TIMEOUT_S,
    DeviceInfo,
    connect_tcp,
    is_tcp_serial,
    list_devices,
    select_serial,
)
from agent.device.adb.server import SERVER_START_TIMEOUT_S, AdbTarget, ensure_server, stop_server  # noqa: E402

__all__ = [
    "CAPTURE_ENV",
    "CAPTURE_MODES",
    "METHODS",
    "Method",
    "check_package",
    "LIST_TIMEOUT_S",
    "MAX_SWIPE_MS",
    "RECONNECT_PAUSE_S",
    "SERVER_START_TIMEOUT_S",
    "AdbDevice",
    "AdbTarget",
    "CaptureMode",
    "DeviceInfo",
    "ServiceConnection",
    "ShellDevice",
    "connect_tcp",
    "ensure_server",
    "env_port",
    "is_tcp_serial",
    "list_devices",
    "select_serial",
    "stop_server",
]
