"""The phones an adb server knows: listing them, choosing one, and reaching one.

Network phones (serial HOST:PORT) get an `adb connect` when the server does not hold
them, both when one is chosen and when a running device reconnects.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from adbutils import AdbError

# The module, not the function: `_open_client` is looked up at each call, so a test
# that replaces it on agent.device.adb.server reaches every caller here.
from agent.device.adb import server
from agent.device.adb.calls import ShellDevice, _bounded, _Call, _CallTimeout, _MidCommand, _sh
from agent.device.adb.server import AdbTarget
from agent.device.adb.wm import _parse_wm_sizes
from agent.errors import (
    AdbServerError,
    AgentError,
    DeviceError,
    DeviceOfflineError,
    DeviceTimeoutError,
    DeviceUnauthorizedError,
    NoDeviceError,
    SeveralDevicesError,
)

LIST_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class DeviceInfo:
    """One line of `adb devices -l`, plus what the phone says about itself when it can."""

    serial: str
    state: str  # device, offline, unauthorized, authorizing, no permissions, recovery, ...
    model: str | None = None
    resolution: tuple[int, int] | None = None  # `wm size`, natural orientation
    transport_id: int | None = None


# --------------------------------------------------------------------------- listing


def _state_name(state: str) -> str:
    # `adb devices` prints "no permissions (...)", which the list splits after "no".
    return "no permissions" if state == "no" else state


def _rows(client: Any) -> list[DeviceInfo]:
    """`adb devices -l`, unbounded: for code already running inside a bounded call."""
    return [
        DeviceInfo(
            serial=row.serial,
            state=_state_name(row.state),
            model=row.tags.get("model"),
            transport_id=row.transport_id,
        )
        for row in client.list(extended=True)
    ]


def _list_rows(client: Any, target: AdbTarget, timeout_s: float) -> list[DeviceInfo]:
    try:
        return _bounded(lambda: _rows(client), time.monotonic() + timeout_s)
    except _CallTimeout:
        raise AdbServerError(
            f"the adb server at {target.address} did not list devices within {timeout_s:g} s",
            hint="restart it: `adb kill-server && adb start-server`",
        ) from None
    except (AdbError, OSError, EOFError) as exc:
        raise AdbServerError(f"cannot list devices from the adb server at {target.address}: {exc}") from None


def _device_handle(client: Any, row: DeviceInfo) -> ShellDevice:
    # By transport id when the server gave one: addressing by serial costs an extra
    # server-version round trip per command (21 ms vs 11 ms per tap, measured).
    if row.transport_id:
        dev: ShellDevice = client.device(transport_id=row.transport_id)
    else:
        dev = client.device(serial=row.serial)
    return dev


def _summary(client: Any, row: DeviceInfo) -> tuple[str | None, tuple[int, int] | None]:
    dev = _device_handle(client, row)
    _, model = _sh(dev, "getprop ro.product.model")
    _, size = _sh(dev, "wm size")
    physical, override = _parse_wm_sizes(size)
    return model or None, override or physical


def list_devices(target: AdbTarget | None = None, timeout_s: float = LIST_TIMEOUT_S) -> list[DeviceInfo]:
    """Every device the server knows, in any state; model and size for ready ones.

    Ready phones are asked in parallel, each within timeout_s; a phone that does not
    answer is listed without model and resolution rather than failing the whole list.
    """
    target = target or AdbTarget()
    client = server._open_client(target, timeout_s)
    rows = _list_rows(client, target, timeout_s)
    deadline = time.monotonic() + timeout_s
    calls = {i: _Call(partial(_summary, client, row), deadline) for i, row in enumerate(rows) if row.state == "device"}
    result = []
    for i, row in enumerate(rows):
        if i in calls:
            try:
                model, resolution = calls[i].wait()
                row = replace(row, model=model or row.model, resolution=resolution)
            except (_CallTimeout, _MidCommand, AdbError, OSError, EOFError, AgentError):
                pass
        result.append(row)
    return result


# --------------------------------------------------------------------------- choosing


def _describe(rows: list[DeviceInfo]) -> str:
    return ", ".join(f"{r.serial} ({r.state})" for r in rows)


def _require_ready(row: DeviceInfo) -> None:
    serial, state = row.serial, row.state
    if state == "device":
        return
    if state == "offline":
        raise DeviceOfflineError(f"{serial} is offline")
    if state == "unauthorized":
        raise DeviceUnauthorizedError(
            f"{serial} has not authorized this computer: accept the 'Allow USB debugging?' prompt on the phone"
        )
    if state in ("authorizing", "connecting"):
        raise DeviceOfflineError(
            f"{serial} is still {state}",
            hint="wait a few seconds and retry; if the phone shows a prompt, accept it",
        )
    if state == "no permissions":
        raise DeviceError(
            f"{serial}: adb has no permission to open the USB device",
            hint="on Linux, add a udev rule for the phone (see `adb devices` for the link) and replug it",
        )
    raise DeviceOfflineError(
        f"{serial} is in {state} mode, not running Android",
        hint="boot the phone normally, unlock it, and retry",
    )


def select_serial(serial: str | None = None, target: AdbTarget | None = None, timeout_s: float = LIST_TIMEOUT_S) -> str:
    """--serial, then ANDROID_SERIAL, then the only device attached; it must be ready."""
    target = target or AdbTarget()
    env_serial = os.environ.get("ANDROID_SERIAL", "").strip()
    wanted = serial or env_serial or None
    client = server._open_client(target, timeout_s)
    rows = _list_rows(client, target, timeout_s)
    if wanted:
        row = next((r for r in rows if r.serial == wanted), None)
        said = None
        if is_tcp_serial(wanted) and (row is None or row.state == "offline"):
            # A network phone needs `adb connect` first; do it rather than tell the user to.
            said = _connect_for_selection(client, wanted, drop_first=row is not None, timeout_s=timeout_s)
            rows = _list_rows(client, target, timeout_s)
            row = next((r for r in rows if r.serial == wanted), None)
        if row is None:
            source = "" if serial else " (from ANDROID_SERIAL)"
            tried = f"; `adb connect {wanted}` said: {said}" if said else ""
            raise NoDeviceError(
                f"no device {wanted!r}{source} is attached; adb lists: {_describe(rows) or 'nothing'}{tried}",
                hint=_TCP_HINT if said else None,
            )
        _require_ready(row)
        return wanted
    if not rows:
        raise NoDeviceError(f"no device: the adb server at {target.address} lists no phones")
    if len(rows) > 1:
        raise SeveralDevicesError(f"several devices attached: {_describe(rows)}")
    _require_ready(rows[0])
    return rows[0].serial


_TCP_HINT = "check that the phone (or `agent sim serve`) is listening at that address, then retry"


def _connect_for_selection(client: Any, serial: str, drop_first: bool, timeout_s: float) -> str:
    try:
        return _bounded(lambda: _tcp_connect(client, serial, drop_first)[0], time.monotonic() + timeout_s)
    except _CallTimeout:
        return f"no answer within {timeout_s:g} s"
    except (AdbError, OSError, EOFError) as exc:
        return str(exc) or type(exc).__name__


def _connect_by_transport(serial: str, target: AdbTarget, timeout_s: float) -> ShellDevice:
    """The adbutils device for serial, addressed by transport id (runs inside a _Call).

    A network phone the server has lost (not listed, or offline after its connection
    broke) gets one `adb connect`: a restarted phone is back at once instead of after
    the server's own retry, up to 10 s later.
    """
    client = server._open_client(target, timeout_s)
    rows = _rows(client)
    row = next((r for r in rows if r.serial == serial), None)
    if is_tcp_serial(serial) and (row is None or row.state == "offline"):
        said, row = _tcp_connect(client, serial, drop_first=row is not None)
        if row is None or row.state == "offline":
            raise DeviceOfflineError(f"{serial} is gone and `adb connect {serial}` said: {said}", hint=_TCP_HINT)
    if row is None:
        raise NoDeviceError(f"device {serial!r} not found (unplugged?); adb lists: {_describe(rows) or 'nothing'}")
    _require_ready(row)
    return _device_handle(client, row)


# --------------------------------------------------------------------------- network phones

# host:port, [v6]:port; not mDNS names like adb-XYZ._adb-tls-connect._tcp.
_TCP_SERIAL = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):(\d{1,5})")
# The server's answers to host:connect that mean the phone is there (`adb connect`
# exits 0 whatever happened, so its words are all there is to go by).
_CONNECTED = ("connected to", "already connected to")
# After "connected to", the handshake may still be under way.
_HANDSHAKE_WAIT_S = 2.0


def is_tcp_serial(serial: str) -> bool:
    """True for phones reached over the network (`adb connect HOST:PORT`)."""
    return _TCP_SERIAL.fullmatch(serial) is not None


def _tcp_connect(client: Any, serial: str, drop_first: bool) -> tuple[str, DeviceInfo | None]:
    """`adb connect serial` (after `adb disconnect` when the server still holds a dead
    transport): what the server said, and the phone's row once its state has settled
    (None when it is not listed)."""
    if drop_first:
        client.disconnect(serial)
    said = (client.connect(serial) or "").strip() or "nothing"
    # A phone that connected is listed at once, but the handshake may still be going on.
    settling = ("connecting", "authorizing") + (("offline",) if said.lower().startswith(_CONNECTED) else ())
    until = time.monotonic() + _HANDSHAKE_WAIT_S
    while True:
        row = next((r for r in _rows(client) if r.serial == serial), None)
        if row is None or row.state not in settling or time.monotonic() >= until:
            return said, row
        time.sleep(0.05)


def connect_tcp(address: str, target: AdbTarget | None = None, timeout_s: float = LIST_TIMEOUT_S) -> str:
    """`adb connect address`, bounded; returns the server's answer, raises when it failed."""
    if not is_tcp_serial(address):
        raise DeviceError(f"{address!r} is not HOST:PORT", hint="give the phone's address, e.g. 127.0.0.1:5555")
    target = target or AdbTarget()
    client = server._open_client(target, timeout_s)
    try:
        said, row = _bounded(lambda: _tcp_connect(client, address, drop_first=False), time.monotonic() + timeout_s)
    except _CallTimeout:
        raise DeviceTimeoutError(f"`adb connect {address}` did not finish within {timeout_s:g} s") from None
    except (AdbError, OSError, EOFError) as exc:
        raise AdbServerError(f"cannot ask the adb server at {target.address} to connect {address}: {exc}") from None
    if row is None or row.state == "offline":
        raise DeviceOfflineError(f"cannot connect to {address}: {said}", hint=_TCP_HINT)
    _require_ready(row)  # unauthorized, still authorizing, ...
    return said
