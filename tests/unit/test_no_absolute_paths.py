"""No file of the repository names a path of the machine it was made on (a build
machine's home or work folder): shared data is found relative to the repository, and
recordings name their files relative to their run folder."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# a machine's own folders: a work folder, a user's home (Linux, macOS) or root's
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|home|Users|root|tmp)/[\w.-]+")


def _tracked() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        pytest.skip("not a git checkout (the files a commit holds are listed by git)")
    return [ROOT / name for name in out.decode().split("\0") if name]


def test_no_tracked_file_names_a_path_of_the_build_machine():
    found = []
    for path in _tracked():
        if not path.is_file() or path.suffix in (".png", ".jpg", ".gz", ".npz", ".bin") or path.stat().st_size > 5_000_000:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if MACHINE_PATH.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert not found, "absolute paths of a machine in the repository:\n" + "\n".join(found)
