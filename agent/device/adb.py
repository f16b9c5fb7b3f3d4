"""Real phones over adb: listing them, choosing one, and driving one within a time bound.

Everything here goes through adbutils (which talks to the adb server's socket), with
three things added on top, all measured in /work/shared/notes/adb.md:

- a hard deadline on every call (adbutils' transport open waits up to 600 s on a hung
  phone, whatever socket_timeout says);
- errors mapped onto agent.errors with a hint the user can act on, one retry after a
  transient fault, and for phones on the network (serial HOST:PORT) an `adb connect`
  again when the server has lost them;
- the fast paths: transport ids instead of serials, and a linear read of raw frames.

Screenshots go through the `exec:` service, text commands through `shell:`: phones
before Android 7 run `shell:` on a terminal that turns every \n of a binary frame into
\r\n, while `exec:` hands the bytes over untouched on every version.

The phone side is reached through a small seam (`ShellDevice`: adbutils'
`open_transport()`), so unit tests inject a fake; the integration tests put the
project's own phone on the wire (agent.simphone.adbd) behind a real adb server.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Callable, Literal, Protocol, TypeVar

from agent.device.adb_env import env_port as _env_port

# adbutils parses ANDROID_ADB_SERVER_PORT when it is imported and dies with a bare
# ValueError on a bad value; check it first so the user gets our message and hint.
_env_port()

import adbutils  # noqa: E402
import cv2
import numpy as np
from adbutils import AdbClient, AdbConnection, AdbError, AdbTimeout
from adbutils.errors import AdbConnectionError

from agent.device.base import check_point
from agent.device.rawframe import check_frame, decode_png, parse_raw_screencap
from agent.errors import (
    AdbServerError,
    AgentError,
    CaptureError,
    DeviceError,
    DeviceOfflineError,
    DeviceTimeoutError,
    DeviceUnauthorizedError,
    GestureError,
    NoDeviceError,
    SeveralDevicesError,
)

T = TypeVar("T")
CaptureMode = Literal["auto", "raw", "png"]

LIST_TIMEOUT_S = 5.0
# `adb start-server` took 3 s here; adbutils allows 20 s. Starting happens once per run.
SERVER_START_TIMEOUT_S = 15.0
# Long enough for the server to notice a replugged transport, short next to a move.
RECONNECT_PAUSE_S = 0.2
MAX_SWIPE_MS = 60_000
# Big reads: 1 MiB recv calls measured 10x faster than adbutils' 4 KiB loop for a frame.
_RECV_CHUNK = 1 << 20
# Expected reply sizes, to size the read buffer: text, and a PNG per screen pixel (phone
# screenshots compress to well under a byte a pixel; a bigger one grows the buffer).
_TEXT_HINT = 4096
_PNG_BYTES_PER_PIXEL = 0.5
# Appended to text commands so a reply cut short by a dying phone is told apart from an
# empty one (`input` prints nothing on success; adbutils returns '' when the phone dies).
_RC_MARK = "__PA_RC="
_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")

_INPUT_HINT = (
    "the phone refused the input event: unlock the screen; on Xiaomi/MIUI also enable "
    "'USB debugging (Security settings)' in developer options"
)


# --------------------------------------------------------------------------- target


@dataclass(frozen=True)
class AdbTarget:
    """Which adb server to talk to."""

    host: str = "127.0.0.1"
    port: int = field(default_factory=_env_port)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class DeviceInfo:
    """One line of `adb devices -l`, plus what the phone says about itself when it can."""

    serial: str
    state: str  # device, offline, unauthorized, authorizing, no permissions, recovery, ...
    model: str | None = None
    resolution: tuple[int, int] | None = None  # `wm size`, natural orientation
    transport_id: int | None = None


# --------------------------------------------------------------------------- deadlines
#
# Why a worker thread per call rather than socket timeouts alone: adbutils opens the
# transport with a 600 s socket timeout of its own, may run `adb start-server` (20 s)
# when a connect fails, and opens an extra connection per command when addressed by
# serial; socket timeouts bound each recv, not the whole call. A worker thread with a
# deadline bounds everything, including code we do not control. An abandoned worker
# would still hold a socket for up to 600 s, so our client also caps every socket's
# timeout at the time left and registers it, and the caller shuts those sockets at the
# deadline: the worker then fails at once instead of lingering.
# Daemon threads, not a ThreadPoolExecutor: the interpreter joins executor threads at
# exit, so one hung phone would keep the program alive.

_local = threading.local()


class _CallTimeout(Exception):
    """The deadline passed before the worker finished."""


class _Call:
    """Run `fn` on a daemon thread; `wait()` returns its result or gives up at `deadline`."""

    def __init__(self, fn: Callable[[], T], deadline: float) -> None:
        self.deadline = deadline
        self._fn = fn
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._cancelled = False
        self._result: Any = None
        self._error: BaseException | None = None
        threading.Thread(target=self._run, name="adb-call", daemon=True).start()

    def _run(self) -> None:
        _local.call = self
        try:
            self._result = self._fn()
        except BaseException as exc:  # handed to the waiting thread, which decides
            self._error = exc
        finally:
            self._done.set()

    def adopt(self, sock: socket.socket) -> None:
        """Register a socket so the deadline can shut it (called on the worker thread)."""
        with self._lock:
            if not self._cancelled:
                self._sockets.append(sock)
                return
        sock.close()
        raise AdbTimeout("call abandoned at its deadline")

    def wait(self) -> Any:
        if not self._done.wait(max(0.0, self.deadline - time.monotonic())):
            self._cancel()
            raise _CallTimeout()
        if self._error is not None:
            raise self._error
        return self._result

    def _cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            sockets = list(self._sockets)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes a recv blocked in the worker
            except OSError:
                pass


def _bounded(fn: Callable[[], T], deadline: float) -> T:
    return _Call(fn, deadline).wait()


class _NoSpawnConnection(AdbConnection):
    def _safe_connect(self) -> socket.socket:
        # adbutils runs `adb start-server` (up to 20 s) whenever a connect fails; we start
        # the server once, bounded, in ensure_server, and want a dead server to fail fast.
        return self._create_socket()


class _BoundedClient(AdbClient):
    """An AdbClient whose sockets never wait longer than the call's time left."""

    def __init__(self, target: AdbTarget, timeout_s: float) -> None:
        super().__init__(host=target.host, port=target.port, socket_timeout=timeout_s)
        self._timeout_s = timeout_s

    def make_connection(self, timeout: float | None = None) -> AdbConnection:
        # adbutils passes its 600 s default here for every transport: replace it with the
        # time the call has left (which, for a long swipe, can exceed timeout_s).
        call: _Call | None = getattr(_local, "call", None)
        if call is not None:
            bound = call.deadline - time.monotonic()
        else:
            bound = self._timeout_s if timeout is None else min(timeout, self._timeout_s)
        if bound <= 0:
            raise AdbTimeout("no time left to open an adb connection")
        try:
            conn = _NoSpawnConnection(self.host, self.port)
        except TimeoutError:
            raise AdbTimeout("connect to adb server timeout") from None
        conn.conn.settimeout(bound)
        if call is not None:
            call.adopt(conn.conn)
        return conn


# --------------------------------------------------------------------------- server


def _server_answers(target: AdbTarget, timeout_s: float = 0.5) -> bool:
    try:
        with socket.create_connection((target.host, target.port), timeout=timeout_s):
            return True
    except OSError:
        return False


def ensure_server(target: AdbTarget, start_timeout_s: float = SERVER_START_TIMEOUT_S) -> None:
    """Start a local adb server on target.port if none answers; bounded in time."""
    if _server_answers(target):
        return
    if target.host not in _LOCAL_HOSTS:
        raise AdbServerError(
            f"no adb server answers at {target.address}",
            hint="start adb on that machine (`adb start-server`), or check the host and port",
        )
    try:
        exe = adbutils.adb_path()
    except AdbError as exc:
        raise AdbServerError(f"no adb server at {target.address}, and no adb binary to start one: {exc}") from None
    # adb picks the port from -P and from the environment; set both so the server and
    # any adb child it spawns agree with us (adbutils itself only reads the variable).
    env = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(target.port))
    try:
        proc = subprocess.run(
            [exe, "-P", str(target.port), "start-server"],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=start_timeout_s,
        )
    except subprocess.TimeoutExpired:
        raise AdbServerError(
            f"`adb start-server` on port {target.port} did not finish within {start_timeout_s:g} s"
        ) from None
    except OSError as exc:
        raise AdbServerError(f"cannot run {exe}: {exc}") from None
    if not _server_answers(target, timeout_s=1.0):
        said = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip() or "nothing"
        raise AdbServerError(f"cannot reach the adb server at {target.address} (`adb start-server` said: {said})")


def stop_server(target: AdbTarget, timeout_s: float = SERVER_START_TIMEOUT_S) -> None:
    """`adb kill-server` on target's port (for servers this program started); quiet when
    none answers."""
    if not _server_answers(target):
        return
    try:
        exe = adbutils.adb_path()
        env = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(target.port))
        subprocess.run([exe, "-P", str(target.port), "kill-server"], env=env, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=timeout_s)  # fmt: skip
    except (AdbError, OSError, subprocess.TimeoutExpired) as exc:
        raise AdbServerError(f"could not stop the adb server at {target.address}: {exc}") from None


def _open_client(target: AdbTarget, timeout_s: float) -> Any:
    """The adb client for target, with a server running behind it (tests replace this)."""
    ensure_server(target)
    return _BoundedClient(target, timeout_s)


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
        return client.device(transport_id=row.transport_id)
    return client.device(serial=row.serial)


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
    client = _open_client(target, timeout_s)
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
    client = _open_client(target, timeout_s)
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
    client = _open_client(target, timeout_s)
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
    client = _open_client(target, timeout_s)
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


# --------------------------------------------------------------------------- shell


class ServiceConnection(Protocol):
    """The slice of adbutils.AdbConnection this module uses."""

    def send_command(self, cmd: str) -> None: ...

    def check_okay(self) -> None: ...

    def recv(self, n: int) -> bytes: ...

    def close(self) -> None: ...


class ShellDevice(Protocol):
    """The slice of adbutils.AdbDevice this module uses: the seam for fakes."""

    def open_transport(self) -> ServiceConnection: ...


class _MidCommand(Exception):
    """The phone accepted the command, then the reply broke off: it may have run."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _open_service(dev: ShellDevice, service: str) -> ServiceConnection:
    conn = dev.open_transport()
    try:
        conn.send_command(service)
        conn.check_okay()
    except BaseException:
        _close_stream(conn, at_eof=False)
        raise
    return conn


def _read_service(dev: ShellDevice, service: str, size_hint: int = _TEXT_HINT) -> bytearray:
    """Run a service ("shell:CMD" or "exec:CMD") and read its whole output."""
    stream = _open_service(dev, service)  # a failure here: the command never started
    at_eof = False
    try:
        data = _read_all(stream, size_hint)
        at_eof = True
        return data
    except (AdbError, OSError, EOFError) as exc:
        raise _MidCommand(exc) from exc
    finally:
        _close_stream(stream, at_eof)


def _read_all(stream: ServiceConnection, size_hint: int) -> bytearray:
    """Everything until EOF, in linear time (adbutils' own loop is quadratic).

    From adbutils' socket, recv_into one buffer sized for the expected reply: a 10 MB
    frame then costs no per-call allocation of a 1 MiB bytes object and no extra copy.
    """
    if not isinstance(stream, AdbConnection):
        buf = bytearray()
        while chunk := stream.recv(_RECV_CHUNK):
            buf += chunk
        return buf
    sock = stream.conn
    buf = bytearray(size_hint + 1)  # +1: the end is seen without growing the buffer
    n = 0
    while True:
        if n == len(buf):
            buf.extend(bytes(len(buf)))
        got = sock.recv_into(memoryview(buf)[n:])
        if not got:
            break
        n += got
    del buf[n:]
    return buf


def _close_stream(stream: Any, at_eof: bool) -> None:
    if at_eof and isinstance(stream, AdbConnection):
        # AdbConnection.close() half-closes and sleeps 10 ms so unsent data can drain;
        # after EOF nothing is in flight, so closing the socket saves 10 ms per command.
        try:
            stream.conn.close()
            return
        except (AdbError, OSError):
            pass
    try:
        stream.close()
    except (AdbError, OSError):
        pass


def _sh(dev: ShellDevice, cmd: str) -> tuple[int, str]:
    """Run a text command: (exit status, output with surrounding whitespace stripped)."""
    out = _read_service(dev, f"shell:{cmd}; echo {_RC_MARK}$?").decode("utf-8", "replace")
    at = out.rfind(_RC_MARK)
    if at < 0:
        raise _MidCommand(EOFError(f"the reply to `{cmd}` broke off ({len(out)} bytes, no exit status)"))
    status = out[at + len(_RC_MARK) :].strip()
    return (int(status) if status.isdigit() else -1), out[:at].strip()


# --------------------------------------------------------------------------- parsing phone facts


def _parse_wm_sizes(text: str) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """(physical, override) from `wm size`; either may be missing."""

    def find(label: str) -> tuple[int, int] | None:
        m = re.search(label + r" size:\s*(\d+)\s*x\s*(\d+)", text)
        return (int(m.group(1)), int(m.group(2))) if m else None

    return find("Physical"), find("Override")


def _parse_density(text: str) -> int | None:
    m = re.search(r"Override density:\s*(\d+)", text) or re.search(r"Physical density:\s*(\d+)", text)
    return int(m.group(1)) if m else None


_ROTATION_PATTERNS = (
    # The built-in screen's viewport first: external or virtual displays may differ.
    re.compile(r"DisplayViewport\{type=INTERNAL[^}]*?orientation=([0-3])\b"),
    re.compile(r"DisplayViewport\{[^}]*?valid=true[^}]*?orientation=([0-3])\b"),
    re.compile(r"(?<![A-Za-z])orientation=([0-3])\b"),
    re.compile(r"SurfaceOrientation:\s*([0-3])\b"),
)


def _parse_rotation(text: str) -> int | None:
    for pattern in _ROTATION_PATTERNS:
        m = pattern.search(text)
        if m:
            return int(m.group(1))
    return None


# --------------------------------------------------------------------------- the device


class AdbDevice:
    """One phone over adb, implementing agent.device.base.Device.

    screencap, tap and swipe each finish within timeout_s (a swipe: plus its duration),
    retries and fallbacks included; connecting reads four facts, each within timeout_s.
    `connect` returns an adbutils-like device (see ShellDevice); it is called
    at the first command and again after a transient fault. Not thread-safe: drive a
    phone from one thread.

    `capture` None means the environment's PUZZLE_AGENT_CAPTURE (auto, raw or png),
    else auto: the override for a phone whose raw frames are wrong in a way no check
    can see, without a new option on every command that drives a phone.
    """

    def __init__(
        self,
        serial: str,
        target: AdbTarget | None = None,
        capture: CaptureMode | None = None,
        timeout_s: float = 10.0,
        *,
        connect: Callable[[], ShellDevice] | None = None,
    ) -> None:
        if capture is None:
            capture = _env_capture()
        if capture not in ("auto", "raw", "png"):
            raise ValueError(f"capture must be 'auto', 'raw' or 'png', not {capture!r}")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, not {timeout_s!r}")
        self._serial = serial
        self._target = target or AdbTarget()
        self._capture = capture
        # auto decides at the first good frame; until then None.
        self._mode: Literal["raw", "png"] | None = None if capture == "auto" else capture
        self.timeout_s = timeout_s
        self._connect = connect or partial(_connect_by_transport, serial, self._target, timeout_s)
        self._dev: ShellDevice | None = None
        self._read_facts()

    # ----- facts, read once

    def _read_facts(self) -> None:
        _, model = self._text("getprop ro.product.model")
        self._model = model or self._serial
        _, size_text = self._text("wm size")
        physical, override = _parse_wm_sizes(size_text)
        if physical is None and override is None:
            raise DeviceError(
                f"{self._serial}: cannot read the screen size; `wm size` said {size_text!r}",
                hint="unlock the phone and check `adb shell wm size`",
            )
        self._physical = physical or override
        self._resolution: tuple[int, int] = override or physical  # type: ignore[assignment]
        self._density = _parse_density(self._text("wm density")[1])
        rotation = _parse_rotation(self._text("dumpsys display")[1])
        if rotation is None:
            rotation = _parse_rotation(self._text("dumpsys input")[1])
        # Unknown rotation: assume portrait; a landscape frame is then refused with a
        # message that says so rather than tapping in the wrong place.
        self._rotation = rotation or 0

    @property
    def serial(self) -> str:
        return self._serial

    @property
    def model(self) -> str:
        return self._model

    @property
    def resolution(self) -> tuple[int, int]:
        """(width, height) from `wm size` (override if set), natural orientation."""
        return self._resolution

    @property
    def density(self) -> int | None:
        return self._density

    @property
    def rotation(self) -> int:
        """0-3, quarter turns from the natural orientation, as read at connect."""
        return self._rotation

    @property
    def capture_mode(self) -> Literal["raw", "png"] | None:
        """The capture path in use; None until auto mode has seen a good frame."""
        return self._mode

    def screen_size(self) -> tuple[int, int]:
        w, h = self._resolution
        return (h, w) if self._rotation % 2 else (w, h)

    def __repr__(self) -> str:
        return f"AdbDevice({self._serial!r}, model={self._model!r}, size={self.screen_size()})"

    # ----- the one way every command goes out

    def _run(self, what: str, op: Callable[[ShellDevice], T], deadline: float, idempotent: bool = True) -> T:
        """op(device) within the deadline; one retry after a reconnect on a transient fault.

        Commands that change the phone (gestures) are retried only when they never
        reached it: repeating a swipe that did happen would make a second move.
        """
        for attempt in (1, 2):
            dev = self._dev

            def work(dev: ShellDevice | None = dev) -> tuple[ShellDevice, T]:
                d = dev if dev is not None else self._connect()
                return d, op(d)

            try:
                self._dev, result = _bounded(work, deadline)
                return result
            except _CallTimeout:
                self._dev = None
                raise DeviceTimeoutError(f"{self._serial}: {what} got no answer within {self.timeout_s:g} s") from None
            except AgentError:
                raise
            except (AdbError, OSError, EOFError, _MidCommand) as exc:
                kind = _classify(exc)
                may_retry = idempotent or not isinstance(exc, _MidCommand)
                if kind in _RETRY_KINDS and attempt == 1 and may_retry and time.monotonic() < deadline:
                    self._dev = None  # the next attempt looks the transport up again
                    time.sleep(max(0.0, min(RECONNECT_PAUSE_S, deadline - time.monotonic())))
                    continue
                raise self._map_error(kind, exc, what, idempotent) from exc
        raise AssertionError("unreachable")

    def _map_error(self, kind: str, exc: BaseException, what: str, idempotent: bool) -> DeviceError:
        cause = exc.cause if isinstance(exc, _MidCommand) else exc
        serial = self._serial
        if kind == "timeout":
            return DeviceTimeoutError(f"{serial}: {what} timed out ({cause})")
        if kind == "server":
            return AdbServerError(f"lost the adb server at {self._target.address} during {what}: {cause}")
        if kind == "unauthorized":
            return DeviceUnauthorizedError(f"{serial} is unauthorized: accept the USB debugging prompt on the phone")
        if kind == "offline":
            return DeviceOfflineError(f"{serial} is offline")
        if kind == "transient":
            maybe = "" if idempotent or not isinstance(exc, _MidCommand) else "; it may or may not have happened"
            return DeviceOfflineError(f"{serial} stopped answering during {what} ({cause}){maybe}")
        if kind == "gone":
            return NoDeviceError(f"device {serial!r} not found (unplugged?)")
        return DeviceError(f"{serial}: {what} failed: adb said {cause}", hint=DeviceOfflineError.hint)

    def _text(self, cmd: str) -> tuple[int, str]:
        return self._run(f"`{cmd}`", lambda d: _sh(d, cmd), time.monotonic() + self.timeout_s)

    # ----- capture

    def screencap(self) -> np.ndarray:
        """A validated (H, W, 3) BGR frame of the current screen, within timeout_s."""
        deadline = time.monotonic() + self.timeout_s
        if self._mode is None or (self._mode == "raw" and self._capture == "auto"):
            plan = ("raw", "png")  # auto: raw is faster, png is the fallback
        else:
            plan = (self._mode, self._mode)
        reasons = []
        for mode in plan:
            cmd = _CAPTURE_CMD[mode]
            read = partial(_read_service, service=f"exec:{cmd}", size_hint=self._capture_size_hint(mode))
            data = self._run(f"`{cmd}`", read, deadline)
            try:
                frame = parse_raw_screencap(data) if mode == "raw" else decode_png(data)
            except CaptureError as exc:
                reasons.append(f"{mode}: {exc}")
                continue
            try:
                frame = self._to_screen_pixels(frame)
                check_frame(frame, self.screen_size())
            except CaptureError as exc:
                # A black or wrong-size frame says nothing about the path, so auto mode
                # keeps undecided unless raw produced no frame at all.
                reasons.append(f"{mode}: {exc}")
                continue
            if self._mode is None:
                self._mode = "raw" if mode == "raw" or not reasons else "png"
            return frame
        raise CaptureError(f"{self._serial}: no valid screenshot ({'; '.join(reasons)})")

    def _capture_size_hint(self, mode: str) -> int:
        w, h = self._physical  # what the panel captures, whatever `wm size` says
        return w * h * 4 + 16 if mode == "raw" else int(w * h * _PNG_BYTES_PER_PIXEL)

    def _to_screen_pixels(self, frame: np.ndarray) -> np.ndarray:
        # With `wm size` overridden some Android versions still capture at the panel's
        # size; scale to the override so frame pixels stay tap coordinates.
        h, w = frame.shape[:2]
        size = self.screen_size()
        pw, ph = self._physical
        physical = (ph, pw) if self._rotation % 2 else (pw, ph)
        if (w, h) != size and (w, h) == physical:
            return cv2.resize(frame, size, interpolation=cv2.INTER_AREA)
        return frame

    # ----- gestures

    def tap(self, x: int, y: int) -> None:
        self._check_point(x, y)
        self._input(f"input tap {int(x)} {int(y)}", time.monotonic() + self.timeout_s)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 200) -> None:
        self._check_point(x1, y1)
        self._check_point(x2, y2)
        if isinstance(duration_ms, bool) or not isinstance(duration_ms, (int, np.integer)):
            raise GestureError(f"swipe duration must be an integer of milliseconds, got {duration_ms!r}")
        if not 0 <= duration_ms <= MAX_SWIPE_MS:
            raise GestureError(f"swipe duration {duration_ms} ms is outside 0..{MAX_SWIPE_MS}")
        cmd = f"input swipe {int(x1)} {int(y1)} {int(x2)} {int(y2)} {int(duration_ms)}"
        # `input swipe` returns only after the swipe, so its duration adds to the bound.
        self._input(cmd, time.monotonic() + self.timeout_s + duration_ms / 1000)

    def _check_point(self, x: int, y: int) -> None:
        if isinstance(x, bool) or isinstance(y, bool):  # bool is an int to isinstance
            raise GestureError(f"gesture coordinates must be integers, got ({x!r}, {y!r})")
        check_point(self.screen_size(), x, y)

    def _input(self, cmd: str, deadline: float) -> None:
        status, said = self._run(f"`{cmd}`", lambda d: _sh(d, cmd), deadline, idempotent=False)
        if said or status != 0:
            raise DeviceError(f"{self._serial}: `{cmd}` failed: {said or f'exit status {status}'}", hint=_INPUT_HINT)


_CAPTURE_CMD = {"raw": "screencap", "png": "screencap -p"}
CAPTURE_ENV = "PUZZLE_AGENT_CAPTURE"


def _env_capture() -> CaptureMode:
    value = os.environ.get(CAPTURE_ENV, "").strip().lower() or "auto"
    if value not in ("auto", "raw", "png"):
        raise DeviceError(
            f"{CAPTURE_ENV}={value!r} is not a capture method",
            hint=f"set {CAPTURE_ENV} to auto, raw or png (or unset it)",
        )
    return value  # type: ignore[return-value]
# Worth one more try after looking the transport up again: a replugged phone has a new
# transport id, and a network phone the server marked offline may take `adb connect`.
_RETRY_KINDS = ("transient", "gone", "offline")


def _classify(exc: BaseException) -> str:
    """timeout, server, unauthorized, offline, gone, transient or adb (anything else adb said)."""
    cause = exc.cause if isinstance(exc, _MidCommand) else exc
    if isinstance(cause, (AdbTimeout, TimeoutError)):
        return "timeout"
    if isinstance(cause, (AdbConnectionError, ConnectionRefusedError)):
        return "server"
    if isinstance(cause, AdbError):
        msg = str(cause).lower()
        if "unauthorized" in msg:
            return "unauthorized"
        if "offline" in msg:
            return "offline"
        if "not found" in msg or "no device with transport id" in msg:
            # A replugged phone gets a new transport id: worth one fresh look-up.
            return "gone"
        if "closed" in msg or "authorizing" in msg or "connecting" in msg:
            return "transient"
        return "adb"
    return "transient"  # EOFError, connection reset, broken pipe, an aborted socket
