"""The frames a run's decisions were made on, kept beside its journal.

A run folder holds, per device, `<serial>.jsonl` (the journal) and `<serial>.frames/`:
`frames.ndjson` (one line per frame: its id, file, role, clock time, move) and the frame
files. Journal lines name their frame by id (`"frame": 12`); the check of one move and the
decision of the next share theirs.

Frames are JPEG unless asked lossless (PNG); a frame a dialog or card was read on, or a new
board found on, is always PNG: OCR finds the buttons and the board's edges are found again
there, and a JPEG's edges can lead either elsewhere. A frame is stored whole (a key frame) or as
the box that changed since the last key frame: between two moves most of a phone's screen
(the header, the background) does not change, and one key frame serves many moves. The
writing happens on a thread of its own, so the loop only hands a frame over.

`agent play --record` keeps every frame read at rest, with a size budget: once reached,
no frame is kept any more and the journal says so. Without it, the last few frames are
held in memory (`mode="ring"`) and written only when a run stops on a failure, as PNG.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import cv2
import numpy as np

from agent.errors import AgentError
from agent.vision.profile import DeviceProfile, GameProfile, dumps_profile, load_profile

INDEX = "frames.ndjson"  # JSON lines, not named *.jsonl: in a run folder those are the journals
RING_FRAMES = 8  # frames held in memory without --record: a few moves' worth
DEFAULT_BUDGET_MB = 1000.0
DEFAULT_QUALITY = 90
KEY_EVERY = 100  # a key frame at least every this many frames: a lost file costs at most these
KEY_SHARE = 0.5  # a change covering more than this share of the frame is a key frame itself
DIFF_LEVEL = 6  # pixels that differ by less than this (a capture's noise) are the same
LOSSLESS_ROLES = frozenset({"screen"})  # frames kept PNG whatever the options: screens, boards found again
_QUEUE = 16  # frames waiting for the writer at most: a slower disk slows the run, it loses nothing

RecordMode = Literal["all", "ring"]


def frames_dir(journal: Path) -> Path:
    return Path(journal).with_suffix(".frames")


@dataclass(frozen=True)
class FrameEntry:
    id: int
    file: str  # relative to the frames folder
    base: int | None  # the key frame this one's box is pasted on (None: a whole frame)
    box: tuple[int, int, int, int] | None  # x0, y0, x1, y1 of the stored part (None: whole)
    role: str  # what the frame was kept for: rest (read at rest), evidence, ...
    t: float  # the loop's clock
    index: int | None = None  # the move it belongs to, when it does

    def as_json(self) -> dict[str, object]:
        d = asdict(self)
        d["box"] = None if self.box is None else list(self.box)
        return d


@dataclass(frozen=True)
class RecordOptions:
    budget_mb: float = DEFAULT_BUDGET_MB  # frames stop being kept past this
    quality: int = DEFAULT_QUALITY  # JPEG quality
    lossless: bool = False  # PNG instead of JPEG: bigger, and every pixel as captured


@dataclass(frozen=True)
class RecordStats:
    frames: int
    bytes: int
    budget_reached: bool
    folder: Path
    cpu_s: float = 0.0  # processor time spent comparing, encoding and writing frames


def _changed_box(a: np.ndarray, b: np.ndarray) -> tuple[int, int, int, int] | None:
    """The box (x0, y0, x1, y1, exclusive) of the pixels that differ, or None."""
    if a.shape != b.shape:
        h, w = b.shape[:2]
        return (0, 0, w, h)
    h, w = b.shape[:2]
    channels = 1 if b.ndim == 2 else b.shape[2]
    # the channels side by side, one row of the mask a row of pixels: a few ms a frame
    diff = cv2.absdiff(a, b).reshape(h, w * channels)
    _, mask = cv2.threshold(diff, DIFF_LEVEL - 1, 255, cv2.THRESH_BINARY)
    x, y, bw, bh = cv2.boundingRect(mask)
    if bw == 0 or bh == 0:
        return None
    px0, px1 = x // channels, (x + bw + channels - 1) // channels
    # whole 16-pixel blocks, so the stored part's edges are not JPEG block edges
    x0, y0 = px0 // 16 * 16, y // 16 * 16
    x1, y1 = min(w, -(-px1 // 16) * 16), min(h, -(-(y + bh) // 16) * 16)
    return (x0, y0, x1, y1)


class Recorder:
    """Frames handed over by the loop, written by a thread of its own (mode "all"), or
    held in memory until `flush` (mode "ring")."""

    def __init__(self, journal: Path, mode: RecordMode = "all", options: RecordOptions | None = None,
                 device: tuple[str, int, int] = ("phone", 0, 0), ring: int = RING_FRAMES) -> None:  # fmt: skip
        options = options or RecordOptions()
        budget_mb, quality, lossless = options.budget_mb, options.quality, options.lossless
        if not 1 <= quality <= 100:
            raise AgentError(f"a JPEG quality of {quality} is not one", hint="give --record-quality from 1 to 100")
        self.device = device  # model, width, height: what a profile snapshot is filed under
        if budget_mb <= 0:
            raise AgentError(f"a recording budget of {budget_mb} MB holds no frame", hint="give --record-budget above 0")
        self.folder = frames_dir(journal)
        self.run_dir = self.folder.parent
        self.mode, self.budget = mode, int(budget_mb * 1e6)
        self.quality, self.lossless = quality, lossless
        self.bytes = 0
        self.cpu_s = 0.0  # the writer's own processor time: what recording costs
        self.budget_reached = False
        self._next = 0
        self._last: tuple[int, np.ndarray, bool] | None = None  # the last frame handed over: id, pixels, lossless
        self._ring: deque[tuple[int, np.ndarray, str, float, int | None]] = deque(maxlen=ring)
        self._written: list[FrameEntry] = []
        self._profiles = 0
        self._error: Exception | None = None
        self._thread: threading.Thread | None = None
        self._queue: queue.Queue[tuple[int, np.ndarray, str, float, int | None] | None] = queue.Queue(_QUEUE)
        self._key: tuple[FrameEntry, np.ndarray] | None = None  # the writer's key frame
        self._prev: tuple[FrameEntry, np.ndarray] | None = None
        self._since_key = 0
        self._resume()
        if mode == "all":
            self._open()
            self._thread = threading.Thread(target=self._write_loop, name="recorder", daemon=True)
            self._thread.start()

    def _resume(self) -> None:
        """A device's next run in the same folder (a farm's retry) goes on from the frames
        and profiles already there: nothing kept is overwritten."""
        if not self.folder.is_dir():
            return
        index = self.folder / INDEX
        if index.is_file():
            data = index.read_bytes()
            if data and not data.endswith(b"\n"):
                with open(index, "r+b") as f:  # a line torn by a kill: the next one must not join it
                    f.truncate(data.rfind(b"\n") + 1)
        try:
            known = Recording.open_folder(self.folder).entries
        except AgentError:
            known = {}
        self._next = max(known, default=-1) + 1
        self._written = [known[i] for i in sorted(known)]
        self.bytes = sum(p.stat().st_size for p in self.folder.iterdir() if p.is_file())
        self._profiles = len(list(self.folder.glob("profile-*.toml")))

    def _open(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise AgentError(f"cannot keep frames in {self.folder}: {exc.strerror or exc}",
                             hint="give --runs a folder you can write to") from None  # fmt: skip

    # -- the loop's side ------------------------------------------------------------------
    def add(self, frame: np.ndarray, role: str, t: float, index: int | None = None) -> int | None:
        """The frame's id, or None once the budget is reached. The same frame object
        handed over twice in a row keeps its id, unless it is wanted lossless now and
        was not kept so: then it is kept again, lossless, under a new id."""
        lossless = self.lossless or role in LOSSLESS_ROLES
        if self._last is not None and self._last[1] is frame and (self._last[2] or not lossless or self.mode == "ring"):
            return self._last[0]
        if self.mode == "all" and (self.budget_reached or self._error is not None):
            return None
        fid = self._next
        self._next += 1
        self._last = (fid, frame, lossless)
        item = (fid, frame, role, t, index)
        self._ring.append(item)  # the last few, by reference: what a failed stop shows whole
        if self.mode == "all":
            self._queue.put(item)
        return fid

    @property
    def problem(self) -> str | None:
        """Why frames are no longer kept, once they are not: for the journal."""
        if self._error is not None:
            return f"frames are no longer recorded: {self._error}"
        if self.budget_reached:
            return (f"the recording reached its budget of {self.budget / 1e6:.0f} MB: no more frames are kept "
                    "(give a larger --record-budget)")  # fmt: skip
        return None

    def snapshot_profile(self, profile: GameProfile) -> str | None:
        """Keep the profile the frames are read with; its path relative to the run folder,
        or None when frames are not being recorded (a ring keeps none)."""
        if self.mode != "all":
            return None
        name = f"profile-{self._profiles}.toml"
        self._profiles += 1
        model, width, height = self.device
        doc = dumps_profile(DeviceProfile(model, width, height, None, {profile.game: profile}))
        path = self.folder / name
        try:
            write_file_whole(path, doc.encode("utf-8"))
        except OSError as exc:
            self._error = exc
            return None
        return str(path.relative_to(self.run_dir))

    def flush(self) -> list[Path]:
        """The last frames as whole pictures, lossless, oldest first, for the journal's
        stop line: with mode "ring" they become the recording; with mode "all" (whose files
        may hold only the part of a frame that changed) they are written beside it as
        `stop-<id>.png`."""
        if self.mode == "all":
            self._drain()
            out = []
            for fid, frame, _, _, _ in self._ring:
                ok, data = cv2.imencode(".png", frame, [cv2.IMWRITE_PNG_COMPRESSION, 1])
                if ok:
                    path = self.folder / f"stop-{fid:06d}.png"
                    write_file_whole(path, data.tobytes())
                    out.append(path)
            self._ring.clear()
            return out
        if not self._ring:
            return []
        self._open()
        self.lossless = True  # evidence: a few frames, worth every pixel
        out = []
        while self._ring:
            fid, frame, role, t, index = self._ring.popleft()
            entry = self._store(fid, frame, role, t, index, delta=False)
            out.append(self.folder / entry.file)
        return out

    def close(self) -> RecordStats:
        if self._thread is not None:
            self._drain()
            self._queue.put(None)
            self._thread.join()
            self._thread = None
        return RecordStats(len(self._written), self.bytes, self.budget_reached, self.folder, self.cpu_s)

    def _drain(self) -> None:
        self._queue.join()

    # -- the writer's side ----------------------------------------------------------------
    def _write_loop(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                if self._error is None and not self.budget_reached:
                    t0 = time.thread_time()
                    self._store(*item, delta=True)
                    self.cpu_s += time.thread_time() - t0
            except _BudgetReached:
                pass  # said in the journal by the loop (`problem`); the run goes on
            except Exception as exc:  # a full disk: the run goes on without frames, and says so
                self._error = exc
            finally:
                self._queue.task_done()

    def _store(self, fid: int, frame: np.ndarray, role: str, t: float, index: int | None, delta: bool) -> FrameEntry:
        entry: FrameEntry | None = None
        lossless = self.lossless or role in LOSSLESS_ROLES
        # a frame wanted lossless is pasted only on a lossless key frame: else it is one
        if delta and self._key is not None and self._since_key < KEY_EVERY and (
                not lossless or self._key[0].file.endswith(".png")):
            box = _changed_box(self._key[1], frame)
            h, w = frame.shape[:2]
            prev = self._prev
            key = self._key[0]
            if box is None:
                entry = FrameEntry(fid, key.file, None, None, role, t, index)
            elif (prev is not None and prev[0].base == key.id and prev[0].box == box
                  and (not lossless or prev[0].file.endswith(".png"))
                  and np.array_equal(prev[1][box[1]:box[3], box[0]:box[2]], frame[box[1]:box[3], box[0]:box[2]])):
                entry = FrameEntry(fid, prev[0].file, prev[0].base, box, role, t, index)  # the same as the last
            elif (box[2] - box[0]) * (box[3] - box[1]) <= KEY_SHARE * w * h:
                x0, y0, x1, y1 = box
                name = self._write_image(fid, frame[y0:y1, x0:x1], role)
                entry = FrameEntry(fid, name, key.id, box, role, t, index)
                self._since_key += 1
        if entry is None:
            entry = FrameEntry(fid, self._write_image(fid, frame, role), None, None, role, t, index)
            self._key, self._since_key = (entry, frame), 0
        self._prev = (entry, frame)
        with open(self.folder / INDEX, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry.as_json(), separators=(",", ":")) + "\n")
        self._written.append(entry)
        return entry

    def _write_image(self, fid: int, image: np.ndarray, role: str) -> str:
        lossless = self.lossless or role in LOSSLESS_ROLES
        name = f"{fid:06d}.{'png' if lossless else 'jpg'}"
        if lossless:
            ok, data = cv2.imencode(".png", image, [cv2.IMWRITE_PNG_COMPRESSION, 1])
        else:
            ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, self.quality])
        if not ok:  # pragma: no cover - cv2 encodes any uint8 image
            raise AgentError(f"could not encode frame {fid}")
        if self.bytes + data.nbytes > self.budget:
            self.budget_reached = True
            raise _BudgetReached()
        write_file_whole(self.folder / name, data.tobytes())
        self.bytes += data.nbytes
        return name


class _BudgetReached(Exception):
    pass


def write_file_whole(path: Path, data: bytes) -> None:
    # Whole or not at all (a reader never meets half a frame); not flushed to disk one by
    # one, which would cost a disk sync a frame: the index names a file only once it is in place.
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _entry(line: bytes) -> FrameEntry:
    """One index line, checked: a ValueError saying what is wrong with it."""
    try:
        d = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 (byte {exc.start})") from None
    except (json.JSONDecodeError, RecursionError):
        raise ValueError("not JSON") from None
    if not isinstance(d, dict):
        raise ValueError(f"a JSON {type(d).__name__}, not an object")

    def integer(key: str, value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{key} is {value!r}, not an integer")
        return value

    if "id" not in d or "file" not in d:
        raise ValueError("no id or no file")
    fid = integer("id", d["id"])
    file = d["file"]
    if not isinstance(file, str) or not file:
        raise ValueError(f"file is {file!r}, not a file name")
    base = None if d.get("base") is None else integer("base", d["base"])
    box = d.get("box")
    if box is not None:
        if not isinstance(box, list) or len(box) != 4:
            raise ValueError(f"box is {box!r}, not [x0, y0, x1, y1]")
        x0, y0, x1, y1 = (integer("box", v) for v in box)
        if not (0 <= x0 < x1 and 0 <= y0 < y1):
            raise ValueError(f"box {box} is empty or off the frame")
        box = (x0, y0, x1, y1)
    if (base is None) != (box is None):
        raise ValueError("a part of a frame needs both its base and its box")
    t = d.get("t", 0.0)
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        raise ValueError(f"t is {t!r}, not a time")
    index = None if d.get("index") is None else integer("index", d["index"])
    return FrameEntry(fid, file, base, box, str(d.get("role", "")), float(t), index)


class Recording:
    """The frames of one device's run, read back."""

    def __init__(self, folder: Path, entries: dict[int, FrameEntry], damaged: list[str] | None = None) -> None:
        self.folder, self.run_dir, self.entries = folder, folder.parent, entries
        self.damaged: list[str] = list(damaged or [])  # index lines skipped, each with why
        self._cache: dict[str, np.ndarray] = {}

    @classmethod
    def open(cls, journal: Path) -> "Recording":
        if not (frames_dir(journal) / INDEX).is_file():
            raise AgentError(f"{journal} has no recorded frames (no {frames_dir(journal) / INDEX})",
                             hint="record a run with `agent play --record`")  # fmt: skip
        return cls.open_folder(frames_dir(journal))

    @classmethod
    def open_folder(cls, folder: Path) -> "Recording":
        index = folder / INDEX
        if not index.is_file():
            raise AgentError(f"{folder} holds no recorded frames (no {index})",
                             hint="record a run with `agent play --record`")  # fmt: skip
        entries: dict[int, FrameEntry] = {}
        damaged: list[str] = []
        try:
            raw = index.read_bytes()
        except OSError as exc:
            raise AgentError(f"cannot read {index}: {exc.strerror or exc}", hint="check the file's permissions") from None
        lines = raw.split(b"\n")
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                e = _entry(line)
            except ValueError as exc:
                # A line torn by a kill, or damaged on its way (a recording may come from
                # another machine): skipped and named; the frames of the others still serve.
                last = n == len(lines) or (n == len(lines) - 1 and not lines[-1])
                damaged.append(f"index line {n}: {exc}" + (" (the last line, torn)" if last else ""))
                continue
            entries[e.id] = e
        return cls(folder, entries, damaged)

    def _inside(self, name: str, root: Path, what: str) -> Path:
        """`root / name`, refused unless it stays inside `root` (no absolute path, no `..`,
        no symlink leading out): a recording is untrusted input."""
        from agent.files import inside_folder

        path = root / name
        if Path(name).is_absolute() or not inside_folder(path, root):
            raise AgentError(f"{what} {name!r} named by the recording {self.folder} lies outside {root}",
                             hint="the recording is damaged or was made to read other files: record the run again")  # fmt: skip
        return path

    def ids(self) -> list[int]:
        return sorted(self.entries)

    def _image(self, name: str) -> np.ndarray:
        img = self._cache.get(name)
        if img is None:
            img = cv2.imread(str(self._inside(name, self.folder, "frame file")), cv2.IMREAD_COLOR)
            if img is None:
                raise AgentError(f"frame file {self.folder / name} is missing or unreadable",
                                 hint="the recording is damaged: record the run again")  # fmt: skip
            if len(self._cache) > 4:
                self._cache.pop(next(iter(self._cache)))
            self._cache[name] = img
        return img

    def frame(self, fid: int) -> np.ndarray:
        """The whole frame (BGR uint8) as it was kept."""
        e = self.entries.get(fid)
        if e is None:
            raise AgentError(f"frame {fid} is not in the recording {self.folder}",
                             hint="the run stopped keeping frames (its budget) or the recording is damaged")  # fmt: skip
        part = self._image(e.file)
        if e.base is None or e.box is None:
            return part.copy()
        key = self.entries.get(e.base)
        if key is None:
            raise AgentError(f"frame {fid} is pasted on frame {e.base}, which is not in the recording {self.folder}",
                             hint="the recording is damaged: record the run again")  # fmt: skip
        out = self._image(key.file).copy()
        x0, y0, x1, y1 = e.box
        h, w = out.shape[:2]
        if not (0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h) or part.shape[0] < y1 - y0 or part.shape[1] < x1 - x0:
            raise AgentError(f"frame {fid}'s box {list(e.box)} does not fit its key frame {e.base} ({w}x{h}) or its "
                             f"own picture ({part.shape[1]}x{part.shape[0]}) in the recording {self.folder}",
                             hint="the recording is damaged: record the run again")  # fmt: skip
        out[y0:y1, x0:x1] = part[: y1 - y0, : x1 - x0]
        return out

    def profile_at(self, snapshot: str) -> GameProfile:
        """The game profile kept as `snapshot` (a path relative to the run folder)."""
        device = load_profile(self._inside(snapshot, self.run_dir, "profile snapshot"))
        if len(device.games) != 1:
            raise AgentError(f"{self.run_dir / snapshot} holds {len(device.games)} game profiles, not one",
                             hint="the recording is damaged: record the run again")  # fmt: skip
        return next(iter(device.games.values()))
