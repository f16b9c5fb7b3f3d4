"""The real adb path, end to end: a private adb server (the adb binary bundled with
adbutils, or the system's) talking to the project's simulated phones served on the wire
(agent.simphone.adbd), exactly as it would to phones with wireless debugging on.

Every adb server and phone started here is stopped by a fixture, on free ports.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import adbutils
import cv2
import numpy as np
import pytest

from agent.device.adb import AdbDevice, connect_tcp, select_serial
from agent.simphone.adbd import AdbdServer, Limits
from agent.games.match3.sim import AnimationTiming, SimPhone
from agent.device.rawframe import decode_png, parse_raw_screencap
from agent.errors import DeviceOfflineError, DeviceTimeoutError, DeviceUnauthorizedError, GestureError
from agent.games.match3.sim_profile import save_sim_profile
from agent.play.journal import read_journal


def free_port() -> int:
    # Not imported from tests/conftest.py: with tests/reliability collected too, the
    # name `conftest` may be that folder's conftest instead.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


pytestmark = pytest.mark.integration

SIZE = (720, 1280)  # a supported phone size; small frames keep the tier quick
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@dataclass
class AdbServer:
    exe: str
    port: int

    def run(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess:
        return subprocess.run(
            [self.exe, "-P", str(self.port), *args], capture_output=True, timeout=timeout, env=dict(os.environ)
        )

    def text(self, *args: str) -> str:
        return self.run(*args).stdout.decode("utf-8", "replace")

    def connect(self, address: str) -> str:
        said = self.text("connect", address)
        assert said.startswith(("connected to", "already connected to")), said
        return said

    def state(self, serial: str) -> str | None:
        for line in self.text("devices").splitlines()[1:]:
            parts = line.split()
            if len(parts) >= 2 and parts[0] == serial:
                return parts[1]
        return None


@pytest.fixture
def adb_server(private_adb_port) -> AdbServer:
    exe, port = private_adb_port
    server = AdbServer(exe, port)
    r = server.run("start-server")
    assert r.returncode == 0, r.stderr
    return server  # private_adb_port kills it


@pytest.fixture
def serve(adb_server: AdbServer):
    """serve(seed=..., size=..., connect=True, **AdbdServer options) -> a running phone."""
    servers: list[AdbdServer] = []

    def start(
        seed: int = 0, size: tuple[int, int] = SIZE, connect: bool = True, port: int = 0,
        timing: AnimationTiming | None = None, **kw,
    ) -> AdbdServer:
        phone = SimPhone(seed=seed, size=size, serial=f"sim-{seed}", timing=timing)
        server = AdbdServer(phone, port=port, **kw).start()
        servers.append(server)
        if connect:
            adb_server.connect(server.address)
            wait_for(lambda: adb_server.state(server.address) == "device", f"{server.address} ready")
        return server

    yield start
    for server in servers:
        server.thaw()
        server.stop()


def wait_for(condition, what: str, timeout_s: float = 10.0) -> None:
    until = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > until:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def agent_cmd(*args: str, **kw) -> list[str]:
    return [sys.executable, "-m", "agent.cli", *args]


def run_agent(*args: str, timeout: float = 300, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(agent_cmd(*args), capture_output=True, text=True, timeout=timeout, env=dict(os.environ), cwd=cwd)


def shown(server: AdbdServer) -> np.ndarray:
    """What the served phone shows now (the same frame its screencap encodes)."""
    with server.lock:
        return server.phone.screencap()


# --------------------------------------------------------------------------- the adb CLI


def test_adb_connect_and_devices_list_the_model(serve, adb_server: AdbServer) -> None:
    server = serve(connect=False)
    assert adb_server.text("connect", server.address).strip() == f"connected to {server.address}"
    line = next(row for row in adb_server.text("devices", "-l").splitlines() if row.startswith(server.address))
    assert line.split()[1] == "device"
    # adb prints the banner's fields with anything but letters and digits as '_'.
    assert "model:puzzle_sim" in line and "product:puzzle_sim" in line
    r = adb_server.run("-s", server.address, "shell", "getprop", "ro.product.model")
    assert r.returncode == 0 and r.stdout.decode().strip() == "puzzle-sim"


def test_adb_exec_out_screencap_gives_a_valid_png_and_raw_frame(serve, adb_server: AdbServer) -> None:
    server = serve()
    png = adb_server.run("-s", server.address, "exec-out", "screencap", "-p").stdout
    assert png.startswith(PNG_MAGIC)
    rgba = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_UNCHANGED)
    assert rgba.shape == (SIZE[1], SIZE[0], 4) and (rgba[..., 3] == 255).all()  # RGBA, as phones send
    np.testing.assert_array_equal(decode_png(png), shown(server))
    raw = adb_server.run("-s", server.address, "exec-out", "screencap").stdout
    assert len(raw) == 16 + SIZE[0] * SIZE[1] * 4
    np.testing.assert_array_equal(parse_raw_screencap(raw, expect=SIZE), shown(server))


def test_adb_shell_v2_exit_codes_and_command_lines(serve, adb_server: AdbServer) -> None:
    server = serve()
    r = adb_server.run("-s", server.address, "shell", "wm", "size")
    assert (r.returncode, r.stdout.decode()) == (0, f"Physical size: {SIZE[0]}x{SIZE[1]}\n")
    r = adb_server.run("-s", server.address, "shell", "frobnicate", "--now")
    assert r.returncode == 127
    assert b"frobnicate: not found" in r.stderr and r.stdout == b""  # v2 keeps stderr apart
    r = adb_server.run("-s", server.address, "shell", "echo 'a  b'; frobnicate; echo rc=$? && echo and || echo or")
    assert r.stdout.decode() == "a  b\nrc=127\nand\n"


# --------------------------------------------------------------------------- adbutils


def test_adbutils_shell_screenshot_and_gestures(serve, adb_server: AdbServer) -> None:
    server = serve()
    d = adbutils.AdbClient(port=adb_server.port).device(server.address)
    v1 = d.shell2("frobnicate")  # shell v1 with adbutils' `; echo X4EXIT:$?`
    assert v1.returncode == 127 and "not found" in v1.output
    v2 = d.shell2("echo hi", v2=True)
    assert (v2.returncode, v2.stdout) == (0, "hi\n")
    assert tuple(d.window_size()) == SIZE and d.rotation() == 0
    image = d.screenshot(error_ok=False)
    np.testing.assert_array_equal(cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2BGR), shown(server))
    d.click(5, 6)
    d.swipe(10, 20, 30, 40, 0.05)
    got = [(g.kind, g.points) for g in server.phone.gesture_log]
    assert got == [("tap", (5, 6)), ("swipe", (10, 20, 30, 40))]


# --------------------------------------------------------------------------- the agent's AdbDevice


def test_adb_device_reads_facts_and_captures_by_both_methods(serve) -> None:
    server = serve()
    for mode in ("raw", "gzip", "png", "auto"):
        dev = AdbDevice(server.address, capture=mode, timeout_s=10)
        assert (dev.model, dev.screen_size(), dev.density, dev.rotation) == ("puzzle-sim", SIZE, 420, 0)
        np.testing.assert_array_equal(dev.screencap(), shown(server))
        # auto: whichever was fastest here, all three being correct.
        assert dev.capture_mode == mode if mode != "auto" else dev.capture_mode in ("raw", "gzip", "png")


def test_taps_and_swipes_arrive_with_the_right_coordinates(serve) -> None:
    server = serve()
    dev = AdbDevice(server.address, timeout_s=10)
    dev.tap(12, 34)
    dev.swipe(100, 200, 300, 400, 50)
    dev.tap(SIZE[0] - 1, SIZE[1] - 1)
    with pytest.raises(GestureError):
        dev.tap(SIZE[0], 0)  # refused before it is sent
    log = server.phone.gesture_log
    assert [(g.kind, g.points, g.duration_ms) for g in log] == [
        ("tap", (12, 34), 0),
        ("swipe", (100, 200, 300, 400), 50),
        ("tap", (SIZE[0] - 1, SIZE[1] - 1), 0),
    ]
    # `input swipe` returns when the finger lifts, as on a phone.
    assert log[2].at - log[1].at >= 0.05


def test_agent_play_advances_the_served_game(serve, tmp_path: Path) -> None:
    # Animations at half speed: the wire is under test here, not the patience of CI.
    server = serve(seed=5, timing=AnimationTiming(swap_ms=75, clear_ms=90, fall_ms=110))
    profiles = tmp_path / "profiles"
    save_sim_profile(server.phone, profiles)
    before = server.phone.state.moves_made
    r = run_agent("play", "--serial", server.address, "--moves", "20", "--profiles", str(profiles),
                  "--runs", str(tmp_path / "runs"), "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["moves"] == 20 and summary["serial"] == server.address
    # The game on the phone moved on by exactly the swipes the agent made.
    assert server.phone.state.moves_made - before == 20
    swipes = [g for g in server.phone.gesture_log if g.kind == "swipe"]
    assert len(swipes) == 20 and all(g.move is not None for g in swipes)
    decisions = [e for e in read_journal(summary["journal"]) if e["type"] == "decision"]
    assert all(len(e["gestures"]) == 1 and e["gestures"][0][0] == "swipe" for e in decisions)
    assert [tuple(e["gestures"][0][1:5]) for e in decisions] == [g.points for g in swipes]


def test_several_phones_at_once(serve, adb_server: AdbServer) -> None:
    servers = [serve(seed=seed) for seed in (1, 2, 3)]
    assert len({s.port for s in servers}) == 3
    listed = adb_server.text("devices")
    assert all(f"{s.address}\tdevice" in listed for s in servers)
    errors: list[BaseException] = []
    frames: dict[int, np.ndarray] = {}

    def drive(i: int, server: AdbdServer) -> None:
        try:
            dev = AdbDevice(server.address, timeout_s=10)
            for _ in range(3):
                frames[i] = dev.screencap()
                dev.tap(10 + i, 20 + i)
        except BaseException as exc:  # handed to the test thread
            errors.append(exc)

    threads = [threading.Thread(target=drive, args=(i, s)) for i, s in enumerate(servers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    for i, server in enumerate(servers):
        np.testing.assert_array_equal(frames[i], shown(server))  # its own screen, not another's
        assert [g.points for g in server.phone.gesture_log] == [(10 + i, 20 + i)] * 3
    assert not np.array_equal(frames[0], frames[1])  # different seeds, different boards


# --------------------------------------------------------------------------- faults


def test_a_real_adb_server_keeps_an_idle_transport_past_every_short_limit(serve, adb_server: AdbServer) -> None:
    # Limits far below how long adb leaves its transport silent between commands: only
    # connections that never do the handshake, or stall mid-message, may be dropped.
    server = serve(limits=Limits(handshake_timeout_s=0.3, stall_timeout_s=0.3, max_connections=2))
    dev = AdbDevice(server.address, timeout_s=10)
    dev.tap(1, 1)
    time.sleep(1.5)  # five handshake and stall timeouts of silence
    assert adb_server.state(server.address) == "device" and server.connections == 1
    dev.tap(2, 2)
    np.testing.assert_array_equal(dev.screencap(), shown(server))
    assert [g.points for g in server.phone.gesture_log] == [(1, 1), (2, 2)]



def test_restarted_network_phone_is_connected_again(serve, adb_server: AdbServer) -> None:
    server = serve()
    dev = AdbDevice(server.address, timeout_s=10)
    dev.tap(1, 1)
    server.stop()  # switched off: the adb server marks it offline
    wait_for(lambda: adb_server.state(server.address) != "device", "the adb server to notice")
    restarted = AdbdServer(server.phone, port=server.port).start()
    try:
        # The adb server would retry on its own only ~10 s later: the device does `adb connect`.
        np.testing.assert_array_equal(dev.screencap(), shown(restarted))
        dev.tap(2, 2)
        assert [g.points for g in server.phone.gesture_log] == [(1, 1), (2, 2)]
    finally:
        restarted.stop()


def test_switched_off_network_phone_is_a_clear_error(serve, adb_server: AdbServer) -> None:
    server = serve()
    dev = AdbDevice(server.address, timeout_s=5)
    server.stop()
    with pytest.raises(DeviceOfflineError, match=f"adb connect {server.address}") as info:
        dev.screencap()
    assert "listening" in info.value.hint


def test_phone_killed_mid_game_ends_play_cleanly_and_keeps_the_journal(adb_server: AdbServer, tmp_path: Path) -> None:
    port = free_port()
    profiles, runs = tmp_path / "profiles", tmp_path / "runs"
    out = open(tmp_path / "serve.log", "w+")
    phone = subprocess.Popen(
        agent_cmd("sim", "serve", "--port", str(port), "--size", f"{SIZE[0]}x{SIZE[1]}", "--profiles", str(profiles)),
        stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ),
    )
    play = None
    try:
        wait_for(lambda: (tmp_path / "serve.log").read_text().count("Ctrl-C") == 1, "the phone to start", 60)
        said = (tmp_path / "serve.log").read_text()
        assert f"127.0.0.1:{port}" in said and f"agent play --serial 127.0.0.1:{port}" in said
        assert list(profiles.glob("puzzle-sim_720x1280.toml")) and "puzzle-sim_720x1280.toml" in said
        # No `adb connect` first: `agent play --serial HOST:PORT` connects by itself.
        play = subprocess.Popen(
            agent_cmd("play", "--serial", f"127.0.0.1:{port}", "--profiles", str(profiles), "--runs", str(runs)),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ),
        )

        def decisions() -> int:
            journals = list(runs.glob("*/*.jsonl"))
            return sum(e["type"] == "decision" for e in read_journal(journals[0])) if journals else 0

        wait_for(lambda: decisions() >= 3, "three moves", 120)
        phone.send_signal(signal.SIGKILL)
        phone.wait(10)
        stdout, stderr = play.communicate(timeout=60)
    finally:
        for proc in (phone, play):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)
        out.close()
    assert play.returncode == 3, stderr
    assert "error:" in stderr and "fix:" in stderr and "Traceback" not in stderr + stdout
    assert f"127.0.0.1:{port}" in stderr
    events = read_journal(next(runs.glob("*/*.jsonl")))
    assert events[0]["type"] == "start" and sum(e["type"] == "decision" for e in events) >= 3


def test_hung_phone_fails_within_the_bound(serve) -> None:
    server = serve()
    dev = AdbDevice(server.address, timeout_s=2)
    server.freeze()
    for call in (dev.screencap, lambda: dev.tap(5, 5)):
        start = time.monotonic()
        with pytest.raises(DeviceTimeoutError, match="within 2 s") as info:
            call()
        assert time.monotonic() - start < 6  # the bound plus scheduling slack, not 600 s
        assert info.value.hint
    with pytest.raises(DeviceTimeoutError):
        AdbDevice(server.address, timeout_s=2)  # reading its facts hangs too
    server.thaw()
    np.testing.assert_array_equal(dev.screencap(), shown(server))  # and it recovers


def test_unauthorized_phone_gives_the_clear_message(serve, adb_server: AdbServer, tmp_path: Path) -> None:
    server = serve(unauthorized=True, connect=False)
    assert adb_server.text("connect", server.address).startswith("failed to authenticate")
    wait_for(lambda: adb_server.state(server.address) == "unauthorized", "the unauthorized state")
    with pytest.raises(DeviceUnauthorizedError, match="accept") as info:
        select_serial(server.address)
    assert "Allow USB debugging" in info.value.hint
    with pytest.raises(DeviceUnauthorizedError):
        connect_tcp(server.address)
    r = run_agent("play", "--serial", server.address, cwd=tmp_path)
    assert r.returncode == 3
    assert "error:" in r.stderr and "Allow USB debugging" in r.stderr and "Traceback" not in r.stderr


def test_no_adb_server_one_is_started_on_the_configured_port(private_adb_port) -> None:
    exe, port = private_adb_port
    assert not _answers(port)
    r = run_agent("devices", "--json")
    assert r.returncode == 0 and json.loads(r.stdout) == []
    assert _answers(port)  # the fixture kills it


def test_adb_server_that_cannot_be_started_or_reached_is_a_clear_message(private_adb_port, monkeypatch) -> None:
    monkeypatch.setenv("ADBUTILS_ADB_PATH", "/nonexistent/adb")
    r = run_agent("devices")
    assert r.returncode == 3
    assert "error:" in r.stderr and "/nonexistent/adb" in r.stderr and "fix:" in r.stderr
    assert "Traceback" not in r.stderr
    # Something that is not an adb server on the port: it answers, then hangs up.
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen(8)
        port = squatter.getsockname()[1]
        monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(port))
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
            r = run_agent("devices")
        finally:
            stop.set()
            t.join(5)
    assert r.returncode == 3
    assert f"adb server at 127.0.0.1:{port}" in r.stderr and "fix:" in r.stderr and "Traceback" not in r.stderr


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


# --------------------------------------------------------------------------- the commands


def test_sim_serve_refuses_a_port_in_use(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        r = run_agent("sim", "serve", "--port", str(port), "--profiles", str(tmp_path), timeout=120)
    assert r.returncode == 1
    assert f"cannot serve the phone on 127.0.0.1:{port}" in r.stderr and "--port" in r.stderr
    assert "Traceback" not in r.stderr
    r = run_agent("sim", "serve", "--game", "chess", timeout=120)
    assert r.returncode == 2 and "match3" in r.stderr


def test_bench_capture_reports_every_method(private_adb_port) -> None:
    r = run_agent("bench", "capture", "--frames", "3", "--taps", "2", "--size", "720x1280", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["model"] == "puzzle-sim" and report["size"] == [720, 1280]
    assert [(x["method"], x["n"]) for x in report["results"]] == [("raw", 3), ("gzip", 3), ("png", 3), ("tap", 2)]
    assert report["auto"] in ("raw", "gzip", "png") and set(report["auto_report"]) == {"raw", "gzip", "png"}
    for x in report["results"]:
        assert 0 < x["median_ms"] <= x["p95_ms"] and x["per_s"] > 0
    # It cleaned up: its private adb server and phone are gone (nothing on their ports).
    assert not _answers(int(report["adb_server"].rsplit(":", 1)[1]))
