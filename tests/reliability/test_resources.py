"""Cause 8, and the wire part of cause 7: what a host or a phone can make us hold, and
numbers that arrive from the wire.

- The fake adbd under floods: connections beyond its cap are closed at once (said once);
  a connection that never does the handshake, or whose message stalls half-sent, is
  dropped and its thread ends; streams per connection are capped, and a stream's
  worker ends when its host goes.
- The fake phone's shell under garbage (through the real adb server, and on the raw
  wire for what the adb CLI cannot send: NUL bytes, non-UTF-8, lines beyond adb's own
  limit): every command answers with an error line and a non-zero status, never a dead
  service, and the phone answers the next command.
- The simulated phone's gesture log stays bounded however many gestures arrive.
- The host side never sizes memory from what a phone claims: `wm size` garbage, a raw
  header or a PNG IHDR claiming 60000x60000, and replies that never end are errors
  (exit 3 through the CLI) before any big buffer exists.
- The adb server's hint: restart it when it died or refuses; install adb only when there
  is no adb binary.
"""

from __future__ import annotations

import json
import os
import resource
import select
import socket
import struct
import subprocess
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import adbutils
import numpy as np
import pytest
from adbutils import AdbError

from redteam import Result, agent, agent_cmd, agent_env, assert_handled, wait_for

from agent.device.adb import AdbDevice
from agent.device.rawframe import decode_png, encode_raw_screencap
from agent.errors import AdbServerError, CaptureError, DeviceError
from agent.games.match3.sim import AnimationTiming, SimPhone
from agent.device.clock import ManualClock
from agent.simphone.adbd import AdbdServer, FakeShell, Limits, PhoneFacts
from agent.simphone.adbd import wire
from agent.simphone.adbd.screen import ScreenBytes
from agent.simphone.phone import GESTURE_LOG_SIZE

SIZE = (240, 400)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def conn_threads(server: AdbdServer) -> int:
    """The server's connection threads now alive."""
    return server.connection_threads()


def os_threads() -> int:
    return len(os.listdir("/proc/self/task"))


def sim_phone(seed: int = 3) -> SimPhone:
    return SimPhone(seed=seed, size=SIZE, serial=f"sim-{seed}", timing=AnimationTiming.instant())


@pytest.fixture
def serve():
    """serve(phone=None, **Limits fields) -> a running AdbdServer (stopped after the test)."""
    servers: list[AdbdServer] = []

    def start(phone: Any = None, **limits: Any) -> AdbdServer:
        server = AdbdServer(phone or sim_phone(), limits=Limits(**limits)).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


class Host:
    """The test as an adb server on one raw connection to the fake adbd."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)

    def read(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                break
            out += chunk
        return bytes(out)

    def send(self, command: int, arg0: int, arg1: int, data: bytes = b"") -> None:
        self.sock.sendall(wire.header(command, arg0, arg1, data, with_checksum=True) + data)

    def recv(self, timeout: float = 10) -> wire.Message | None:
        self.sock.settimeout(timeout)
        return wire.read_message(self, 1 << 24)

    def handshake(self) -> wire.Message:
        self.send(wire.A_CNXN, wire.VERSION, 1 << 20, b"host::features=shell_v2,cmd")
        reply = self.recv()
        assert reply is not None and reply.command == wire.A_CNXN
        return reply

    def run(self, local_id: int, service: bytes) -> tuple[int, bytes]:
        """OPEN the service, read it to CLSE: (first answer's command, bytes written)."""
        self.send(wire.A_OPEN, local_id, 0, service + b"\0")
        first = self.recv()
        assert first is not None
        if first.command == wire.A_CLSE:
            return first.command, b""
        out = bytearray()
        while (msg := self.recv()) is not None and msg.command != wire.A_CLSE:
            if msg.command == wire.A_WRTE:
                out += msg.data
                self.send(wire.A_OKAY, local_id, msg.arg0)
        return first.command, bytes(out)

    def ended(self, timeout: float = 15) -> bool:
        """The phone closed this connection (EOF or reset) within timeout."""
        readable, _, _ = select.select([self.sock], [], [], timeout)
        if not readable:
            return False
        try:
            while self.sock.recv(65536):
                pass
        except (ConnectionError, socket.timeout):
            pass
        return True

    def close(self) -> None:
        self.sock.close()


def still_serves(server: AdbdServer) -> None:
    host = Host(server.port)
    try:
        host.handshake()
        assert host.run(1, b"shell:echo alive") == (wire.A_OKAY, b"alive\n")
    finally:
        host.close()


# --------------------------------------------------------------------------- connection floods


def test_connection_flood_is_capped_said_once_and_every_thread_ends(serve, caplog) -> None:
    server = serve(max_connections=8, handshake_timeout_s=60)
    before, before_os = threading.active_count(), os_threads()
    socks = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(200)]
    try:
        assert wait_for(lambda: server.refused == 192, timeout=10), server.refused
        assert server.connections == 8 and conn_threads(server) == 8
        assert threading.active_count() <= before + 8 and os_threads() <= before_os + 8
        refusals = [r for r in caplog.records if "refusing more" in r.getMessage()]
        assert len(refusals) == 1  # once per flood, not 192 times
        # The refused ones were closed by the phone, not left half-open: each reads EOF.
        assert wait_for(lambda: len(select.select(socks, [], [], 0)[0]) == 192, timeout=10)
        for s in select.select(socks, [], [], 0)[0]:
            try:
                assert s.recv(1) == b""
            except ConnectionError:
                pass
    finally:
        for s in socks:
            s.close()
    assert wait_for(lambda: server.connections == 0 and conn_threads(server) == 0, timeout=10)
    # a thread is done for Python a moment before its OS thread has gone
    assert wait_for(lambda: threading.active_count() <= before and os_threads() <= before_os, timeout=10), (
        threading.active_count(), before, os_threads(), before_os)
    still_serves(server)


def test_connections_that_never_say_cnxn_are_dropped_and_their_threads_end(serve) -> None:
    server = serve(max_connections=8, handshake_timeout_s=0.5)
    before = threading.active_count()
    socks = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(8)]
    try:
        assert wait_for(lambda: server.connections + server.refused == 8, timeout=10)
        # Silent, and the sockets kept open: the phone drops them itself.
        assert wait_for(lambda: server.connections == 0 and conn_threads(server) == 0, timeout=30)
        assert threading.active_count() <= before
        for s in socks:
            s.settimeout(10)
            try:
                assert s.recv(1) == b""
            except ConnectionError:
                pass
    finally:
        for s in socks:
            s.close()
    still_serves(server)


def test_flood_ends_and_a_real_host_gets_in_again(serve) -> None:
    server = serve(max_connections=4, handshake_timeout_s=0.5)
    socks = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(50)]
    try:
        assert wait_for(lambda: server.connections + server.refused >= 50, timeout=10)
        assert server.connections <= 4
    finally:
        for s in socks:
            s.close()
    assert wait_for(lambda: server.connections == 0, timeout=30)
    still_serves(server)


def test_a_greeted_transport_may_stay_idle_as_adb_servers_keep_it(serve) -> None:
    server = serve(handshake_timeout_s=0.3)  # the default: no idle limit after CNXN
    host = Host(server.port)
    try:
        host.handshake()
        time.sleep(1.0)  # over three handshake timeouts of silence
        assert host.run(1, b"shell:echo still here") == (wire.A_OKAY, b"still here\n")
    finally:
        host.close()


def test_an_idle_limit_when_given_drops_a_silent_greeted_transport(serve) -> None:
    server = serve(idle_timeout_s=0.3)
    host = Host(server.port)
    try:
        host.handshake()
        assert host.ended()
        assert wait_for(lambda: conn_threads(server) == 0, timeout=10)
    finally:
        host.close()
    still_serves(server)


def _partial_header_before_cnxn(host: Host) -> None:
    host.sock.sendall(wire.header(wire.A_CNXN, wire.VERSION, 4096, b"x" * 10, with_checksum=True)[:10])


def _partial_header(host: Host) -> None:
    host.handshake()
    host.sock.sendall(wire.header(wire.A_OPEN, 1, 0, b"shell:echo\0", with_checksum=True)[:10])


def _partial_payload(host: Host) -> None:
    host.handshake()
    data = b"shell:echo " + b"x" * 100 + b"\0"
    host.sock.sendall(wire.header(wire.A_OPEN, 1, 0, data, with_checksum=True) + data[:10])


def _dripped_header(host: Host) -> None:
    host.handshake()
    head = wire.header(wire.A_OPEN, 1, 0, b"shell:echo\0", with_checksum=True)

    def drip() -> None:  # a byte every 0.2 s: always something arriving, never a message
        try:
            for b in head:
                host.sock.sendall(bytes([b]))
                time.sleep(0.2)
        except OSError:
            pass

    threading.Thread(target=drip, daemon=True).start()


@pytest.mark.parametrize(
    "stall", [_partial_header_before_cnxn, _partial_header, _partial_payload, _dripped_header],
    ids=["header-before-cnxn", "header", "payload", "dripped-header"],
)  # fmt: skip
def test_a_stalled_message_drops_the_connection_and_its_thread(serve, caplog, stall) -> None:
    server = serve(handshake_timeout_s=60, stall_timeout_s=0.5)
    host = Host(server.port)
    try:
        stall(host)
        assert host.ended()
        assert wait_for(lambda: conn_threads(server) == 0, timeout=10)
        assert any("stalled" in r.getMessage() for r in caplog.records)
    finally:
        host.close()
    still_serves(server)


def test_streams_per_connection_are_capped_and_their_workers_end_with_the_host(serve) -> None:
    server = serve(max_streams=4)
    before = threading.active_count()
    host = Host(server.port)
    host.handshake()
    answers = []
    for i in range(1, 31):  # each would hold a finger down for a minute
        host.send(wire.A_OPEN, i, 0, b"shell:input swipe 1 1 2 2 60000\0")
        msg = host.recv()
        assert msg is not None
        answers.append(msg.command)
    assert answers.count(wire.A_OKAY) == 4 and answers.count(wire.A_CLSE) == 26
    assert threading.active_count() <= before + 1 + 4  # the reader, and one worker per open stream
    host.close()  # the host goes: its workers stop waiting, not a minute later
    assert wait_for(lambda: threading.active_count() <= before, timeout=10)
    assert server.phone.swipes == 4
    still_serves(server)


def test_a_host_that_stops_reading_is_dropped_and_frees_every_thread(serve, caplog) -> None:
    server = serve(stall_timeout_s=0.5)
    before = threading.active_count()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # it fills at once
    sock.connect(("127.0.0.1", server.port))
    host = Host.__new__(Host)
    host.sock = sock
    try:
        host.send(wire.A_CNXN, wire.VERSION, 1 << 20, b"host::")
        for i in range(1, 9):  # eight frames of 384 KB on their way, and nobody reads them
            host.send(wire.A_OPEN, i, 0, b"exec:screencap\0")
        assert wait_for(lambda: server.commands == 8, timeout=15)  # all eight are sending
        assert wait_for(lambda: server.connections == 0, timeout=15)
        # Every connection and stream thread ends; the phone's one display thread stays.
        assert wait_for(lambda: threading.active_count() <= before + 1, timeout=15)
        assert not [t for t in threading.enumerate() if t.name.startswith(("adbd-exec", f"adbd-{server.port}-conn"))]
        assert any("took no data" in r.getMessage() for r in caplog.records), [r.getMessage() for r in caplog.records]
    finally:
        sock.close()
    still_serves(server)


# --------------------------------------------------------------------------- garbage through the real adb server


@dataclass
class Adb:
    exe: str
    port: int
    env: dict[str, str]

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run([self.exe, "-P", str(self.port), *args], capture_output=True, timeout=timeout,
                              env=self.env)  # fmt: skip

    def connect(self, server: AdbdServer) -> None:
        said = self.run("connect", server.address).stdout.decode()
        assert said.startswith(("connected to", "already connected to")), said
        assert wait_for(lambda: f"{server.address}\tdevice" in self.run("devices").stdout.decode(), timeout=10)


def _adb_exe() -> str | None:
    try:
        exe = adbutils.adb_path()
    except AdbError:
        return None
    return exe if os.path.isfile(exe) and os.access(exe, os.X_OK) else None


@pytest.fixture(scope="module")
def adb() -> Iterator[Adb]:
    """One private adb server for this module's wire cases (killed at the end)."""
    exe = _adb_exe()
    if exe is None:
        pytest.skip("no adb binary (install adb or adbutils)")
    port = free_port()
    # No emulator probing, and Linux's native USB backend (libusb makes a start wait 3 s).
    extra = {"ANDROID_ADB_SERVER_PORT": str(port), "ADB_LOCAL_TRANSPORT_MAX_PORT": "5554", "ADB_LIBUSB": "0"}
    env = dict(os.environ, **extra)
    env.pop("ANDROID_SERIAL", None)
    server = Adb(exe, port, env)
    assert server.run("start-server").returncode == 0
    yield server
    server.run("kill-server")


@pytest.fixture(scope="module")
def wired(adb: Adb) -> Iterator[AdbdServer]:
    """One simulated phone behind the module's adb server."""
    server = AdbdServer(sim_phone(7)).start()
    adb.connect(server)
    yield server
    adb.run("disconnect", server.address)
    server.stop()


def _huge(n: int = 5000) -> str:
    return "9" * n


GARBAGE = [
    ("input tap inf 1", "NumberFormatException"),  # Java's parseFloat knows Infinity, not inf
    ("input tap nan 1", "NumberFormatException"),
    ("input tap Infinity 1", "not a finite number"),
    ("input tap NaN 1", "not a finite number"),
    ("input tap -Infinity 5", "not a finite number"),
    ("input tap 1e400 1", "not a finite number"),  # overflows to infinity
    (f"input tap {_huge()} 1", "not a finite number"),
    ("input tap 0x10 1", "NumberFormatException"),
    ("input tap 1_0 1", "NumberFormatException"),
    ("input tap x y", "NumberFormatException"),
    ("input tap 1", "Invalid arguments"),
    ("input tap 1 2 3", "Invalid arguments"),
    ("input swipe 1 1 2 2 99999999999", "NumberFormatException"),  # beyond Java's int
    (f"input swipe 1 1 2 2 {_huge()}", "NumberFormatException"),
    ("input swipe 1 1 2 2 2147483647", "60000"),  # refused before anything sleeps
    ("input swipe 1 1 2 2 60001", "60000"),
    ("input swipe 1 1 2 2 1.5", "NumberFormatException"),  # Android's duration is an int
    ("input swipe 1 1 nan 2 100", "NumberFormatException"),
    ("input -d 7 tap 1 1", "display 7"),
    ("input -d x tap 1 1", "NumberFormatException"),
    ("input -d", "display id"),
    ("input fly 1 2", "Unknown command"),
    ("input", "Usage"),
    ("wm size 0x0", "cannot be resized"),
    ("wm size 60000x60000", "cannot be resized"),
    ("wm size -5x10", "cannot be resized"),
    ("wm size banana", "bad size"),
    ("wm size 12xab", "bad number"),
    ("wm size x", "bad size"),
    ("wm frobnicate", "wm knows only"),
    ("frobnicate --now", "not found"),
    ("echo 'unclosed", "syntax error"),
    ("getprop | grep x", "pipes"),
    ("sleep 99999999999 &", "pipes and background jobs"),
    ("screencap -d 9", "not valid"),
    ("screencap /sdcard/x.png", "file system"),
    ("screencap -q", "usage"),
]


@pytest.mark.integration
@pytest.mark.parametrize("command, says", GARBAGE, ids=[c[:40] for c, _ in GARBAGE])
def test_garbage_commands_answer_with_an_error_and_the_phone_goes_on(adb: Adb, wired: AdbdServer, caplog,
                                                                     command: str, says: str) -> None:  # fmt: skip
    taps, swipes = wired.phone.taps, wired.phone.swipes
    r = adb.run("-s", wired.address, "shell", command, timeout=30)  # a sleeping worker would time this out
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode != 0, (r.returncode, r.stdout, err)
    assert says.lower() in err.lower(), err
    assert (wired.phone.taps, wired.phone.swipes) == (taps, swipes)  # nothing reached the game
    assert not [rec for rec in caplog.records if rec.levelname == "ERROR"]  # no command crashed
    r = adb.run("-s", wired.address, "shell", "echo alive")
    assert (r.returncode, r.stdout) == (0, b"alive\n")


LENIENT = [  # what Android takes without a word, and so does the phone
    ("input tap 5000 5", 0, 0),  # off the screen: dropped
    ("input tap -1e300 5", 0, 0),  # finite, far off the screen
    ("input tap 10.6f 20", 1, 0),  # Java float syntax
    ("input swipe 1 1 2 2 -5", 0, 1),  # a negative duration means the default
    ("input touchscreen tap 3 4", 1, 0),
    ("input -d 0 tap 3 4", 1, 0),
    ("input keyevent 3", 0, 0),
]


@pytest.mark.integration
@pytest.mark.parametrize("command, taps, swipes", LENIENT, ids=[c for c, _, _ in LENIENT])
def test_what_android_accepts_is_accepted(adb: Adb, wired: AdbdServer, command: str, taps: int, swipes: int) -> None:
    before = wired.phone.taps, wired.phone.swipes
    r = adb.run("-s", wired.address, "shell", command)
    assert (r.returncode, r.stderr) == (0, b"")
    assert (wired.phone.taps - before[0], wired.phone.swipes - before[1]) == (taps, swipes)


@pytest.mark.integration
def test_long_lines_through_adb_are_answered(adb: Adb, wired: AdbdServer) -> None:
    words = ["x" * 999] * 60  # 60 KB: near what the adb CLI itself lets through
    r = adb.run("-s", wired.address, "shell", "echo", *words)
    assert r.returncode == 0 and r.stdout == (" ".join(words) + "\n").encode()


@pytest.mark.integration
def test_a_swipe_whose_client_is_killed_frees_its_worker(adb: Adb, wired: AdbdServer) -> None:
    def shells() -> set[threading.Thread]:
        return {t for t in threading.enumerate() if t.name.startswith("adbd-shell")}

    # (by identity: a shell of an earlier case may still be ending meanwhile)
    before = shells()
    client = subprocess.Popen([adb.exe, "-P", str(adb.port), "-s", wired.address, "shell", "input swipe 1 1 2 2 60000"],
                              env=adb.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        assert wait_for(lambda: len(shells() - before) == 1, timeout=30), "the swipe's shell never began"
        (worker,) = shells() - before
        time.sleep(0.5)
        assert worker.is_alive()  # the swipe holds it (for a minute, if nothing ends it)
    finally:
        client.kill()
        client.wait(10)
    assert wait_for(lambda: not worker.is_alive(), timeout=10)  # not a minute later


# --------------------------------------------------------------------------- what the adb CLI cannot send


RAW_SERVICES = [
    (b"shell:echo a\0b", wire.A_OKAY, b"a\n"),  # read up to the first NUL, as adbd does
    (b"shell:echo \xff\xfe", wire.A_OKAY, b"\xff\xfe\n"),  # bytes that are not UTF-8 come back as they came
    (b"shell:\xff\xfe", wire.A_OKAY, b"/system/bin/sh: \xff\xfe: not found\n"),
    (b"\xff\xfe:echo", wire.A_CLSE, b""),  # no such service
    (b"", wire.A_CLSE, b""),
    (b"\0\0\0", wire.A_CLSE, b""),
    (b"shell:", wire.A_OKAY, b"the simulated phone has no interactive shell"),
    (b"shell,v2,raw:input tap Infinity 1", wire.A_OKAY, b"not a finite number"),
    (b"exec:input swipe 1 1 2 2 999999", wire.A_OKAY, b"60000"),
    (b"shell:" + b"input tap 1 1;" * 10_000, wire.A_OKAY, b"Argument list too long"),  # 140 KB
    (b"shell:echo " + b"x" * 600_000, wire.A_OKAY, b"Argument list too long"),
]


@pytest.mark.parametrize("service, answer, says", RAW_SERVICES, ids=[s[:24].decode("latin-1") for s, _, _ in RAW_SERVICES])
def test_odd_service_names_on_the_raw_wire_are_answered(serve, caplog, service: bytes, answer: int, says: bytes) -> None:
    server = serve()
    host = Host(server.port)
    try:
        host.handshake()
        got, output = host.run(1, service)
        assert got == answer and says in output, (got, output[:300])
        assert server.phone.taps == 0
        assert host.run(2, b"shell:echo alive") == (wire.A_OKAY, b"alive\n")  # the same connection goes on
    finally:
        host.close()
    assert not [rec for rec in caplog.records if rec.levelname == "ERROR"]


def test_an_oversized_message_drops_only_that_connection(serve) -> None:
    server = serve()
    host = Host(server.port)
    try:
        host.handshake()
        data = b"shell:echo " + b"x" * (wire.MAX_PAYLOAD + 10)
        host.sock.sendall(wire.header(wire.A_OPEN, 1, 0, data, with_checksum=False))
        assert host.ended()
    finally:
        host.close()
    still_serves(server)


# --------------------------------------------------------------------------- the gesture log


def test_the_gesture_log_keeps_the_last_gestures_and_counts_all() -> None:
    phone = SimPhone(seed=1, size=SIZE, clock=ManualClock(), timing=AnimationTiming.instant())
    for i in range(3 * GESTURE_LOG_SIZE):
        phone.tap(i % SIZE[0], 5)
    phone.swipe(1, 1, 2, 2, 10)
    assert len(phone.gestures) == GESTURE_LOG_SIZE and len(phone.gesture_log) == GESTURE_LOG_SIZE
    assert (phone.taps, phone.swipes, phone.gesture_count) == (3 * GESTURE_LOG_SIZE, 1, 3 * GESTURE_LOG_SIZE + 1)
    assert phone.gestures[-1].kind == "swipe" and phone.gestures[-2].points == ((3 * GESTURE_LOG_SIZE - 1) % SIZE[0], 5)


def test_many_gestures_through_the_shell_hold_bounded_memory() -> None:
    phone = SimPhone(seed=1, size=SIZE, clock=ManualClock(), timing=AnimationTiming.instant())
    shell = FakeShell(phone, ScreenBytes(phone.screencap), PhoneFacts(), threading.Lock(), sleep=lambda s: None)
    line = "input tap 1 1;" * 8000  # 112 KB: one command line a phone's shell still takes
    shell.run(line, lambda fd, data: None)  # the log is full from here on
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(4):
            assert shell.run(line, lambda fd, data: None) == 0
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert phone.taps == 5 * 8000 and len(phone.gestures) == GESTURE_LOG_SIZE
    assert held < 512 * 1024, f"{held} bytes kept after 32000 more taps"  # unbounded, it was ~9 MB


# --------------------------------------------------------------------------- capture: never sized from a claim


MARK = "; echo __PA_RC=$?"


class ClaimingPhone:
    """A ShellDevice (the AdbDevice seam) whose replies are scripted, some without end."""

    def __init__(self, wm: str = "Physical size: 60x100", raw: Callable[[], Iterator[bytes]] | None = None,
                 png: Callable[[], Iterator[bytes]] | None = None, text: dict[str, Callable[[], Iterator[bytes]]] | None = None) -> None:  # fmt: skip
        self.wm = wm
        self.raw, self.png = raw, png
        self.text = text or {}
        self.served = 0  # bytes handed out, all replies together

    def open_transport(self) -> "_Conn":
        return _Conn(self)

    def reply(self, service: str) -> Iterator[bytes]:
        kind, _, cmd = service.partition(":")
        marked = cmd.endswith(MARK)
        cmd = cmd[: -len(MARK)] if marked else cmd
        if cmd == "screencap" and self.raw is not None:
            return self.raw()
        if cmd == "screencap -p" and self.png is not None:
            return self.png()
        if cmd in self.text:
            return self.text[cmd]()
        answers = {"getprop ro.product.model": "Claimer\n", "wm size": self.wm + "\n", "wm density": "Physical density: 99999999\n",
                   "dumpsys display": "mViewports=[DisplayViewport{type=INTERNAL, valid=true, orientation=0}]\n"}  # fmt: skip
        if cmd == "screencap":
            return iter([encode_raw_screencap(np.full((100, 60, 3), 128, np.uint8))])
        return iter([(answers.get(cmd, "") + ("__PA_RC=0\n" if marked else "")).encode()])


class _Conn:
    def __init__(self, phone: ClaimingPhone) -> None:
        self.phone = phone
        self.chunks: Iterator[bytes] = iter(())
        self.left = b""

    def send_command(self, cmd: str) -> None:
        self.chunks = self.phone.reply(cmd)

    def check_okay(self) -> None:
        pass

    def recv(self, n: int) -> bytes:
        if not self.left:
            self.left = next(self.chunks, b"")
        out, self.left = self.left[:n], self.left[n:]
        self.phone.served += len(out)
        return out

    def close(self) -> None:
        pass


def endless(head: bytes = b"", chunk: bytes = b"\x80" * 65536) -> Callable[[], Iterator[bytes]]:
    def gen() -> Iterator[bytes]:
        if head:
            yield head
        while True:
            yield chunk

    return gen


def raw_header(w: int, h: int, fmt: int = 1) -> bytes:
    return struct.pack("<IIII", w, h, fmt, 1)


def png_claiming(w: int, h: int) -> bytes:
    """A real little PNG whose IHDR then claims w x h (its CRC is not even checked first)."""
    import cv2

    png = bytearray(cv2.imencode(".png", np.full((4, 4, 3), 9, np.uint8))[1].tobytes())
    png[16:24] = struct.pack(">II", w, h)
    return bytes(png)


@pytest.fixture
def memory_guard() -> Iterator[None]:
    """Cap this process's address space for the test, so a regression that sizes a buffer
    from a claim fails with MemoryError instead of taking the machine's memory."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    cap = vm + (1 << 30)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


_CLI_MEMORY = 3 << 30  # the agent CLI runs in well under 2 GiB of address space


def agent_capped(*args: str, cwd: Any, env: dict[str, str], timeout: float = 60) -> Result:
    """`agent ARGS` as redteam.agent runs it, with its address space capped (see memory_guard)."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (_CLI_MEMORY, resource.getrlimit(resource.RLIMIT_AS)[1]))

    p = subprocess.run(agent_cmd(*args), cwd=cwd, env=agent_env(env, cwd), capture_output=True, text=True,
                       timeout=timeout, errors="replace", preexec_fn=cap)  # fmt: skip
    return Result(tuple(args), p.returncode, p.stdout, p.stderr)


def peak_during(fn: Callable[[], Any]) -> tuple[int, BaseException | None]:
    tracemalloc.start()
    try:
        fn()
        error = None
    except BaseException as exc:  # noqa: BLE001 - the test looks at it
        error = exc
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak, error


def device(phone: ClaimingPhone, capture: str = "auto") -> AdbDevice:
    return AdbDevice("CLAIM1", capture=capture, timeout_s=5.0, connect=lambda: phone)  # type: ignore[arg-type]


WM_GARBAGE = [
    ("Physical size: 60000x60000", "60000x60000"),
    ("Physical size: 0x0", "0x0"),
    ("Physical size: -1080x2400", "-1080x2400"),
    ("Physical size: 1080x-5", "1080x-5"),
    (f"Physical size: {'9' * 5000}x2400", "which no screen has"),
    ("Physical size: 1080x2400\nOverride size: 0x0", "override size is 0x0"),
    ("Physical size: 1080x2400\nOverride size: 99999x99999", "override size is 99999x99999"),
    ("Physical size: banana", "cannot read the screen size"),
    ("", "cannot read the screen size"),
    ("Error: something went wrong", "cannot read the screen size"),
]


@pytest.mark.parametrize("said, says", WM_GARBAGE, ids=[s[:40] for s, _ in WM_GARBAGE])
def test_wm_size_garbage_is_a_device_error_before_any_capture(memory_guard, said: str, says: str) -> None:
    phone = ClaimingPhone(wm=said)
    peak, error = peak_during(lambda: device(phone))
    assert isinstance(error, DeviceError) and error.exit_code == 3, error
    assert says in str(error) and "CLAIM1" in str(error) and "wm size" in error.hint
    assert peak < 4 << 20, f"peak {peak} bytes"


CLAIMS = [
    ("raw", endless(raw_header(60000, 60000)), "60000x60000 frame, which no screen has"),
    ("raw", endless(raw_header(8192, 8192)), "but the phone's screen is 100x60 or 60x100"),
    ("raw", endless(raw_header(0, 100)), "0x100"),
    ("raw", endless(raw_header(60, 100, fmt=7)), "pixel format 7"),
    ("raw", endless(raw_header(60, 100)), "went on past 24016 bytes"),  # a frame's worth, then more
    ("raw", endless(chunk=b"Error: " * 10000), "went on past 65536 bytes, more than it can be (it began 'Error: "),
    ("png", endless(png_claiming(60000, 60000)), "60000x60000 frame, which no screen has"),
    ("png", endless(png_claiming(4000, 3000)), "4000x3000 frame, but the phone's screen is"),
    ("png", endless(PNG_MAGIC + b"\0" * 16), "does not start with its IHDR"),
]


@pytest.mark.parametrize("mode, reply, says", CLAIMS, ids=[f"{m}-{s[:30]}" for m, _, s in CLAIMS])
def test_a_frame_claiming_a_size_is_refused_before_a_buffer_that_big_exists(memory_guard, mode: str, reply,
                                                                            says: str) -> None:  # fmt: skip
    phone = ClaimingPhone(**{mode: reply})
    dev = device(phone, capture=mode)
    peak, error = peak_during(dev.screencap)
    assert isinstance(error, CaptureError) and error.exit_code == 3, error
    assert says in str(error)
    assert peak < 8 << 20, f"peak {peak} bytes"
    assert phone.served < 8 << 20  # it stopped reading, too


def test_a_text_reply_without_end_is_refused_at_its_limit(memory_guard) -> None:
    phone = ClaimingPhone(text={"getprop ro.product.model": endless(chunk=b"model " * 10000)})
    peak, error = peak_during(lambda: device(phone))
    assert isinstance(error, DeviceError) and "went on past" in str(error) and "CLAIM1" in str(error), error
    assert peak < 40 << 20 and phone.served < 9 << 20


def test_a_png_claiming_a_huge_image_is_refused_before_decoding(memory_guard) -> None:
    peak, error = peak_during(lambda: decode_png(png_claiming(60000, 60000)))
    assert isinstance(error, CaptureError) and "60000x60000" in str(error)
    assert peak < 1 << 20


def test_absurd_density_is_unknown_not_a_number() -> None:
    assert device(ClaimingPhone()).density is None  # it said 99999999 dpi


# --------------------------------------------------------------------------- the same through the CLI


class ClaimingDevice:
    """A phone (Device) served on the wire that says its screen is `size`, whatever it is."""

    def __init__(self, size: Any) -> None:
        self.size = size
        self.serial, self.model = "claim-0", "claimer"

    def screen_size(self) -> Any:
        return self.size

    def screencap(self) -> np.ndarray:
        return np.full((SIZE[1], SIZE[0], 3), 128, np.uint8)

    def tap(self, x: int, y: int) -> None:
        pass

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 200) -> None:
        pass


@pytest.fixture
def claiming(adb: Adb):
    started: list[AdbdServer] = []

    def start(size: Any, raw: bytes | None = None, png: bytes | None = None) -> AdbdServer:
        server = AdbdServer(ClaimingDevice(size)).start()  # type: ignore[arg-type]
        if raw is not None:
            server.screen.raw = lambda: raw  # type: ignore[method-assign]
        if png is not None:
            server.screen.png = lambda: png  # type: ignore[method-assign]
        started.append(server)
        adb.connect(server)
        return server

    yield start
    for server in started:
        adb.run("disconnect", server.address)
        server.stop()


CLI_SIZES = [((60000, 60000), "60000x60000"), ((0, 0), "0x0"), ((-1, -1), "-1x-1"), (("banana", "x"), "cannot read")]


@pytest.mark.integration
@pytest.mark.parametrize("size, says", CLI_SIZES, ids=[s for _, s in CLI_SIZES])
@pytest.mark.parametrize("command", [("play", "--moves", "2"), ("calibrate", "--yes")], ids=lambda c: c[0])
def test_cli_refuses_a_phone_with_an_absurd_screen_size(tmp_path, adb: Adb, claiming, command, size, says) -> None:
    server = claiming(size)
    r = agent_capped(*command, "--serial", server.address, "--profiles", str(tmp_path / "p"), cwd=tmp_path,
                     env=adb.env)  # fmt: skip
    assert_handled(r, 3, says=(says, server.address))


@pytest.mark.integration
def test_cli_devices_lists_a_phone_with_an_absurd_size_without_one(tmp_path, adb: Adb, claiming) -> None:
    server = claiming((60000, 60000))
    r = agent_capped("devices", "--json", cwd=tmp_path, env=adb.env)
    assert_handled(r, 0)
    row = next(d for d in json.loads(r.out) if d["serial"] == server.address)
    assert row["state"] == "device" and row["resolution"] is None


CLI_FRAMES = [
    (raw_header(60000, 60000) + b"\0" * 64, png_claiming(60000, 60000), "60000x60000"),
    (raw_header(8192, 8192) + b"\0" * 64, png_claiming(8192, 8192), "8192x8192"),
    (raw_header(SIZE[0], SIZE[1], fmt=5) + b"\0" * 64, b"Error: no display\n", "pixel format 5"),
]


@pytest.mark.integration
@pytest.mark.parametrize("raw, png, says", CLI_FRAMES, ids=[s for _, _, s in CLI_FRAMES])
def test_cli_refuses_a_frame_header_that_claims_too_much(tmp_path, adb: Adb, claiming, raw, png, says) -> None:
    server = claiming(SIZE, raw=raw, png=png)
    r = agent_capped("calibrate", "--serial", server.address, "--profiles", str(tmp_path / "p"), "--yes",
                     cwd=tmp_path, env=adb.env)  # fmt: skip
    assert_handled(r, 3, says=(says, "screenshot"))


# --------------------------------------------------------------------------- the adb server's hint


@pytest.mark.integration
def test_a_killed_adb_server_says_restart_it_not_install_it(private_adb_port) -> None:
    exe, port = private_adb_port
    phone = AdbdServer(sim_phone(9)).start()
    try:
        env = dict(os.environ)
        assert subprocess.run([exe, "-P", str(port), "start-server"], env=env, capture_output=True,
                              timeout=30).returncode == 0  # fmt: skip
        said = subprocess.run([exe, "-P", str(port), "connect", phone.address], env=env, capture_output=True,
                              timeout=30).stdout.decode()  # fmt: skip
        assert "connected" in said
        dev = AdbDevice(phone.address, timeout_s=5)
        dev.tap(1, 1)
        subprocess.run([exe, "-P", str(port), "kill-server"], env=env, capture_output=True, timeout=30)
        with pytest.raises(AdbServerError) as info:
            dev.tap(2, 2)
        assert "adb start-server" in info.value.hint and "install" not in info.value.hint
    finally:
        phone.stop()


def test_cli_server_that_hangs_up_says_restart_it(tmp_path) -> None:
    with socket.socket() as squatter:  # something on the port that is not an adb server
        squatter.bind(("127.0.0.1", 0))
        squatter.listen(16)
        stop = threading.Event()

        def hang_up() -> None:
            squatter.settimeout(0.1)
            while not stop.is_set():
                try:
                    squatter.accept()[0].close()
                except OSError:
                    pass

        t = threading.Thread(target=hang_up, daemon=True)
        t.start()
        try:
            r = agent("devices", cwd=tmp_path, env={"ANDROID_ADB_SERVER_PORT": str(squatter.getsockname()[1])},
                      timeout=60)  # fmt: skip
        finally:
            stop.set()
            t.join(5)
    assert_handled(r, 3, says="adb server")
    assert "kill-server" in r.err and "install adb" not in r.err


@pytest.mark.parametrize("adb_path", ["/nonexistent/adb", "/etc/hostname"], ids=["missing", "not-executable"])
def test_cli_without_an_adb_binary_says_install_it(tmp_path, adb_path: str) -> None:
    env = {"ANDROID_ADB_SERVER_PORT": str(free_port()), "ADBUTILS_ADB_PATH": adb_path}
    r = agent("devices", cwd=tmp_path, env=env, timeout=60)
    assert_handled(r, 3, says=(adb_path, "install adb"))
