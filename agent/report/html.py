"""`agent report`: one self-contained HTML page of a run folder, for a person to read.

A run folder (`runs/<ts>/`) holds one journal per device (`<serial>.jsonl`), the frames
when the run was recorded (`<serial>.frames/`), and for a farm a `summary.json` with a
row per device. The page shows, per device, the run's header (the journal's `start`
line), a timeline of the moves coloured by the check's verdict, each move with its
pictures (the frame read before the swipe with the grid and the swipe drawn, the frame
read after it with the cells that differ from the prediction boxed), the boards as text
with the same cells marked, the stop with the frames that explain it, and charts of the
times per move. Everything is inside the one file: pictures as JPEG data URIs (a few
hundred pixels wide, so a 200-move run stays a few MB), charts as SVG, no script from
anywhere else.

Pictures are made on a pool of threads (decoding, scaling and encoding JPEG let go of
the interpreter), each with its own reader of the recording.
"""

from __future__ import annotations

import base64
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from agent.errors import AgentError, UsageError
from agent.files import inside_folder
from agent.games.base import OK_VERDICTS
from agent.play.annotate import differences
from agent.report.charts import Series, line_chart, summary_of

PICTURE_WIDTH = 360  # pixels: enough to see the tiles and the swipe, small enough for 200 moves
JPEG_QUALITY = 60  # 200 moves of two pictures: about 14 MB
NOTE_PICTURES = 2  # pictures of the frames of other lines (unreadable, no move) per move, at most
NO_FRAMES = "no frames recorded: run with --record"
REPORT_NAME = "report.html"
# Lines about a frame read at rest that are no move of their own, shown with their frame.
_PICTURED_NOTES = ("unreadable", "no_move")
# Lines shown only as a count per move: there are many, and each says only "still moving".
_COUNTED = ("moving",)
_LEFT_OUT = ("type", "time", "mono", "board", "frame")  # a note's fields not listed as text
CHARTS = (
    ("capture_ms", "capture time", "ms", "#2f6fb3"),
    ("settle_s", "settle wait", "s", "#8a5cc2"),
    ("decide_ms", "decision time", "ms", "#c27a1f"),
    ("cycle_s", "move cycle", "s", "#2e8b57"),
)

Progress = Callable[[int, int], None]


# -- what the page shows -------------------------------------------------------------


@dataclass
class Picture:
    """A frame to show: where it is in the recording (or on disk), how to draw it, and
    once made, the data URI."""

    frame: int | None  # the recording's frame id
    path: Path | None = None  # a frame file of its own (evidence without a recording)
    bbox: tuple[int, int, int, int] | None = None
    board: str | None = None
    gestures: list[Any] | None = None
    verdict: str | None = None
    expected: str | None = None
    title: str = ""
    uri: str | None = None
    problem: str | None = None  # why it could not be made


@dataclass
class Cell:
    text: str
    differs: bool = False


@dataclass
class Grid:
    """A board's text as rows of cells (None: text that is no grid, shown as it is)."""

    text: str
    rows: list[list[Cell]] | None


@dataclass
class Note:
    kind: str
    line: dict[str, Any]
    picture: Picture | None = None

    @property
    def text(self) -> str:
        return _note_text(self.line)


@dataclass
class Move:
    index: int
    anchor: str
    decision: dict[str, Any]
    check: dict[str, Any] | None = None
    notes: list[Note] = field(default_factory=list)
    moving: int = 0  # lines that saw the board still moving, after this move
    before: Picture | None = None
    after: Picture | None = None

    @property
    def verdict(self) -> str:
        return str(self.check.get("verdict", "unchecked")) if self.check else "unchecked"

    @property
    def ok(self) -> bool:
        return self.verdict in OK_VERDICTS

    @property
    def css(self) -> str:
        return verdict_class(self.verdict)

    @property
    def move_text(self) -> str:
        return str(self.decision.get("move", "?"))

    @property
    def expected(self) -> str | None:
        e = self.check.get("expected") if self.check else None
        return e if isinstance(e, str) else None

    @property
    def differing(self) -> int:
        """Cells where the board after the move differs from the prediction."""
        after = self.check.get("board") if self.check else None
        return len(differences(after if isinstance(after, str) else None, self.expected))

    def grids(self) -> list[tuple[str, Grid]]:
        """The boards as text: read before, predicted, read after (the last two marked
        where they differ)."""
        out = [("board read", grid(_text(self.decision.get("board")), None))]
        after = _text(self.check.get("board")) if self.check else None
        if self.expected is not None:
            out.append(("predicted", grid(self.expected, after)))
        if after is not None:
            out.append(("read after the move", grid(after, self.expected)))
        return out

    def timings(self) -> list[tuple[str, str]]:
        out = []
        for key, title, unit, _ in CHARTS:
            v = self.decision.get(key)
            if isinstance(v, (int, float)):
                out.append((title, f"{v:g} {unit}"))
        return out


@dataclass
class Session:
    """One start line to its stop: a farm's worker may start a device's run again."""

    anchor: str
    start: dict[str, Any]
    moves: list[Move] = field(default_factory=list)
    preface: list[Note] = field(default_factory=list)  # lines before the first move
    stop: dict[str, Any] | None = None
    evidence: list[Picture] = field(default_factory=list)
    charts: list[tuple[str, str, dict[str, float] | None]] = field(default_factory=list)  # title, svg, figures
    numbers: set[int] = field(default_factory=set)  # the moves' numbers so far
    levels: dict[int, dict[str, Any]] = field(default_factory=dict)  # a game of levels: its "level" lines by index

    def header(self) -> list[tuple[str, str]]:
        s = self.start
        rows = [("started", str(s.get("time", "-"))), ("version", str(s.get("version", "-"))),
                ("game", str(s.get("game", "-")))]  # fmt: skip
        for key in ("device", "profile", "options"):
            value = s.get(key)
            if value is not None:
                rows.append((key, flat(value)))
        return rows

    def verdicts(self) -> list[tuple[str, int, str]]:
        counts: dict[str, int] = {}
        for m in self.moves:
            counts[m.verdict] = counts.get(m.verdict, 0) + 1
        return [(v, n, verdict_class(v)) for v, n in sorted(counts.items())]

    def stop_rows(self) -> list[tuple[str, str]]:
        if self.stop is None:
            return [("stop", "no stop line: the run was cut short (killed, or still running)")]
        return [(k, flat(self.stop[k])) for k in ("reason", "kind", "finished", "signal", "recording")
                if k in self.stop]  # fmt: skip

    def level_table(self) -> list[list[str]]:
        """One row per level attempt (its last line: an outcome the next level told comes later)."""
        rows = []
        for _, r in sorted(self.levels.items()):
            goal = r.get("goal")
            goal_text = "-"
            if isinstance(goal, dict):
                goal_text = f"{goal.get('kind', '?')} {goal.get('target') if goal.get('target') is not None else '?'}"
                goal_text += f" {goal['colour']}" if goal.get("colour") else ""
            won = r.get("won")
            rows.append([flat(r.get("index")), "?" if r.get("level") is None else flat(r.get("level")), goal_text,
                         flat(r.get("moves")), "won" if won is True else "lost" if won is False else "?",
                         "-" if r.get("score") is None else flat(r.get("score")), flat(r.get("retries", 0)),
                         flat(r.get("how") or "-")])  # fmt: skip
        return rows

    def stop_summary(self) -> list[tuple[str, str]]:
        """The run's summary as the stop line has it, less what the stop rows say."""
        summary = (self.stop or {}).get("summary")
        if not isinstance(summary, dict):
            return []
        return [(k.replace("_", " "), flat(v)) for k, v in summary.items()
                if k not in ("stop_reason", "stop_kind", "finished", "signal", "first_board", "levels")
                and v not in ({}, [])]  # fmt: skip


@dataclass
class DeviceReport:
    anchor: str
    journal: Path
    serial: str
    model: str
    sessions: list[Session]
    frames_note: str | None  # why there are no pictures of the moves, when there are none
    farm_row: dict[str, Any] | None = None
    torn: bool = False  # the journal's last line was cut short
    damaged: list[str] = field(default_factory=list)  # the recording's index lines skipped, each with why

    @property
    def moves(self) -> int:
        return sum(len(s.moves) for s in self.sessions)


@dataclass
class RunReport:
    run_dir: Path
    devices: list[DeviceReport]
    farm: dict[str, Any] | None  # the farm's summary.json
    notes: list[str]
    made: str  # when the report was made

    @property
    def title(self) -> str:
        what = "farm" if self.farm is not None else "play"
        return f"agent {what} run {self.run_dir.name}"

    def farm_columns(self) -> list[str]:
        cols: list[str] = []
        for row in (self.farm or {}).get("devices", []):
            if isinstance(row, dict):
                cols += [k for k in row if k not in cols]
        return cols

    def farm_rows(self) -> list[tuple[str | None, list[str]]]:
        """Per device row of the summary: the anchor of its section (None: no journal) and
        its cells."""
        cols = self.farm_columns()
        by_serial = {d.serial: d.anchor for d in self.devices}
        out = []
        for row in (self.farm or {}).get("devices", []):
            if isinstance(row, dict):
                out.append((by_serial.get(str(row.get("serial"))), [flat(row.get(c, "")) for c in cols]))
        return out

    def farm_facts(self) -> list[tuple[str, str]]:
        f = self.farm or {}
        rows: list[tuple[str, str]] = [(k, flat(f[k])) for k in ("elapsed_s", "interrupted", "signal") if k in f]
        totals = f.get("totals")
        if isinstance(totals, dict):
            rows += [(k, flat(v)) for k, v in totals.items()]
        return rows

    def farm_events(self) -> list[str]:
        events = (self.farm or {}).get("events", [])
        return [flat(e) for e in events] if isinstance(events, list) else []


# -- small helpers ---------------------------------------------------------------------


def verdict_class(verdict: str) -> str:
    ok = "ok" if verdict in OK_VERDICTS else ("none" if verdict == "unchecked" else "bad")
    return f"{ok} v-{re.sub(r'[^a-z0-9_]', '_', verdict.lower())}"


def flat(value: Any) -> str:
    """A journal value as one line of text."""
    if isinstance(value, dict):
        return ", ".join(f"{k}={flat(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "[" + ", ".join(flat(v) for v in value) + "]"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "-" if value is None else str(value)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _rows(board: str | None) -> list[str] | None:
    if not board:
        return None
    rows = board.split("\n")
    return rows if rows[0] and all(len(r) == len(rows[0]) for r in rows) else None


def grid(board: str | None, other: str | None) -> Grid:
    rows = _rows(board)
    if rows is None:
        return Grid(board or "-", None)
    diff = differences(board, other)
    return Grid(board or "", [[Cell(ch, (r, c) in diff) for c, ch in enumerate(row)] for r, row in enumerate(rows)])


def _bbox(value: Any) -> tuple[int, int, int, int] | None:
    if isinstance(value, (list, tuple)) and len(value) == 4:
        try:
            x0, y0, x1, y1 = (int(v) for v in value)
        except (TypeError, ValueError):
            return None
        return (x0, y0, x1, y1)
    return None


def _frame_id(line: dict[str, Any]) -> int | None:
    v = line.get("frame")
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _note_text(line: dict[str, Any]) -> str:
    parts = []
    for k, v in line.items():
        if k in _LEFT_OUT:
            continue
        text = flat(v)
        parts.append(f"{k}: {text if len(text) <= 300 else text[:300] + '...'}")
    return "; ".join(parts)


# -- reading the run folder -------------------------------------------------------------


def _journal_lines(path: Path) -> tuple[list[dict[str, Any]], bool]:
    """The journal's lines, and whether its last was torn (cut short by a kill: left out).
    A broken line before the last is an error naming the file and the line."""
    hint = "give the run folder of a run `agent play` or `agent farm` wrote (runs/<timestamp>/); a journal is one JSON object a line"
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise UsageError("RUN", f"cannot read the journal {path}: {exc.strerror or exc}",
                         hint="check the file's permissions, or give another run folder") from None  # fmt: skip
    lines = raw.split(b"\n")
    torn = False
    if lines and lines[-1] == b"":
        lines.pop()
    out: list[dict[str, Any]] = []
    for n, line in enumerate(lines, 1):
        try:
            d = json.loads(line.decode("utf-8"))
            if not isinstance(d, dict):
                raise ValueError("not an object")
        except (ValueError, UnicodeDecodeError, RecursionError):
            if n == len(lines) and not raw.endswith(b"\n"):
                torn = True  # written half when the run was killed: the lines before it stand
                continue
            raise UsageError("RUN", f"the journal {path} is not readable: line {n} is no JSON object", hint=hint) from None
        out.append(d)
    if not any(d.get("type") == "start" for d in out):
        raise UsageError("RUN", f"the journal {path} has no start line: it is no journal of a run", hint=hint)
    return out, torn


def _find_journals(run_dir: Path) -> list[Path]:
    if not run_dir.exists():
        raise UsageError("RUN", f"{run_dir} does not exist",
                         hint="give a run folder: runs/<timestamp>/, as `agent play` or `agent farm` printed")  # fmt: skip
    if run_dir.is_file() and run_dir.suffix == ".jsonl":
        return [run_dir]  # one journal of the run: that device alone
    if not run_dir.is_dir():
        raise UsageError("RUN", f"{run_dir} is no run folder and no journal",
                         hint="give the run folder (runs/<timestamp>/) or one of its <serial>.jsonl journals")  # fmt: skip
    try:
        journals = sorted(p for p in run_dir.glob("*.jsonl") if p.is_file())
    except OSError as exc:
        raise UsageError("RUN", f"cannot list {run_dir}: {exc.strerror or exc}",
                         hint="check the folder's permissions") from None  # fmt: skip
    if not journals:
        raise UsageError("RUN", f"{run_dir} holds no journal (no <serial>.jsonl file)",
                         hint="give the folder a run of `agent play` or `agent farm` wrote: runs/<timestamp>/")  # fmt: skip
    return journals


def _farm_summary(run_dir: Path, notes: list[str]) -> dict[str, Any] | None:
    path = run_dir / "summary.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as exc:
        notes.append(f"{path.name} is not readable ({exc.__class__.__name__}): the farm's summary table is left out")
        return None
    if isinstance(data, dict) and isinstance(data.get("devices"), list):
        return data
    return None  # `agent play`'s own summary: the journal's stop line says the same


def _sessions(lines: list[dict[str, Any]], prefix: str) -> list[Session]:
    sessions: list[Session] = []
    session: Session | None = None
    for line in lines:
        kind = str(line.get("type", ""))
        if kind == "start" or session is None:
            session = Session(f"{prefix}-s{len(sessions)}", line if kind == "start" else {})
            sessions.append(session)
            if kind == "start":
                continue
        move = session.moves[-1] if session.moves else None
        if kind == "decision":
            index = line.get("index")
            n = index if isinstance(index, int) and not isinstance(index, bool) else len(session.moves) + 1
            # the anchor names the move's number, unless a journal repeats one
            anchor = f"{session.anchor}-m{n}" if n not in session.numbers else f"{session.anchor}-i{len(session.moves)}"
            session.numbers.add(n)
            session.moves.append(Move(n, anchor, line))
        elif kind == "check" and move is not None and (move.check is None and line.get("index") in (None, move.index)):
            move.check = line
        elif kind == "stop":
            session.stop = line
        elif kind == "level" and isinstance(line.get("index"), int):
            session.levels[int(line["index"])] = line
        elif kind in _COUNTED:
            if move is not None:
                move.moving += 1
        else:
            note = Note(kind, line)
            (move.notes if move is not None else session.preface).append(note)
            fid = _frame_id(line)
            if kind in _PICTURED_NOTES and fid is not None:
                where = f" after move {move.index}" if move is not None else ""
                note.picture = Picture(fid, board=_text(line.get("board")), title=f"{kind}{where}")
    return sessions


def _place_pictures(sessions: list[Session]) -> None:
    """The pictures of the moves, each with the board's box it was read in: the start
    line's, then each profile line's (the board found again) for what follows it."""
    for s in sessions:
        bbox = _bbox(_profile_of(s).get("board_bbox"))
        for note in s.preface:
            bbox = _placed(note, bbox)
        for m in s.moves:
            m.before = _move_picture(m, bbox, before=True)
            for note in m.notes:
                bbox = _placed(note, bbox)
            m.after = _move_picture(m, bbox, before=False)


def _placed(note: Note, bbox: tuple[int, int, int, int] | None) -> tuple[int, int, int, int] | None:
    if note.kind == "profile":
        bbox = _bbox(note.line.get("board_bbox")) or bbox
    if note.picture is not None:
        note.picture.bbox = bbox
    return bbox


def _profile_of(s: Session) -> dict[str, Any]:
    profile = s.start.get("profile")
    return profile if isinstance(profile, dict) else {}


def _move_picture(m: Move, bbox: tuple[int, int, int, int] | None, before: bool) -> Picture | None:
    if before:
        fid = _frame_id(m.decision)
        if fid is None:
            return None
        return Picture(fid, bbox=bbox, board=_text(m.decision.get("board")), gestures=_gestures(m.decision),
                       title=f"move {m.index}: {m.move_text}")  # fmt: skip
    if m.check is None or _frame_id(m.check) is None:
        return None
    return Picture(_frame_id(m.check), bbox=bbox, board=_text(m.check.get("board")), verdict=m.verdict,
                   expected=m.expected, title=f"after move {m.index}")  # fmt: skip


def _gestures(line: dict[str, Any]) -> list[Any] | None:
    g = line.get("gestures")
    return g if isinstance(g, list) else None


def _charts(session: Session) -> None:
    for key, title, unit, colour in CHARTS:
        points = []
        for m in session.moves:
            v = m.decision.get(key)
            points.append((m.index, float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None))
        series = Series(key, title, unit, points)
        session.charts.append((f"{title} ({unit})", line_chart(series, colour), summary_of(series)))


def _evidence(session: Session, journal: Path, recording: Any) -> None:
    stop = session.stop or {}
    frames = stop.get("frames")
    if not isinstance(frames, list):
        return
    by_name: dict[str, int] = {}
    if recording is not None:
        for e in recording.entries.values():
            by_name[Path(e.file).name] = e.id  # the last frame stored in that file
    run_dir = journal.parent
    for name in frames:
        if not isinstance(name, str):
            continue
        base = Path(name).name
        title = f"stop: {base}"
        if base in by_name:
            session.evidence.append(Picture(by_name[base], title=title))
            continue
        for candidate in (Path(name), run_dir / name, run_dir / "frames" / base, journal.with_suffix(".frames") / base):
            if candidate.is_file() and inside_folder(candidate, run_dir):  # (a journal is untrusted: nothing from outside)
                session.evidence.append(Picture(None, path=candidate, title=title))
                break
        else:
            session.evidence.append(Picture(None, title=title, problem=f"{name} is not in the run folder"))


def _open_recording(journal: Path) -> Any:
    try:
        from agent.play.recording import Recording
    except ImportError:  # pragma: no cover - the recording module ships with the loop
        return None
    try:
        return Recording.open(journal)
    except AgentError:
        return None
    except OSError:
        return None


def _device(journal: Path, number: int) -> tuple[DeviceReport, Any]:
    lines, torn = _journal_lines(journal)
    anchor = f"d{number}"
    sessions = _sessions(lines, anchor)
    _place_pictures(sessions)
    recording = _open_recording(journal)
    if recording is not None:
        _fill_boxes_from_snapshots(sessions, recording)
    for s in sessions:
        _charts(s)
        _evidence(s, journal, recording)
    start = sessions[0].start
    device = start.get("device")
    device = device if isinstance(device, dict) else {}
    serial = str(device.get("serial", journal.stem))
    model = str(device.get("model", "-"))
    pictured = sum(1 for s in sessions for m in s.moves if m.before is not None)
    available = set(recording.entries) if recording is not None else set()
    missing = sum(1 for s in sessions for m in s.moves if m.before is not None and m.before.frame not in available)
    moves = sum(len(s.moves) for s in sessions)
    note: str | None = None
    if moves and (recording is None or missing == pictured):
        note = NO_FRAMES
    elif missing or pictured < moves:
        note = (f"frames of {moves - pictured + missing} of {moves} moves were not kept: without --record only the "
                "last few are, and none past the recording's size budget")  # fmt: skip
    damaged = list(getattr(recording, "damaged", []))
    return DeviceReport(anchor, journal, serial, model, sessions, note, torn=torn, damaged=damaged), recording


def _fill_boxes_from_snapshots(sessions: list[Session], recording: Any) -> None:
    """A journal whose start line names no board box, but a profile snapshot: the box
    from the snapshot."""
    for s in sessions:
        profile = _profile_of(s)
        snapshot = profile.get("snapshot")
        if profile.get("board_bbox") is not None or not isinstance(snapshot, str):
            continue
        try:
            bbox = _bbox(list(recording.profile_at(snapshot).board_bbox))
        except (AgentError, OSError, ValueError):
            continue
        for p in _pictures_of(s):
            if p.bbox is None:
                p.bbox = bbox


def _pictures_of(s: Session) -> Iterator[Picture]:
    for note in s.preface:
        if note.picture is not None:
            yield note.picture
    for m in s.moves:
        if m.before is not None:
            yield m.before
        for i, note in enumerate(n for n in m.notes if n.picture is not None):
            if i < NOTE_PICTURES and note.picture is not None:
                yield note.picture
        if m.after is not None:
            yield m.after
    yield from s.evidence


# -- making the pictures ---------------------------------------------------------------


def _data_uri(image: np.ndarray) -> str:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:  # pragma: no cover - cv2 encodes any uint8 image
        raise ValueError("JPEG encoding failed")
    return "data:image/jpeg;base64," + base64.b64encode(data.tobytes()).decode("ascii")


def _draw(picture: Picture, frame: np.ndarray) -> str:
    from agent.play.annotate import annotate

    image = annotate(frame, picture.bbox, picture.board, picture.gestures, picture.verdict, picture.expected,
                     picture.title or None, width=PICTURE_WIDTH)  # fmt: skip
    return _data_uri(image)


def _make_pictures(jobs: list[tuple[Picture, Path | None]], progress: Progress | None, total: int) -> None:
    """Every picture's data URI (or the problem that kept it from being made). `jobs`
    pair a picture with its device's journal (for the recording)."""
    local = threading.local()

    def recording_of(journal: Path) -> Any:
        # The recording's reader caches decoded key frames: one reader a thread.
        readers = getattr(local, "readers", None)
        if readers is None:
            readers = local.readers = {}
        if journal not in readers:
            readers[journal] = _open_recording(journal)
        return readers[journal]

    # A frame is decoded once for all its pictures: the check of one move and the decision
    # of the next were read on the same frame.
    groups: dict[tuple[Path | None, int | None, Path | None], list[Picture]] = {}
    for picture, journal in jobs:
        groups.setdefault((journal, picture.frame, picture.path), []).append(picture)

    def make(item: tuple[tuple[Path | None, int | None, Path | None], list[Picture]]) -> int:
        (journal, fid, path), pictures = item
        try:
            if path is not None:
                frame = cv2.imread(str(path), cv2.IMREAD_COLOR)
                if frame is None:
                    raise AgentError(f"{path.name} is not a picture")
            else:
                rec = recording_of(journal) if journal is not None else None
                if rec is None or fid is None:
                    raise AgentError("the frame is not in the recording")
                frame = rec.frame(fid)
            for picture in pictures:
                picture.uri = _draw(picture, frame)
        except (AgentError, OSError, ValueError, cv2.error) as exc:
            for picture in pictures:
                picture.problem = str(exc)
        return len(pictures)

    workers = max(1, min(8, os.cpu_count() or 1))
    done = 0
    # Taken in order by the threads: neighbouring frames share a key frame, which each
    # thread's reader then finds in its cache.
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="report") as pool:
        for n in pool.map(make, groups.items()):
            done += n
            if progress is not None:
                progress(done, total)


# -- the page ---------------------------------------------------------------------------


def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("agent.report", "templates"),
        autoescape=True,  # everything from a journal is text, never markup
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env


def build_report(run_dir: Path, progress: Progress | None = None) -> tuple[RunReport, int]:
    """The report's content, its pictures made; and how many pictures it holds."""
    notes: list[str] = []
    journals = _find_journals(run_dir)
    if run_dir.is_file():
        run_dir, farm = run_dir.parent, None  # one device's journal: no farm table
    else:
        farm = _farm_summary(run_dir, notes)
    devices: list[DeviceReport] = []
    jobs: list[tuple[Picture, Path | None]] = []
    for i, journal in enumerate(journals):
        device, recording = _device(journal, i)
        devices.append(device)
        for s in device.sessions:
            for p in _pictures_of(s):
                if p.path is not None:
                    jobs.append((p, None))
                elif recording is not None and p.frame in recording.entries:
                    jobs.append((p, journal))
    if farm is not None:
        for d in devices:
            for row in farm.get("devices", []):
                if isinstance(row, dict) and str(row.get("serial")) == d.serial:
                    d.farm_row = row
    total = len(jobs) + 1  # and the page
    _make_pictures(jobs, progress, total)
    made = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    return RunReport(run_dir, devices, farm, notes, made), len(jobs)


def render(report: RunReport) -> str:
    from markupsafe import Markup

    template = _environment().get_template("report.html.j2")
    return str(template.render(report=report, svg=Markup, no_frames=NO_FRAMES))


def _replaces_the_run(out: Path, folder: Path) -> str | None:
    """Why writing `out` would replace something of the run in `folder` (its journals,
    summary, frames, recording index, profiles: whatever the report reads, and whatever
    else the user keeps there), or None. Only a page (an earlier report) is replaced."""
    try:
        target, root = out.resolve(), folder.resolve()
    except (OSError, RuntimeError):
        return None  # (writable_file_problem names a path that cannot be reached)
    if not (out.exists() or out.is_symlink()) or not target.is_relative_to(root):
        return None
    try:
        with open(target, "rb") as f:
            head = f.read(64).lstrip().lower()
    except OSError:
        head = b""
    if head.startswith(b"<!doctype html"):
        return None
    return f"{out} is a file of the run folder {folder} (not an earlier report): writing the report there would replace it"


def write_report(run_dir: Path, out: Path | None = None, progress: Progress | None = None) -> Path:
    """Write the HTML report of the run folder `run_dir` to `out` (default:
    `run_dir/report.html`), atomically; the path written. `progress(done, total)` is
    called as pictures are made (the last step is the page). Raises UsageError (an
    AgentError, exit 2) for a folder with no journal, an unreadable journal or an output
    that cannot be written."""
    from agent.files import write_atomic, writable_file_problem

    run_dir = Path(run_dir)
    folder = run_dir.parent if run_dir.is_file() else run_dir
    out = Path(out) if out is not None else folder / REPORT_NAME
    _find_journals(run_dir)  # a folder that is no run is said before the output is looked at
    problem = writable_file_problem(out) or _replaces_the_run(out, folder)
    if problem:
        raise UsageError("--output", f"cannot write the report: {problem}",
                         hint="give -o a new file, or one outside the run folder (without -o it writes "
                              f"{REPORT_NAME} in the run folder)")  # fmt: skip
    report, pictures = build_report(run_dir, progress)
    page = render(report)
    try:
        write_atomic(out, page.encode("utf-8"))
    except OSError as exc:
        raise UsageError("--output", f"cannot write the report {out}: {exc.strerror or exc}",
                         hint="give -o a file in a folder you can write to (and check the disk has room)") from None
    if progress is not None:
        progress(pictures + 1, pictures + 1)
    return out


