"""Cause 1: SIGTERM and SIGHUP stop every long-running command as cleanly as Ctrl-C, and
a second signal hurries the stop without losing what was written.

A clean stop: exit 130 (SIGINT), 143 (SIGTERM) or 129 (SIGHUP) with no traceback, every
journal ends with a stop line, summary.json parses and says so, and nothing the command
started (a farm's workers, its simulated phones) is left running. Each signal is sent to
the main process only (as `timeout`, systemd or docker do) and to the whole process
group (as a terminal's Ctrl-C does). Cause 9, in part: a farm whose simulated phone does
not start says why in one line, and where the phone's log is.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from redteam import (
    Result,
    agent,
    assert_handled,
    assert_intact,
    journals,
    listening,
    signal_and_wait,
    start_agent,
    wait_for,
)

SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGHUP": signal.SIGHUP}
TARGETS = {"group": True, "pid": False}  # the whole process group, or the main process only


def code_for(signum: int) -> int:
    return 128 + signum


# -- what the tests look at (psutil-free: /proc) ------------------------------------------
def handlers_installed(pid: int) -> bool:
    """The process catches SIGTERM and SIGHUP: the CLI's handlers are in place, so the
    signal tests the command and not the interpreter's start-up."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
    return all(caught & (1 << (s - 1)) for s in (signal.SIGTERM, signal.SIGHUP))


def processes_mentioning(text: str) -> list[str]:
    """Live processes whose command line mentions `text` (a test's own tmp folder)."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            state = next(line for line in (d / "status").read_text().splitlines() if line.startswith("State:"))
        except (OSError, StopIteration):
            continue
        if text in cmd and "Z" not in state.split()[1]:
            found.append(f"{d.name}: {cmd[:200]}")
    return found


def decisions(root: Path) -> int:
    return sum(p.read_text().count('"type":"decision"') for p in journals(root))


def run_dirs(root: Path) -> list[Path]:
    return [p for p in root.glob("*") if p.is_dir()] if root.exists() else []


def no_traceback_in_logs(root: Path) -> None:
    for log in sorted(root.rglob("*.log")):
        text = log.read_text(errors="replace")
        assert "Traceback" not in text and "BrokenPipeError" not in text, f"{log}:\n{text[-2000:]}"


def summary_of(root: Path) -> dict:
    (path,) = sorted(root.rglob("summary.json"))
    return json.loads(path.read_text())


def stop_and_wait(proc: subprocess.Popen[str], signums: tuple[int, ...], args: tuple[str, ...], to_group: bool,
                  between: Callable[[], bool] | None = None) -> Result:  # fmt: skip
    """Send the signals in turn (after each, waiting for `between` to hold) and wait for the end."""
    for signum in signums[:-1]:
        os.killpg(proc.pid, signum) if to_group else proc.send_signal(signum)
        if between is not None:
            assert wait_for(between, 60), "the first signal was not taken up"
    return signal_and_wait(proc, signums[-1], args, timeout=90, to_group=to_group)


# -- agent play ---------------------------------------------------------------------------
PLAY = ("play", "--sim", "--realtime", "--moves", "500")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("sig", SIGNALS)
def test_play_stops_cleanly_on_a_signal(tmp_path, sig, target):
    signum = SIGNALS[sig]
    args = (*PLAY, "--runs", "runs", "--profiles", "prof")
    proc = start_agent(*args, cwd=tmp_path)
    try:
        assert wait_for(lambda: decisions(tmp_path / "runs") >= 1, 90), "play never made a move"
        r = signal_and_wait(proc, signum, args, to_group=TARGETS[target])
    finally:
        if proc.poll() is None:
            proc.kill()
    assert_handled(r, code_for(signum))
    (stop,) = assert_intact(tmp_path / "runs", 1, stop_kind="interrupted")
    assert stop["signal"] == sig and stop["summary"]["signal"] == sig
    summary = summary_of(tmp_path / "runs")
    assert summary["stop_kind"] == "interrupted" and summary["signal"] == sig


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_play_stopped_during_start_up_exits_cleanly(tmp_path, sig):
    """The signal comes as soon as the command can take it: before or while the journal
    opens. No traceback, and a journal, if one was begun, is whole with its summary."""
    signum = SIGNALS[sig]
    args = (*PLAY, "--runs", "runs", "--profiles", "prof")
    proc = start_agent(*args, cwd=tmp_path)
    try:
        assert wait_for(lambda: handlers_installed(proc.pid), 60), "the command never took its signal handlers"
        r = signal_and_wait(proc, signum, args)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert_handled(r, code_for(signum))
    if journals(tmp_path / "runs"):
        assert_intact(tmp_path / "runs", 1)


# -- agent farm ---------------------------------------------------------------------------
@pytest.fixture
def adb_env(private_adb_port) -> dict[str, str]:
    _, port = private_adb_port
    return {"ANDROID_ADB_SERVER_PORT": str(port), "ADB_LOCAL_TRANSPORT_MAX_PORT": "5554", "ADB_LIBUSB": "0"}


def farm_args(tmp_path: Path, n: int = 2) -> tuple[str, ...]:
    return ("farm", "--sim", str(n), "--moves", "400", "--json", "--runs", str(tmp_path / "runs"),
            "--profiles", str(tmp_path / "profiles"))  # fmt: skip


def assert_farm_stopped_cleanly(r: Result, tmp_path: Path, signum: int | tuple[int, ...], devices: int) -> dict:
    """Stopped by `signum` (or by one of them: the kernel delivers signals sent at the
    same instant in its own order)."""
    signums = signum if isinstance(signum, tuple) else (signum,)
    assert_handled(r, tuple(code_for(s) for s in signums))
    assert_intact(tmp_path / "runs", devices)
    summary = summary_of(tmp_path / "runs")
    assert summary["interrupted"] is True and summary["signal"] == signal.Signals(r.code - 128).name, summary
    assert json.loads(r.out)["interrupted"] is True  # --json printed the same summary
    left = processes_mentioning(str(tmp_path))
    assert not left, "left running:\n" + "\n".join(left)
    for d in summary["devices"]:
        assert not listening(int(d["serial"].rsplit(":", 1)[1])), f"{d['serial']} still listens"
    no_traceback_in_logs(tmp_path / "runs")
    return summary


def start_farm(tmp_path: Path, env: dict[str, str], n: int = 2) -> tuple[subprocess.Popen[str], tuple[str, ...]]:
    args = farm_args(tmp_path, n)
    proc = start_agent(*args, cwd=tmp_path, env=env)
    if not wait_for(lambda: len(journals(tmp_path / "runs")) >= n and decisions(tmp_path / "runs") >= n, 180):
        proc.kill()
        pytest.fail(f"the farm never got going: {proc.communicate()[1][-2000:]}")
    return proc, args


@pytest.mark.integration
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("sig", SIGNALS)
def test_farm_stops_cleanly_on_a_signal(tmp_path, adb_env, sig, target):
    signum = SIGNALS[sig]
    proc, args = start_farm(tmp_path, adb_env)
    try:
        r = signal_and_wait(proc, signum, args, timeout=90, to_group=TARGETS[target])
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    summary = assert_farm_stopped_cleanly(r, tmp_path, signum, devices=2)
    assert any(e["event"] == "interrupted" and e["signal"] == sig for e in summary["events"])


def a_stop_line(tmp_path: Path):
    def seen() -> bool:
        return any('"type":"stop"' in p.read_text() for p in journals(tmp_path / "runs"))

    return seen


@pytest.mark.integration
@pytest.mark.parametrize(
    "first,second,target,when",
    [
        ("SIGINT", "SIGTERM", "pid", "at once"),
        ("SIGINT", "SIGHUP", "group", "at once"),
        ("SIGINT", "SIGINT", "group", "once a worker stopped"),
        ("SIGINT", "SIGTERM", "pid", "once a worker stopped"),
        ("SIGTERM", "SIGTERM", "pid", "once a worker stopped"),
    ],
    ids=["ctrl-c then SIGTERM at once", "ctrl-c then SIGHUP to the group at once", "ctrl-c twice to the group",
         "ctrl-c then SIGTERM", "SIGTERM twice"],
)
def test_a_second_signal_hurries_the_stop_and_keeps_everything(tmp_path, adb_env, first, second, target, when):
    """The second signal comes while the farm waits for its workers (at once: two of the
    same at once are one signal, so these differ, and either may come first), or while
    it ends the rest and its phones (once a worker wrote its stop line): it stops
    waiting, ends what is left, and still writes summary.json and every stop line. The
    exit status is the first signal's."""
    proc, args = start_farm(tmp_path, adb_env)
    between = a_stop_line(tmp_path) if when != "at once" else None
    try:
        r = stop_and_wait(proc, (SIGNALS[first], SIGNALS[second]), args, TARGETS[target], between=between)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    taken = (SIGNALS[first], SIGNALS[second]) if when == "at once" else SIGNALS[first]
    summary = assert_farm_stopped_cleanly(r, tmp_path, taken, devices=2)
    if when == "at once" and target == "pid":  # only the farm can end its workers, and it did
        assert any(e["event"] == "ending_workers" for e in summary["events"]), summary["events"]


@pytest.mark.integration
def test_workers_stop_cleanly_when_the_farm_is_killed(tmp_path, adb_env):
    """SIGKILL leaves the farm no chance: its workers (their stdin ends) and its phones
    (likewise) stop on their own, every journal still ends with a stop line, and no
    worker prints a BrokenPipeError."""
    proc, args = start_farm(tmp_path, adb_env)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    gone = wait_for(lambda: not processes_mentioning(str(tmp_path)), 60)
    left = processes_mentioning(str(tmp_path))
    for line in left:  # ours, by pid: the test must not leave them either
        os.kill(int(line.split(":", 1)[0]), signal.SIGKILL)
    assert gone, "left running after the farm was killed:\n" + "\n".join(left)
    for path in journals(tmp_path / "runs"):
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        assert records[-1]["type"] == "stop", f"{path}: {records[-1]}"
    no_traceback_in_logs(tmp_path / "runs")


@pytest.mark.integration
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_farm_stopped_while_its_phones_start(tmp_path, adb_env, sig):
    """A signal as soon as the run folder exists (the phones are starting): no phone is
    left behind, and summary.json says the farm was interrupted."""
    signum = SIGNALS[sig]
    args = farm_args(tmp_path, 2)
    proc = start_agent(*args, cwd=tmp_path, env=adb_env)
    try:
        assert wait_for(lambda: bool(run_dirs(tmp_path / "runs")), 90), "no run folder"
        r = signal_and_wait(proc, signum, args, timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert_handled(r, code_for(signum))
    summary = summary_of(tmp_path / "runs")
    assert summary["interrupted"] is True and summary["signal"] == sig
    if journals(tmp_path / "runs"):
        assert_intact(tmp_path / "runs", 1)
    left = processes_mentioning(str(tmp_path))
    assert not left, "left running:\n" + "\n".join(left)


@pytest.mark.integration
def test_a_phone_that_does_not_start_is_named_with_its_reason_and_log(tmp_path, adb_env):
    """Phone 1 would get seed 2**62 + 1, which `agent sim serve` refuses: the farm refuses
    the seed itself, as a usage error, before any phone starts; were it to start them, it
    would say so in one line, never with a fragment of the child's output."""
    r = agent("farm", "--sim", "2", "--seed", str(2**62), "--moves", "2", "--runs", "runs", "--profiles", "prof",
              cwd=tmp_path, env=adb_env, timeout=120)  # fmt: skip
    assert_handled(r, (2, 3), says="--seed")
    if r.code == 3:
        assert "╭" not in r.err and "Usage:" not in r.err.split("error:", 1)[-1], r.describe()
        error = next(line for line in r.err.splitlines() if line.startswith("error:"))
        fix = next(line for line in r.err.splitlines() if line.startswith("fix:"))
        assert "simulated phone" in error and "exited at start" in error
        log = Path(fix.rsplit("see its log: ", 1)[1].strip())
        assert (tmp_path / log).is_file() or log.is_file(), fix
    assert not processes_mentioning(str(tmp_path))


def test_a_phone_child_that_fails_says_one_line(tmp_path):
    """The launcher's own report of a child that exits at start: its `error:` line, the
    child's fix, and the log's path."""
    from agent.errors import DeviceError
    from agent.simphone.launch import free_port, log_file, start_sim_phone

    port = free_port()
    with log_file(tmp_path, "phone.log") as log:
        with pytest.raises(DeviceError) as info:
            start_sim_phone(port, log, "--profiles", str(tmp_path / "p"), "--size", "12x34x56")
    message, hint = str(info.value), info.value.hint
    assert "\n" not in message and "--size" in message and "exited at start" in message, message
    assert f"see its log: {tmp_path / 'phone.log'}" in hint


@pytest.mark.parametrize("adopted", [True, False], ids=["adopted", "on-its-own"])
def test_a_signal_while_a_phone_process_is_being_created_leaves_no_phone(tmp_path, monkeypatch, adopted):
    """A stop signal that lands while Popen waits for the phone's exec (Popen then drops
    the child it made) or just as the phone is handed back: the phone is ended all the
    same, by whoever adopted it or by the launcher."""
    from agent import signals
    from agent.simphone import launch

    real_popen = subprocess.Popen

    def popen_then_signalled(*args, **kwargs):
        proc = real_popen(*args, **kwargs)
        made.append(proc)
        os.kill(os.getpid(), signal.SIGINT)  # handled at the next instruction, still in here
        for _ in range(100):
            pass
        return proc

    made: list[subprocess.Popen[bytes]] = []
    adopted_by: list[subprocess.Popen[bytes]] = []
    monkeypatch.setattr(launch.subprocess, "Popen", popen_then_signalled)
    with launch.log_file(tmp_path, "phone.log") as log, signals.stop_on_signals():
        with pytest.raises(KeyboardInterrupt):
            launch.start_sim_phone(launch.free_port(), log, "--profiles", str(tmp_path / "p"),
                                   adopt=adopted_by.append if adopted else None)  # fmt: skip
    assert len(made) == 1
    assert adopted_by == (made if adopted else [])
    assert made[0].poll() is not None, "the phone process was left running"
    assert not processes_mentioning(str(tmp_path))


@pytest.mark.parametrize(
    "said, reason, fix",
    [
        ("serving...\nerror: cannot serve the phone on 127.0.0.1:5: Address already in use\nfix: pick another port\n",
         "cannot serve the phone on 127.0.0.1:5: Address already in use", "pick another port"),
        ("Usage: python -m agent.cli sim serve [OPTIONS]\nTry 'python -m agent.cli sim serve --help' for help.\n\n"
         "Error: Invalid value for '--seed': 5 is not in the range 0<=x<=4.\n",
         "Invalid value for '--seed': 5 is not in the range 0<=x<=4.", ""),
        ("Usage: agent sim serve [OPTIONS]\n╭─ Error ──────────╮\n│ Invalid value for '--seed': Input should  │\n"
         "│ be less than 4                          │\n╰──────────────────╯\n",
         "Invalid value for '--seed': Input should be less than 4", ""),
        ('Traceback (most recent call last):\n  File "x.py", line 1, in <module>\nValueError: no such size\n',
         "ValueError: no such size", ""),
        ("", "", ""),
    ],
    ids=["agent error", "usage error", "boxed usage error", "traceback", "nothing"],
)
def test_why_a_phone_did_not_start_is_one_line(said, reason, fix):
    from agent.simphone.launch import start_failure

    assert start_failure(said) == (reason, fix)


# -- agent sim serve ----------------------------------------------------------------------
@pytest.mark.parametrize("sig", SIGNALS)
def test_sim_serve_stops_cleanly_and_exits_0(tmp_path, sig):
    """Being told to stop is how serving ends: exit 0, it says which signal, the port is free."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = ("sim", "serve", "--port", str(port), "--profiles", "prof")
    proc = start_agent(*args, cwd=tmp_path)
    try:
        assert wait_for(lambda: listening(port), 60), "the phone never listened"
        r = signal_and_wait(proc, SIGNALS[sig], args)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert_handled(r, 0)
    assert f"stopped ({sig})" in r.out
    assert not listening(port)


# -- benches ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "bench", [("bench", "lines", "--games", "100000"), ("bench", "play", "--games", "100000", "--solvers", "greedy")],
    ids=["lines", "play"],
)
def test_bench_stops_on_sigterm(tmp_path, bench):
    proc = start_agent(*bench, cwd=tmp_path)
    try:
        assert wait_for(lambda: handlers_installed(proc.pid), 60), "the command never took its signal handlers"
        r = signal_and_wait(proc, signal.SIGTERM, bench)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert_handled(r, 143)


@pytest.mark.integration
def test_bench_capture_ends_its_phone_on_sigterm(tmp_path, adb_env):
    """bench capture starts a phone and a private adb server of its own: SIGTERM ends both."""
    args = ("bench", "capture", "--frames", "100000")
    phone = f"{tmp_path}/puzzle-agent-bench-"
    sigterm_ends_everything(tmp_path, args, adb_env, "no phone", 90, lambda: bool(processes_mentioning(phone)))


def sigterm_ends_everything(tmp_path: Path, args: tuple[str, ...], adb_env: dict[str, str], what: str,
                            within_s: float, ready: Callable[[], bool]) -> None:  # fmt: skip
    """Start `agent ARGS`; once `ready()`, SIGTERM to its process alone: it exits 143, and
    nothing it started (nothing whose command line names the test's folder) is left."""
    proc = start_agent(*args, cwd=tmp_path, env={**adb_env, "TMPDIR": str(tmp_path)})
    try:
        assert wait_for(lambda: handlers_installed(proc.pid), 60), "the command never took its signal handlers"
        assert wait_for(ready, within_s), what
        r = signal_and_wait(proc, signal.SIGTERM, args, timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert_handled(r, 143)
    left = processes_mentioning(str(tmp_path))
    assert not left, "left running:\n" + "\n".join(left)


@pytest.mark.integration
@pytest.mark.parametrize("phase", ["calibrate", "play"])
def test_bench_levels_playing_games_in_parallel_stops_on_sigterm_to_itself_alone(tmp_path, adb_env, phase):
    """The games are played by threads, each with its phone, adb server, calibration and
    play: SIGTERM to the bench's own process (not its group) ends all of them, soon."""
    from agent.games.match3.saga.family import world_of

    keep = tmp_path / "keep"
    world = next(n for n in range(40) if world_of(n).size[0] <= 720)  # a small screen: a quick calibration
    args = ("bench", "levels", "--games", "2", "--first-world", str(world), "--no-greedy", "--parallel", "2",
            "--latency-ms", "0", "--keep", str(keep))  # fmt: skip
    busy = f"agent.cli {phase} --serial"
    ready = lambda: any(busy in p for p in processes_mentioning(str(keep)))  # noqa: E731
    sigterm_ends_everything(tmp_path, args, adb_env, f"no {phase} began", 240, ready)
