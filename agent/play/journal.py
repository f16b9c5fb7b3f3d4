"""Append-only JSONL journals: one line per event, flushed as the run goes, so a crash
or Ctrl-C loses nothing that already happened.

One schema for every game. Every line has `type`, `time` (wall clock, ISO 8601 with the
zone) and `mono` (monotonic seconds); the loop's lines add `t`, its clock (simulated time
on a simulated phone). The first line, `start`, holds the tool's version, the game, the
device, the profile and the options; then `decision`, `check`, `unreadable`, `moving`,
`rules` as the run goes, and `stop` last, with the summary.
"""

from __future__ import annotations

import datetime
import json
import os
import time
from pathlib import Path
from typing import Any, Callable

from agent.files import write_atomic


def new_run_dir(root: Path | str = "runs") -> Path:
    """runs/<timestamp>/, unique even when two runs start in the same second."""
    root = Path(root)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for i in range(1000):
        path = root / (stamp if i == 0 else f"{stamp}-{i}")
        try:
            path.mkdir(parents=True)
            return path
        except FileExistsError:
            continue
    raise RuntimeError(f"could not create a run folder under {root}")  # pragma: no cover


class Journal:
    """`tee`, when given, is handed every line as it is written (a farm on Ray sends
    them to its driver, which keeps the device's journal there too)."""

    def __init__(self, path: Path | str, tee: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.path = Path(path)
        self.tee = tee
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(self.path, "a", encoding="utf-8")

    def write(self, event: str, **fields: Any) -> None:
        stamp = datetime.datetime.now().astimezone().isoformat(timespec="milliseconds")
        line = {"type": event, "time": stamp, "mono": round(time.monotonic(), 4), **fields}
        self._f.write(json.dumps(line, separators=(",", ":")) + "\n")
        # One line is one event: flush it now so an interrupted run keeps it.
        self._f.flush()
        os.fsync(self._f.fileno())
        if self.tee is not None:
            self.tee(line)

    def close(self) -> None:
        if not self._f.closed:
            self._f.close()

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_TAIL_BYTES = 1 << 20  # longer than any one line


def end_unfinished(path: Path | str, reason: str, kind: str, **fields: Any) -> bool:
    """Give a journal whose writer died (killed, crashed) the stop line it never wrote, so
    its last run still ends with why: a torn last line is cut first. False (and nothing
    written) when the journal is missing, empty, or already ends with a stop line."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            start = max(0, size - _TAIL_BYTES)  # the last lines are enough: a journal may be long
            f.seek(start)
            tail = f.read()
    except FileNotFoundError:
        return False
    whole = tail[: tail.rfind(b"\n") + 1]  # a line cut short by the kill is no event
    if not whole.strip():
        return False
    try:
        last = json.loads([line for line in whole.splitlines() if line.strip()][-1])
    except ValueError:
        last = {}
    if isinstance(last, dict) and last.get("type") == "stop":
        return False
    if len(whole) < len(tail):
        with open(path, "r+b") as f:
            f.truncate(start + len(whole))
    with Journal(path) as journal:
        journal.write("stop", reason=reason, kind=kind, finished=False, **fields)
    return True


def _tail_lines(path: Path) -> list[bytes]:
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - _TAIL_BYTES))
        tail = f.read()
    return [line for line in tail.splitlines() if line.strip()]


def last_stop_frames(path: Path | str) -> list[str]:
    """The frame files named by the journal's last stop line (what the phone showed when
    the run failed); [] when there are none or no journal."""
    try:
        lines = _tail_lines(Path(path))
    except OSError:
        return []
    for line in reversed(lines):
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if isinstance(d, dict) and d.get("type") == "stop":
            frames = d.get("frames")
            return [str(f) for f in frames] if isinstance(frames, list) else []
    return []


def journal_name(serial: str) -> str:
    """A device's journal file name: its serial with anything a path cannot hold replaced."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in serial) + ".jsonl"


def read_journal(path: Path | str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_json_atomic(path: Path | str, data: Any) -> Path:
    return write_atomic(path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
