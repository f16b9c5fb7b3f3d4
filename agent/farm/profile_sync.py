"""The device profiles of a farm on Ray: the driver's `--profiles` folder goes to each
phone's node with its run, and what the run learned or calibrated comes back to it.

A node then needs only the package, not a copy of the profiles at the driver's path:
each run plays from a folder of its node's own (`<node dir>/<run>/profiles`), filled
from the driver's files the first time (a retry on the node goes on with what the
node's runs learned since), and hands back, when it ends, every profile that differs
from what it was given; the driver keeps those, atomically, as a local farm's workers
write theirs.
"""

from __future__ import annotations

from pathlib import Path

from agent.files import write_atomic

MOST_BYTES = 4 * 1024 * 1024  # a folder of profiles is a few KB a phone: more is not profiles


def _safe(name: str) -> bool:
    return Path(name).name == name and not name.startswith(".") and name.endswith(".toml")


def profile_files(folder: Path, most_bytes: int = MOST_BYTES) -> tuple[dict[str, bytes], list[str]]:
    """The profiles in `folder` (its *.toml files) and the names of those left out (past
    `most_bytes` in all, or unreadable)."""
    files: dict[str, bytes] = {}
    left: list[str] = []
    size = 0
    if not folder.is_dir():
        return files, left
    for p in sorted(folder.glob("*.toml")):
        if not _safe(p.name) or not p.is_file():
            continue
        try:
            body = p.read_bytes()
        except OSError:
            left.append(p.name)
            continue
        if size + len(body) > most_bytes:
            left.append(p.name)
            continue
        files[p.name] = body
        size += len(body)
    return files, left


def seed_profiles(folder: Path, files: dict[str, bytes]) -> None:
    """On the node: the driver's profiles, where the node's runs have none of their own yet."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in files.items():
        if _safe(name) and not (folder / name).exists():
            write_atomic(folder / name, body)


def changed_profiles(folder: Path, given: dict[str, bytes]) -> dict[str, bytes]:
    """On the node, as a run ends: the profiles that differ from what it was given."""
    mine, _ = profile_files(folder)
    return {name: body for name, body in mine.items() if given.get(name) != body}


def keep_profiles(folder: Path, files: dict[str, bytes]) -> list[str]:
    """On the driver: the profiles a run handed back, where they differ from its own; the
    names written."""
    written = []
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in sorted(files.items()):
        if not _safe(name):
            continue  # a name that would leave the folder, or not a profile: never written
        path = folder / name
        try:
            if path.is_file() and path.read_bytes() == body:
                continue
        except OSError:
            pass
        write_atomic(path, body)
        written.append(name)
    return written
