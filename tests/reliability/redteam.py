"""What every red-team case shares: run the real `agent` command in its own process (as
a user would, so a traceback, a wrong exit code or a killed process shows as it would to
them), and check that what it wrote survived.

A case is *handled* when the command exits with a code that fits, prints no traceback,
says what went wrong (`error:` and a `fix:`, or typer's usage error), and every journal
and summary it wrote is whole.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# What a hostile input must never produce.
CRASH_MARKS = ("Traceback", "Segmentation fault", "core dumped")


@dataclass
class Result:
    args: tuple[str, ...]
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err

    def describe(self) -> str:
        return f"agent {' '.join(self.args)} -> exit {self.code}\n--- stdout\n{self.out[-3000:]}\n--- stderr\n{self.err[-3000:]}"


def agent_env(extra: dict[str, str] | None = None, cwd: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("ANDROID_SERIAL", None)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("COLUMNS", "120")
    env["NO_COLOR"] = "1"
    env["TERM"] = "dumb"
    if cwd is not None:
        env.setdefault("PUZZLE_AGENT_PROFILES", str(cwd / "device_profiles"))
    env.update(extra or {})
    return env


def agent_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "agent.cli", *args]


def agent(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 180,
          stdin: str | None = None) -> Result:  # fmt: skip
    """Run `agent ARGS` to its end."""
    p = subprocess.run(agent_cmd(*args), cwd=cwd, env=agent_env(env, cwd), capture_output=True, text=True,
                       timeout=timeout, input=stdin, errors="replace")  # fmt: skip
    return Result(tuple(args), p.returncode, p.stdout, p.stderr)


def start_agent(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Start `agent ARGS` in its own process group (as a shell job is), to be signalled."""
    return subprocess.Popen(agent_cmd(*args), cwd=cwd, env=agent_env(env, cwd), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True)  # fmt: skip


def signal_and_wait(proc: subprocess.Popen[str], signum: int, args: tuple[str, ...], timeout: float = 60,
                    to_group: bool = False) -> Result:  # fmt: skip
    """Send `signum` (to the process, or to its whole group as a terminal does) and wait."""
    if to_group:
        os.killpg(proc.pid, signum)
    else:
        proc.send_signal(signum)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return Result(args, -9, out, err + f"\n[harness] still running {timeout}s after signal {signum}: killed")
    return Result(args, proc.returncode, out, err)


def wait_for(predicate, timeout: float = 60, every: float = 0.1) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(every)
    return False


def assert_handled(r: Result, codes: tuple[int, ...] | int, says: str | tuple[str, ...] = ()) -> None:
    """Exit code in `codes`, no traceback, and for a failure a message naming the problem
    (each of `says`, case-insensitive) with a fix or typer's usage line."""
    codes = (codes,) if isinstance(codes, int) else codes
    assert r.code in codes, f"exit {r.code}, expected {codes}\n{r.describe()}"
    for mark in CRASH_MARKS:
        assert mark not in r.text, f"traceback-like output {mark!r}\n{r.describe()}"
    if r.code not in (0, 130, 143, 129):
        assert "error:" in r.err.lower() or "usage:" in r.err.lower(), f"no error message\n{r.describe()}"
        if r.code != 2:
            assert "fix:" in r.err.lower(), f"no fix given\n{r.describe()}"
    for word in (says,) if isinstance(says, str) else says:
        if word:
            said = word.lower() in r.text.lower() or _unwrapped(word) in _unwrapped(r.text)
            assert said, f"message does not say {word!r}\n{r.describe()}"


_LAYOUT = re.compile(r"[\s│╭╮╰╯─]+")


def _unwrapped(text: str) -> str:
    """The text without its layout: a long path that typer's error box wrapped across
    lines still counts as said."""
    return _LAYOUT.sub("", text.lower())


def journals(run_root: Path) -> list[Path]:
    return sorted(run_root.rglob("*.jsonl"))


def assert_intact(run_root: Path, want_journals: int = 1, stop_kind: str | None = None) -> list[dict]:
    """Every journal under `run_root` parses line by line and ends with a stop line, and
    every summary.json parses. Returns the stop lines."""
    found = journals(run_root)
    assert len(found) >= want_journals, f"{len(found)} journals under {run_root}, expected {want_journals}"
    stops = []
    for path in found:
        lines = path.read_text().splitlines()
        records = [json.loads(line) for line in lines if line.strip()]  # a torn line fails here
        assert records and records[0].get("type") == "start", f"{path}: no start line"
        assert records[-1].get("type") == "stop", f"{path}: ends with {records[-1].get('type')!r}, not a stop line"
        if stop_kind is not None:
            assert records[-1].get("kind") == stop_kind, f"{path}: stop {records[-1]}"
        stops.append(records[-1])
    summaries = sorted(run_root.rglob("summary.json"))
    assert summaries, f"no summary.json under {run_root}"
    for s in summaries:
        json.loads(s.read_text())
    return stops


def listening(port: int) -> bool:
    """Something listens on 127.0.0.1:port (read from /proc/net/tcp, state 0A)."""
    want = f"0100007F:{port:04X}"
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == want and fields[3] == "0A":
            return True
    return False
