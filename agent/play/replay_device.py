"""A phone that shows a recorded run again: the `Device` (and `AppControl`) protocol
served from a recording's frames, so a recorded run can be played back through the play
loop itself.

The run is cut at its gestures: before the first gesture the phone shows the frame the
first move was decided on, and after each gesture (a move's swipe, its taps, a Back, a
launch) the frame the next one was made on, then, after the last, the run's last frame.
Captures in between all show the same frame, so a board reads as at rest at once; the
frames the run saw while the board moved are not served, as the loop did nothing on them.
The gestures of one move come with no capture between them (a two-tap move), so the phone
moves on at the first capture after them, once. When the frames run out, the next capture
raises `RecordingEnded`: the recording ended, and that is the end of the replay.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agent.device.base import check_point
from agent.errors import AgentError, DeviceError
from agent.play.recording import Recording

# Journal lines after which the phone shows something else: what the loop did to it.
_GESTURE_LINES = ("decision", "dismissed", "launch")


class RecordingEnded(DeviceError):
    """The replay device has shown every frame of its recording."""

    hint = "the run was played back to its last recorded frame: nothing more to show"


def journal_events(journal: Path) -> list[dict[str, Any]]:
    """The journal's events; a last line torn by a kill is left out, as the loop never
    finished writing it."""
    return read_events(journal)[0]


def read_events(journal: Path) -> tuple[list[dict[str, Any]], bool]:
    """The journal's events, and whether its last line was torn (left out)."""
    try:
        text = journal.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentError(f"cannot read the journal {journal}: {exc}", hint="give a journal `agent play` wrote") from None
    raw = [line for line in text.splitlines() if line.strip()]
    out: list[dict[str, Any]] = []
    for n, line in enumerate(raw, 1):
        try:
            event = json.loads(line)
        except ValueError:
            if n == len(raw):
                return out, True
            raise AgentError(f"line {n} of the journal {journal} is no JSON",
                             hint="give a journal `agent play` wrote") from None  # fmt: skip
        if not isinstance(event, dict):
            raise AgentError(f"line {n} of the journal {journal} is no event (a JSON object)",
                             hint="give a journal `agent play` wrote")  # fmt: skip
        out.append(event)
    return out, False


def gesture_lines(lines: Sequence[dict[str, Any]]) -> list[list[object]]:
    """The gestures a journal says the run made on the phone, as ReplayDevice.gestures
    holds them: a move's swipes and taps (pauses are the loop's, not the phone's), a
    dismissal's tap or Back, a launch."""
    out: list[list[object]] = []
    for line in lines:
        kind = line.get("type")
        if kind == "decision":
            out.extend(list(g) for g in line.get("gestures") or [] if isinstance(g, list) and g and g[0] != "pause")
        elif kind == "dismissed":
            point = line.get("point")
            out.append(["tap", *point] if line.get("kind") == "tap" and point else ["back"])
        elif kind == "launch":
            out.append(["launch", line.get("package")])
    return out


def served_foregrounds(lines: Sequence[dict[str, Any]]) -> list[str | None]:
    """The app the phone said was in front, per stretch of `served_frames` (a screen line
    keeps it); a stretch that did not ask keeps the answer before it (None: never asked)."""
    out: list[str | None] = []
    current: str | None = None
    named = False  # a frame has been named: the stretches are counted as served_frames does
    for line in lines:
        if isinstance(line.get("frame"), int) and not isinstance(line.get("frame"), bool):
            named = True
        if line.get("type") in ("screen", "front") and isinstance(line.get("foreground"), str):
            current = line["foreground"]
        if line.get("type") in _GESTURE_LINES and named:
            out.append(current)
        if line.get("type") == "launch" and isinstance(line.get("package"), str):
            current = line["package"]  # launched: the game is in front from the next stretch on
    if named:
        out.append(current)
    return out


def served_frames(lines: Sequence[dict[str, Any]]) -> list[int]:
    """The frame ids the phone shows, one per stretch between two gestures: the last
    frame a line of that stretch was read on (for a move, the frame it was decided on).
    A stretch with no frame kept shows the one before it again."""
    steps: list[int] = []
    current: int | None = None  # the last frame named so far: what the phone showed
    for line in lines:
        frame = line.get("frame")
        if isinstance(frame, int) and not isinstance(frame, bool):
            current = frame
        if line.get("type") in _GESTURE_LINES and current is not None:
            steps.append(current)
    if current is not None:
        steps.append(current)  # after the last gesture: the last frame the run read
    return steps


class ReplayDevice:
    """A recorded run's frames as a phone. `gestures` holds what was done to it, in the
    journal's form (["swipe", x1, y1, x2, y2, ms], ["tap", x, y], ["back"], ["launch", p])."""

    def __init__(self, recording: Recording, lines: Sequence[dict[str, Any]], serial: str | None = None) -> None:
        start = next((line for line in lines if line.get("type") == "start"), {})
        found = start.get("device")
        device: dict[str, Any] = found if isinstance(found, dict) else {}
        self.recording = recording
        self.steps = served_frames(lines)
        self._foregrounds = served_foregrounds(lines)
        if not self.steps:
            raise AgentError("the journal names no recorded frame: nothing to play back",
                             hint="record the run with `agent play --record`")  # fmt: skip
        missing = sorted({fid for fid in self.steps if fid not in recording.entries})
        if missing:
            raise AgentError(f"{len(missing)} of the frames the run acted on are not in its recording (first: "
                             f"frame {missing[0]}): only a whole recording plays back",
                             hint="record the run with `agent play --record`")  # fmt: skip
        self._serial = serial or f"replay-{device.get('serial', 'run')}"
        self._model = str(device.get("model", "replay"))
        self.gestures: list[list[object]] = []
        self.captures = 0
        self._step = 0
        self._moved = False  # a gesture came since the last capture
        self._frame: np.ndarray | None = None
        first = recording.frame(self.steps[0])
        self._size = (int(first.shape[1]), int(first.shape[0]))

    @classmethod
    def open(cls, journal: Path, serial: str | None = None) -> "ReplayDevice":
        return cls(Recording.open(journal), journal_events(journal), serial)

    # -- Device ---------------------------------------------------------------------------
    @property
    def serial(self) -> str:
        return self._serial

    @property
    def model(self) -> str:
        return self._model

    @property
    def step(self) -> int:
        """Which of `steps` the phone shows (or will show at the next capture)."""
        return self._step

    @property
    def ended(self) -> bool:
        return self._step + (1 if self._moved else 0) >= len(self.steps)

    def screen_size(self) -> tuple[int, int]:
        return self._size

    def screencap(self) -> np.ndarray:
        if self._moved:
            self._step, self._moved, self._frame = self._step + 1, False, None
        if self._step >= len(self.steps):
            raise RecordingEnded(f"the recording ended: all {len(self.steps)} frames it holds were shown")
        if self._frame is None:
            # One array per frame shown: repeated captures are the same screen, at no cost.
            self._frame = self.recording.frame(self.steps[self._step])
        self.captures += 1
        return self._frame

    def _gesture(self, gesture: list[object]) -> None:
        self.gestures.append(gesture)
        self._moved = True

    def tap(self, x: int, y: int) -> None:
        check_point(self._size, x, y)
        self._gesture(["tap", int(x), int(y)])

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 200) -> None:
        check_point(self._size, x1, y1)
        check_point(self._size, x2, y2)
        self._gesture(["swipe", int(x1), int(y1), int(x2), int(y2), int(duration_ms)])

    # -- AppControl -------------------------------------------------------------------------
    def back(self) -> None:
        self._gesture(["back"])

    def foreground(self) -> str | None:
        """What the phone said then (None where the recording does not say)."""
        step = min(self._step + (1 if self._moved else 0), len(self._foregrounds) - 1)
        return self._foregrounds[step] if step >= 0 else None

    def launch(self, package: str) -> None:
        self._gesture(["launch", package])
