"""Files written whole or not at all: profiles, plan libraries, pictures. A reader (or a
crash) never sees half a file, and nothing a user made is lost to one."""

from __future__ import annotations

import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import cv2
import numpy as np

from agent.errors import AgentError


def write_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write `data` to a temporary file beside `path`, flush it to disk, then rename it
    over `path`. Raises OSError; the temporary file never stays behind."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; these files are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)
    return path


@contextmanager
def folder_locked(directory: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive lock on `directory` (made if missing) while the body reads,
    changes and writes a file in it: writers that read, change and write the same file at
    once (two `agent screens add` on one profile, a run saving what it learned) take
    turns, each re-reading what the one before wrote. The lock is the folder's own (flock
    on it), so no lock file is left behind, and it goes with the process that held it."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # (closing lets the lock go)


def inside_folder(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> bool:
    """Whether `path`, its symlinks followed, lies inside `folder` (a path named by an
    untrusted file: a recording, a journal)."""
    try:
        return Path(path).resolve().is_relative_to(Path(folder).resolve())
    except (OSError, RuntimeError, ValueError):
        return False


def _fsync_dir(directory: Path) -> None:
    # makes the rename itself durable; not possible on every platform, and only a nicety
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def save_png(image: np.ndarray, path: str | os.PathLike[str]) -> Path:
    """Write a picture as PNG, atomically; errors say what went wrong and how to fix it."""
    path = Path(path)
    if path.suffix.lower() != ".png":
        raise AgentError(f"{path} should end in .png: pictures are saved as PNG", hint="give a file name ending in .png")
    ok, data = cv2.imencode(".png", image)
    if not ok:  # pragma: no cover - cv2 encodes any uint8 image
        raise AgentError(f"could not encode {path} as PNG")
    try:
        return write_atomic(path, data.tobytes())
    except OSError as exc:
        raise AgentError(f"could not write {path}: {exc.strerror or exc}",
                         hint="check that the folder exists and is writable") from None


def writable_dir_problem(path: str | os.PathLike[str]) -> str | None:
    """Why files cannot be written into the folder `path` (made if missing), or None.
    Checked by writing a scratch file, since permission bits lie to root and to
    read-only or virtual file systems (/proc)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        return f"{path} is a file, not a folder"
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path, prefix=".write-check.", suffix=".tmp")
    except OSError as exc:
        return f"cannot write into {path}: {exc.strerror or exc}"
    os.close(fd)
    Path(tmp).unlink(missing_ok=True)
    return None


def writable_file_problem(path: str | os.PathLike[str], suffix: str | None = None) -> str | None:
    """Why the file `path` cannot be written (its folder is made if missing), or None."""
    path = Path(path)
    if suffix is not None and path.suffix.lower() != suffix:
        return f"{path} should end in {suffix}"
    if path.is_dir():
        return f"{path} is a folder, not a file"
    return writable_dir_problem(path.parent if str(path.parent) else Path("."))


class InputProblem(Exception):
    """Why a file cannot be read as input; each reader names it in its own error (a
    profile, an image, a board), so this one carries only what went wrong."""

    def __init__(self, kind: str, detail: str = "", size: int | None = None) -> None:
        super().__init__(kind)
        self.kind = kind  # "missing", "folder", "special", "too big" or "unreadable"
        self.detail = detail  # the system's reason, for "unreadable"
        self.size = size  # the file's size in bytes, for "too big" when it is known


def read_capped(path: Path, limit: int, regular_only: bool = False) -> bytes:
    """At most `limit` bytes of `path`, refusing before reading what cannot be an input:
    a folder, a file bigger than `limit`, and with `regular_only` a pipe or device
    (reading one could block forever). Otherwise a pipe is read too, up to the limit:
    `--image <(adb exec-out screencap -p)`. Raises InputProblem."""
    try:
        st = path.stat()
        if stat.S_ISDIR(st.st_mode):
            raise InputProblem("folder")
        if not stat.S_ISREG(st.st_mode) and regular_only:
            raise InputProblem("special")
        if stat.S_ISREG(st.st_mode) and st.st_size > limit:
            raise InputProblem("too big", size=st.st_size)
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except FileNotFoundError:
        raise InputProblem("missing") from None
    except OSError as exc:
        raise InputProblem("unreadable", exc.strerror or str(exc)) from None
    if len(data) > limit:
        raise InputProblem("too big")
    return data
