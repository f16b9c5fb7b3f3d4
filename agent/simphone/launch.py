"""Starting simulated phones on the wire (`agent sim serve`) as child processes, and
ending them: each in its own process group, ended as a group, so none is left behind."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, cast

from agent import signals
from agent.errors import DeviceError

# How long a phone may take to stop after SIGTERM (it stops at once), and after a
# second signal to whoever started it (no waiting: SIGKILL).
STOP_GRACE_S = 10.0
HURRIED_GRACE_S = 1.0


_HANDED_OUT: set[int] = set()
_HANDED_OUT_LOCK = threading.Lock()


def free_port() -> int:
    """A loopback port free now that this process never handed out before. A port is
    free until whoever it was given to binds it: two games started at once (`agent bench
    levels --parallel 2`) were given one port, one's adb server and the other's phone,
    and the adb client spoke its host protocol to the phone (measured: world 0 never
    started, "bad magic" in its phone's log)."""
    with _HANDED_OUT_LOCK:
        for _ in range(100):
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = cast(int, s.getsockname()[1])  # (host, port) for AF_INET
            if port not in _HANDED_OUT:
                _HANDED_OUT.add(port)
                return port
    raise DeviceError("no free loopback port the system would give that was not given already",
                      hint="too many phones and adb servers started by this process; start fewer at once")  # fmt: skip


def start_sim_phone(
    port: int, log: IO[bytes], *args: str, timeout_s: float = 60.0,
    adopt: Callable[[subprocess.Popen[bytes]], object] | None = None,
) -> subprocess.Popen[bytes]:  # fmt: skip
    """`agent sim serve --port PORT ARGS...`, returned once it listens.

    `adopt` is handed the child the moment it exists, with stop signals held: whoever ends
    the phones then holds it before a Ctrl-C can land. A signal that lands while Popen
    waits for the child's exec leaves a child nobody holds (Popen drops it), and one that
    lands as this returns, a child its caller never stored: both were phones left running
    after a farm was stopped while its phones started."""
    # --stop-with-input: it stops when the pipe to its stdin closes, that is when this
    # process ends, even killed with no chance to end it.
    cmd = [sys.executable, "-m", "agent.cli", "sim", "serve", "--port", str(port), "--stop-with-input", *args]
    # Its errors as single lines (`error:`, click's `Error:`) and plain tracebacks, so
    # the reason it did not start can be quoted from its log.
    env = {**os.environ, "TYPER_USE_RICH": "0", "TYPER_STANDARD_TRACEBACK": "1", "NO_COLOR": "1"}
    with signals.deferred():
        # Its own session: a Ctrl-C at the terminal reaches whoever started it, who stops
        # its workers first and the phone last, not the phone under a worker's feet.
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)  # fmt: skip
        if adopt is not None:
            adopt(proc)
        try:
            with signals.allowed():  # waiting for it to listen stops at once on a signal
                wait_listening(proc, port, log, timeout_s)
        except BaseException:
            end_process(proc)
            raise
    return proc


def wait_listening(proc: subprocess.Popen[bytes], port: int, log: IO[bytes], timeout_s: float = 60.0) -> None:
    until = time.monotonic() + timeout_s
    where = f"see its log: {log.name}" if isinstance(getattr(log, "name", None), str) else ""
    while time.monotonic() < until:
        if proc.poll() is not None:
            log.flush()
            log.seek(0)
            reason, fix = start_failure(log.read().decode("utf-8", "replace"))
            raise DeviceError(
                f"the simulated phone for 127.0.0.1:{port} exited at start: {reason or f'exit status {proc.returncode}'}",
                hint="; ".join(h for h in (fix, where) if h) or None,
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise DeviceError(f"the simulated phone did not listen on 127.0.0.1:{port} within {timeout_s:g} s",
                      hint="; ".join(h for h in ("the machine may be overloaded: try fewer phones", where) if h))


_ERROR = re.compile(r"^\s*error:\s*(.+)$", re.IGNORECASE)
_FIX = re.compile(r"^\s*fix:\s*(.+)$", re.IGNORECASE)
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b:?\s*(.*)$")


def start_failure(said: str) -> tuple[str, str]:
    """(reason, fix) from what a phone that exited at start wrote: its `error:` line (ours,
    or a usage error's), else a traceback's last line, else its last line; one line each."""
    lines = [line.strip() for line in said.splitlines() if line.strip()]
    for i in range(len(lines) - 1, -1, -1):
        m = _ERROR.match(lines[i])
        if m:
            fix = next((f.group(1) for f in map(_FIX.match, lines[i + 1:]) if f), "")
            return _one_line(m.group(1)), _one_line(fix)
        if "─ Error ─" in lines[i]:  # typer's boxed usage error, should rich draw it after all
            inside = [line.strip("│ ") for line in lines[i + 1:] if line.startswith("│")]
            return _one_line(" ".join(inside)), ""
    for line in reversed(lines):
        if _EXCEPTION.match(line):
            return _one_line(line), ""
    return (_one_line(lines[-1]) if lines else ""), ""


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def end_process(proc: subprocess.Popen[Any]) -> None:
    end_processes([proc])


def end_processes(procs: Sequence[subprocess.Popen[Any]]) -> None:
    """Stop the phones (and anything they started: their process groups) together:
    SIGTERM to each, then SIGKILL to what is left after the grace, shorter once a second
    signal came to this process. A signal that comes meanwhile waits until they are gone."""
    with signals.deferred():
        live = [p for p in procs if p.poll() is None]
        for p in live:
            _signal_group(p, signal.SIGTERM)
        until = time.monotonic() + STOP_GRACE_S
        for p in live:
            while p.poll() is None and time.monotonic() < until:
                if signals.escalated():
                    until = min(until, time.monotonic() + HURRIED_GRACE_S)
                time.sleep(0.05)
        for p in live:
            if p.poll() is None:
                _signal_group(p, signal.SIGKILL)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    pass  # unkillable (stuck in the kernel): nothing more can be done
        for p in procs:
            if p.stdin is not None and not p.stdin.closed:
                p.stdin.close()


def _signal_group(proc: subprocess.Popen[Any], signum: int) -> None:
    """The process's group when it leads one (start_new_session), else the process."""
    try:
        if os.getpgid(proc.pid) == proc.pid:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
    except (ProcessLookupError, PermissionError):
        pass  # already gone


def log_file(directory: Path, name: str) -> IO[bytes]:
    directory.mkdir(parents=True, exist_ok=True)
    return open(directory / name, "w+b")  # a file, not a pipe: nobody has to drain it
