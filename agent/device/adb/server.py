"""The adb server: which one to talk to, starting and stopping it, and our client for it.

The client (`_BoundedClient`) caps every socket's timeout at the bounded call's time
left and never runs `adb start-server` on its own; `ensure_server` starts a local
server once, within a time bound.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

import adbutils
from adbutils import AdbClient, AdbConnection, AdbError, AdbTimeout

from agent.device.adb.calls import _Call, _local
from agent.device.adb.env import env_port as _env_port
from agent.errors import AdbServerError

# `adb start-server` took 3 s here; adbutils allows 20 s. Starting happens once per run.
SERVER_START_TIMEOUT_S = 15.0
_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class AdbTarget:
    """Which adb server to talk to."""

    host: str = "127.0.0.1"
    port: int = field(default_factory=_env_port)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


# --------------------------------------------------------------------------- client


class _NoSpawnConnection(AdbConnection):
    def _safe_connect(self) -> socket.socket:
        # adbutils runs `adb start-server` (up to 20 s) whenever a connect fails; we start
        # the server once, bounded, in ensure_server, and want a dead server to fail fast.
        sock: socket.socket = self._create_socket()
        return sock


class _BoundedClient(AdbClient):
    """An AdbClient whose sockets never wait longer than the call's time left."""

    def __init__(self, target: AdbTarget, timeout_s: float) -> None:
        super().__init__(host=target.host, port=target.port, socket_timeout=timeout_s)
        self._timeout_s = timeout_s

    def make_connection(self, timeout: float | None = None) -> AdbConnection:
        # adbutils passes its 600 s default here for every transport: replace it with the
        # time the call has left (which, for a long swipe, can exceed timeout_s).
        call: _Call[Any] | None = getattr(_local, "call", None)
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
        raise AdbServerError(
            f"no adb server at {target.address}, and no adb binary to start one: {exc}", hint=AdbServerError.install_hint
        ) from None
    # adb picks the port from -P and from the environment; set both so the server and
    # any adb child it spawns agree with us (adbutils itself only reads the variable).
    env = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(target.port))
    try:
        proc = subprocess.run(
            [exe, "-P", str(target.port), "start-server"],
            check=False,  # its exit status says less than whether the server answers after
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
        # Named but missing (ADBUTILS_ADB_PATH, a removed package) or not executable.
        raise AdbServerError(
            f"no adb server at {target.address}, and cannot run {exe} to start one: {exc}",
            hint=f"{AdbServerError.install_hint}, or point ADBUTILS_ADB_PATH at a working adb",
        ) from None
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
        subprocess.run([exe, "-P", str(target.port), "kill-server"], check=False, env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout_s)  # fmt: skip
    except (AdbError, OSError, subprocess.TimeoutExpired) as exc:
        raise AdbServerError(f"could not stop the adb server at {target.address}: {exc}") from None


def _open_client(target: AdbTarget, timeout_s: float) -> Any:
    """The adb client for target, with a server running behind it (tests replace this)."""
    ensure_server(target)
    return _BoundedClient(target, timeout_s)
