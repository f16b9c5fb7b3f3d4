"""Cause 5: an output path that cannot be written is a usage error (exit 2) naming the
option and the path, found before any work starts (no phone started, nothing played)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redteam import agent, assert_handled

# Each makes, under tmp, a path that cannot take files, and names what is wrong with it.
BAD_DIRS = {
    "virtual fs": lambda tmp: Path("/proc/puzzle-agent-nope"),
    "is a file": lambda tmp: _file(tmp / "afile"),
    "under a file": lambda tmp: _file(tmp / "afile") / "sub",
}


def _file(path: Path) -> Path:
    path.write_text("not a folder")
    return path


def _shot(tmp: Path) -> Path:
    r = agent("sim", "screenshot", str(tmp / "shot.png"), cwd=tmp)
    assert r.code == 0, r.describe()
    return tmp / "shot.png"


def _board(tmp: Path) -> Path:
    (tmp / "board.txt").write_text("ABCDEFGH\n" * 2 + "BCDEFGHA\n" * 2 + "CDEFGHAB\n" * 2 + "DEFGHABC\n" * 2)
    return tmp / "board.txt"


DIR_CASES = [
    ("play --runs", lambda tmp, bad: ("play", "--sim", "--moves", "2", "--runs", str(bad)), "--runs"),
    ("play --profiles", lambda tmp, bad: ("play", "--sim", "--moves", "2", "--profiles", str(bad)), "--profiles"),
    ("farm --runs", lambda tmp, bad: ("farm", "--sim", "1", "--moves", "2", "--runs", str(bad)), "--runs"),
    ("farm --profiles", lambda tmp, bad: ("farm", "--sim", "1", "--moves", "2", "--profiles", str(bad)), "--profiles"),
    ("calibrate --profiles", lambda tmp, bad: ("calibrate", "--sim", "--yes", "--profiles", str(bad)), "--profiles"),
    ("sim serve --profiles", lambda tmp, bad: ("sim", "serve", "--port", "1", "--profiles", str(bad)), "--profiles"),
]


@pytest.mark.parametrize("bad_kind", list(BAD_DIRS))
@pytest.mark.parametrize("case", DIR_CASES, ids=[c[0] for c in DIR_CASES])
def test_unwritable_folder(tmp_path, case, bad_kind):
    _, make_args, option = case
    bad = BAD_DIRS[bad_kind](tmp_path)
    r = agent(*make_args(tmp_path, bad), cwd=tmp_path, timeout=60)
    assert_handled(r, 2, says=(option, str(bad)))
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir()), "a run started anyway"


BAD_FILES = {
    "virtual fs": lambda tmp: Path("/proc/puzzle-agent-nope/out.png"),
    "is a folder": lambda tmp: _folder(tmp / "out.png"),
    "under a file": lambda tmp: _file(tmp / "afile") / "out.png",
}


def _folder(path: Path) -> Path:
    path.mkdir()
    return path


FILE_CASES = [
    ("sim screenshot", lambda tmp, bad: ("sim", "screenshot", str(bad)), "OUT"),
    ("calibrate --overlay", lambda tmp, bad: ("calibrate", "--sim", "--yes", "--overlay", str(bad)), "--overlay"),
    ("read --overlay", lambda tmp, bad: ("read", "--image", str(_shot(tmp)), "--overlay", str(bad)), "--overlay"),
    ("solve --png", lambda tmp, bad: ("solve", "--board", str(_board(tmp)), "--png", str(bad)), "--png"),
    ("bench lines --png", lambda tmp, bad: ("bench", "lines", "--games", "1", "--png", str(bad)), "--png"),
    ("plans build --out", lambda tmp, bad: ("plans", "build", "--out", str(bad.with_suffix(".json"))), "--out"),
]


@pytest.mark.parametrize("bad_kind", list(BAD_FILES))
@pytest.mark.parametrize("case", FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_unwritable_file(tmp_path, case, bad_kind):
    _, make_args, option = case
    bad = BAD_FILES[bad_kind](tmp_path)
    if case[0] == "plans build --out" and bad_kind == "is a folder":
        bad = _folder(tmp_path / "lib.json")
    args = make_args(tmp_path, bad)
    r = agent(*args, cwd=tmp_path, timeout=60)
    assert_handled(r, 2, says=option)


@pytest.mark.parametrize("option,value", [("--png", "out.jpg"), ("OUT", "out.bmp")])
def test_a_picture_that_is_not_png_is_named(tmp_path, option, value):
    args = ("solve", "--board", str(_board(tmp_path)), "--png", value) if option == "--png" else ("sim", "screenshot", value)
    r = agent(*args, cwd=tmp_path, timeout=60)
    assert_handled(r, 2, says=(option, value))


def test_a_missing_output_folder_is_made(tmp_path):
    """Not an error: the folder a file goes in is made, as the runs folder is."""
    out = tmp_path / "new" / "deeper" / "shot.png"
    r = agent("sim", "screenshot", str(out), cwd=tmp_path, timeout=60)
    assert_handled(r, 0)
    assert out.stat().st_size > 0
    runs = tmp_path / "fresh" / "runs"
    r = agent("play", "--sim", "--moves", "1", "--json", "--runs", str(runs), cwd=tmp_path, timeout=120)
    assert_handled(r, 0)
    assert json.loads(r.out.splitlines()[-1])["moves"] == 1
