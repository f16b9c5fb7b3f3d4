"""A phone's recording, kept on its node, copied to the driver's run folder as it grows
(`agent farm --ray --record`): the pictures a move's frames are stored in never leave the
node one by one as frames would (about 10 MB each); what travels is the recording's own
files, a few KB a move, in chunks, while the phone plays and once more when its run ends.

The driver's cursor is where its copy of the frame index ends and which of the other
files (profile snapshots, the pictures of a stop) it holds; the node answers with the
pictures the index's next lines name, then those lines. A picture is in place before
the index names it, on the node as on the driver: a copy read at any moment is whole.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from agent.play.recording import INDEX, write_file_whole

CHUNK_BYTES = 8 * 1024 * 1024  # at most this much a call (but always one line's pictures)


@dataclass
class Cursor:
    """What the driver's copy of one recording holds."""

    index_bytes: int = 0  # the length of its copy of the index (whole lines only)
    others: set[str] = field(default_factory=set)  # the files no index line names that it holds

    def as_json(self) -> dict[str, object]:
        return {"index_bytes": self.index_bytes, "others": sorted(self.others)}

    @classmethod
    def from_json(cls, data: dict) -> "Cursor":
        return cls(int(data.get("index_bytes", 0)), set(data.get("others", ())))


@dataclass(frozen=True)
class Chunk:
    """The next part of a recording: files to put in place, then index lines to append
    at `index_at` (0 with `index_whole`: the index anew)."""

    files: dict[str, bytes]
    index_at: int
    index_lines: bytes
    more: bool  # something is left for the next call
    index_whole: bool = False

    @property
    def size(self) -> int:
        return sum(map(len, self.files.values())) + len(self.index_lines)

    @property
    def empty(self) -> bool:
        return not self.files and not self.index_lines


def _named(lines: bytes) -> list[str]:
    out = []
    for line in lines.splitlines():
        try:
            name = json.loads(line).get("file")
        except (ValueError, AttributeError):
            continue
        if isinstance(name, str) and name not in out:
            out.append(name)
    return out


def next_chunk(folder: Path, cursor: Cursor, most_bytes: int = CHUNK_BYTES) -> Chunk:
    """What the driver's copy lacks, on the node that keeps `folder`."""
    if not folder.is_dir():
        return Chunk({}, cursor.index_bytes, b"", False)
    index = folder / INDEX
    # The index first: every picture its whole lines name is in place by then.
    data = index.read_bytes() if index.is_file() else b""
    data = data[: data.rfind(b"\n") + 1]
    at, whole = cursor.index_bytes, False
    if at > len(data) or (at and data[at - 1 : at] != b"\n"):
        at, whole = 0, True  # not the index the driver copied: it is sent anew
    held = set(_named(data[:at])) | cursor.others
    files: dict[str, bytes] = {}
    size, more, end = 0, False, at
    for line in data[at:].splitlines(keepends=True):
        wanted = [n for n in _named(line) if n not in held and n not in files]
        cost = sum(_size(folder / n) for n in wanted)
        if end > at and size + cost > most_bytes:
            more = True
            break
        for n in wanted:
            body = _read(folder / n)
            if body is not None:
                files[n] = body
                size += len(body)
        end += len(line)
    if not more:
        named = set(_named(data))
        for p in sorted(folder.iterdir()):
            n = p.name
            if n == INDEX or n.startswith(".") or n in named or n in cursor.others or n in files or not p.is_file():
                continue
            if files and size + _size(p) > most_bytes:
                more = True
                break
            body = _read(p)
            if body is not None:
                files[n] = body
                size += len(body)
    return Chunk(files, at, data[at:end], more, whole)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def apply_chunk(folder: Path, chunk: Chunk, cursor: Cursor) -> Cursor:
    """Put a chunk in the driver's copy: its files first, whole or not at all, then its
    index lines; the cursor that copy now has."""
    if chunk.empty and not chunk.index_whole:
        return cursor
    folder.mkdir(parents=True, exist_ok=True)
    named = set(_named(chunk.index_lines))
    for name, body in chunk.files.items():
        if Path(name).name != name or name.startswith("."):
            continue  # a name that would leave the folder: never written
        write_file_whole(folder / name, body)
    index = folder / INDEX
    if chunk.index_whole:
        write_file_whole(index, chunk.index_lines)
    elif chunk.index_lines:
        with open(index, "r+b" if index.exists() else "wb") as f:
            f.truncate(chunk.index_at)  # a copy longer than the cursor says: what follows is ours to write
            f.seek(chunk.index_at)
            f.write(chunk.index_lines)
    # A picture that came before the line naming it is held as one of the others until then.
    return Cursor(chunk.index_at + len(chunk.index_lines), (cursor.others | set(chunk.files)) - named)
