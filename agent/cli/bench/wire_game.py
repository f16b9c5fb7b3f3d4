"""One simulated game played as a user plays a phone: the game served on the wire (`agent
sim serve`) behind a private real adb server, `agent calibrate` on it, then `agent play`,
each its own process. What `agent bench levels` runs for each game and player (and what
the integration tests run for one flow each)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.errors import AgentError
from agent.signals import Interrupted


@dataclass(frozen=True)
class WirePlay:
    """What came of one play: the game's own count, the agent's summary and its journal."""

    truth: dict[str, Any]
    summary: dict[str, Any]
    exit_code: int
    calibrate_s: float
    play_s: float
    stderr: str

    @property
    def journal(self) -> str:
        return str(self.summary.get("journal", ""))


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "agent.cli", *args]


def read_truth(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _wait_stoppable(proc: subprocess.Popen[str], stop: threading.Event | None, timeout_s: float) -> tuple[str, str]:
    """A child's output once it ends; SIGINT to it (its clean stop) when `stop` is set or
    the time is up."""
    t0 = time.monotonic()
    while True:
        try:
            return proc.communicate(timeout=0.5)
        except subprocess.TimeoutExpired:
            if (stop is not None and stop.is_set()) or time.monotonic() - t0 > timeout_s:
                proc.send_signal(signal.SIGINT)
                return proc.communicate(timeout=60)


def play_on_the_wire(
    phone_args: Sequence[str], play_args: Sequence[str], work: Path, *, timeout_s: float = 900.0,
    status: Callable[[str], None] = lambda _: None, done: Callable[[dict[str, Any]], bool] | None = None,
    before_play: Callable[[str, dict[str, str]], None] | None = None, stop: threading.Event | None = None,
) -> WirePlay:  # fmt: skip
    """Serve the game (`agent sim serve PHONE_ARGS --no-profile --truth`), calibrate on it,
    then `agent play --serial ... --json PLAY_ARGS`, and return what both sides counted.
    The play ends by itself (its --levels or --moves), or is stopped (Ctrl-C, its clean
    stop) once `done(truth)` says so or `timeout_s` has passed. `before_play(address, env)`
    runs between the two (a test presses Back there, say, as a pocket would). Setting `stop`
    (from another thread: a bench whose main thread took a stop signal) stops the calibration
    or the play as Ctrl-C would, and raises `Interrupted` once both processes have ended."""
    from agent.device.adb import AdbTarget, connect_tcp, ensure_server, stop_server
    from agent.simphone.launch import end_process, free_port, log_file, start_sim_phone

    work.mkdir(parents=True, exist_ok=True)
    target = AdbTarget(port=free_port())
    phone_port = free_port()
    address = f"127.0.0.1:{phone_port}"
    env = {**os.environ, "ANDROID_ADB_SERVER_PORT": str(target.port), "ADB_LOCAL_TRANSPORT_MAX_PORT": "5554"}
    env.setdefault("ADB_LIBUSB", "0")
    os.environ.update({k: env[k] for k in ("ADB_LOCAL_TRANSPORT_MAX_PORT", "ADB_LIBUSB")})
    truth_path, profiles, runs = work / "truth.json", work / "profiles", work / "runs"
    with ExitStack() as cleanup:
        log = cleanup.enter_context(log_file(work, "phone.log"))
        status(f"starting the game and a private adb server (port {target.port})")
        phone = start_sim_phone(phone_port, log, *phone_args, "--no-profile", "--truth", str(truth_path),
                                "--profiles", str(profiles),
                                adopt=lambda p: cleanup.callback(end_process, p))  # fmt: skip
        cleanup.callback(stop_server, target)
        ensure_server(target)
        connect_tcp(address, target)
        status(f"agent calibrate --serial {address}")
        t0 = time.monotonic()
        cal = subprocess.Popen(cli("calibrate", "--serial", address, "--profiles", str(profiles), "--yes", "--json"),
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        cleanup.callback(end_process, cal)
        cal_err = _wait_stoppable(cal, stop, 300.0)[1]
        calibrate_s = time.monotonic() - t0
        if stop is not None and stop.is_set():
            raise Interrupted()
        if cal.returncode != 0:
            raise AgentError(f"agent calibrate failed (exit {cal.returncode}): {cal_err.strip()[-600:]}",
                             hint=f"the phone's log and profiles are in {work}")  # fmt: skip
        if before_play is not None:
            before_play(address, env)
        t0 = time.monotonic()
        play = subprocess.Popen(cli("play", "--serial", address, "--profiles", str(profiles), "--runs", str(runs),
                                    "--json", *play_args),
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        cleanup.callback(end_process, play)  # (once it ended by itself: nothing to do)
        truth: dict[str, Any] = {}
        while play.poll() is None:
            time.sleep(0.5)
            truth = read_truth(truth_path) or truth
            status(f"agent play: level {truth.get('level', '?')}, {truth.get('levels_won', 0)} won, "
                   f"{truth.get('swipes_accepted', 0)} swipes taken, {time.monotonic() - t0:.0f} s")  # fmt: skip
            stopped = stop is not None and stop.is_set()
            if stopped or (done is not None and done(truth)) or time.monotonic() - t0 > timeout_s:
                play.send_signal(signal.SIGINT)  # the play stops at once, with its stop line
                break
        out, err = play.communicate(timeout=120)
        play_s = time.monotonic() - t0
        phone.send_signal(signal.SIGINT)  # the phone writes its final count as it stops
        try:
            phone.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
        truth = read_truth(truth_path) or truth
    if stop is not None and stop.is_set():
        raise Interrupted()
    try:
        summary = json.loads(out.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        raise AgentError(f"agent play printed no summary (exit {play.returncode}): {err.strip()[-600:]}",
                         hint=f"the journal and the phone's log are in {work}") from None  # fmt: skip
    return WirePlay(truth, summary, int(play.returncode), round(calibrate_s, 2), round(play_s, 1), err)
