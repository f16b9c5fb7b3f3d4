"""Cause 4 (plan library): a bad plan library, named by PUZZLE_AGENT_PLANS, for every
command that reads it.

Each bad shape of the file or of one record is an error naming the file (exit 1, `error:`
and `fix:`), never a traceback; `agent plans verify` (the command meant to check a
library) reports it as a failure with the reason; `agent play` leaves no journal with only
its start line. A PUZZLE_AGENT_PLANS naming no file is an error naming the variable, not
quietly replaced by a library built in memory.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redteam import agent, assert_handled, assert_intact, journals

COMMANDS = {
    "solve": ("solve", "--board", "board.txt"),
    "play": ("play", "--sim", "--moves", "2"),
    "verify": ("plans", "verify"),
    "stats": ("plans", "stats"),
}
BOARD = "ABCABC\nBCABCA\nCABCAB\nABBABC\nBCABCA\nCABCAB\n"


@pytest.fixture(scope="module")
def good() -> dict:
    """A small library that verifies: the committed library's first 300 plans."""
    from agent.games.match3.plan_library import DEFAULT_LIBRARY, PlanLibrary, library_header, load_library

    committed = load_library(DEFAULT_LIBRARY)
    plans = [committed.plan(i) for i in range(300)]
    return json.loads(PlanLibrary.from_plans(library_header(plans, "test", "test"), plans).to_json())


def with_record(good: dict, record: object) -> str:
    doc = dict(good)
    doc["plans"] = [*good["plans"], record]
    return json.dumps(doc)


def with_header(good: dict, **changes: object) -> str:
    doc = {**good, **changes}
    return json.dumps({k: v for k, v in doc.items() if v is not None})


# (the text of the file, or bytes) from the good library
BAD = {
    # one bad record among good ones
    "short record": lambda g: with_record(g, [3, "1101", "1110"]),
    "long record": lambda g: with_record(g, [3, "1101", "1110", "0,3,Left", "extra"]),
    "null record": lambda g: with_record(g, None),
    "record an object": lambda g: with_record(g, {"count": 3}),
    "record a string": lambda g: with_record(g, "3,1101,1110,0,3,Left"),
    "null field": lambda g: with_record(g, [3, None, "1110", "0,3,Left"]),
    "count a string": lambda g: with_record(g, ["3", "1101", "1110", "0,3,Left"]),
    "count a float": lambda g: with_record(g, [3.0, "1101", "1110", "0,3,Left"]),
    "count true": lambda g: with_record(g, [True, "1101", "1110", "0,3,Left"]),
    "count huge": lambda g: with_record(g, [10**30, "1101", "1110", "0,3,Left"]),
    "count zero": lambda g: with_record(g, [0, "1101", "1110", "0,3,Left"]),
    "target a number": lambda g: with_record(g, [3, 1101, "1110", "0,3,Left"]),
    "target empty": lambda g: with_record(g, [3, "", "", "0,3,Left"]),
    "target not binary": lambda g: with_record(g, [3, "12x1", "1110", "0,3,Left"]),
    "rows of two widths": lambda g: with_record(g, [3, "11/1/111", "11/1/111", "0,0,Down"]),
    "final of another shape": lambda g: with_record(g, [3, "1101", "11/10", "0,3,Left"]),
    "window too big": lambda g: with_record(g, [3, "1" * 60, "1" * 60, "0,0,Right"]),
    "steps a list": lambda g: with_record(g, [3, "1101", "1110", ["0,3,Left"]]),
    "steps empty": lambda g: with_record(g, [3, "1101", "1110", ""]),
    "unknown direction": lambda g: with_record(g, [3, "1101", "1110", "0,3,Sideways"]),
    "step not numbers": lambda g: with_record(g, [3, "1101", "1110", "a,b,Left"]),
    "step outside the window": lambda g: with_record(g, [3, "1101", "1110", "0,9,Left"]),
    "step moving off the window": lambda g: with_record(g, [3, "1101", "1110", "0,3,Right"]),
    "negative step": lambda g: with_record(g, [3, "1101", "1110", "-1,3,Down"]),
    # the file as a whole
    "no plans": lambda g: with_header(g, plans=[]),
    "plans not a list": lambda g: with_header(g, plans={"a": 1}),
    "another format": lambda g: with_header(g, format=2),
    "other fields": lambda g: with_header(g, fields=["a", "b"]),
    "not an object": lambda g: json.dumps(g["plans"]),
    "nested arrays": lambda g: "[" * 100_000 + "]" * 100_000,
    "nested objects": lambda g: '{"a": ' * 50_000 + "1" + "}" * 50_000,
    "huge integer": lambda g: with_record(g, [3, "1101", "1110", "0,3,Left"])[:-2] + ", " + "9" * 5000 + "]}",
    "truncated": lambda g: json.dumps(g)[: len(json.dumps(g)) // 2],
    "non-UTF-8": lambda g: with_record(g, [3, "1101", "1110", "0,3,Left"]).encode() + b"\xff\xfe",
    "binary junk": lambda g: bytes(range(256)) * 16,
    "empty": lambda g: b"",
    "a folder": None,
}


def write_library(tmp_path: Path, variant: str, good: dict) -> Path:
    path = tmp_path / "plans.json"
    make = BAD[variant]
    if make is None:
        path.mkdir()
        return path
    content = make(good)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def run(tmp_path: Path, command: str, plans: Path):
    (tmp_path / "board.txt").write_text(BOARD)
    return agent(*COMMANDS[command], cwd=tmp_path, env={"PUZZLE_AGENT_PLANS": str(plans)}, timeout=120)


def assert_no_bare_journal(tmp_path: Path) -> None:
    """The library is read before the run starts: no run folder is left behind (and
    were there one, every journal in it would end with a stop line)."""
    runs = tmp_path / "runs"
    if journals(runs):
        assert_intact(runs)
    assert not runs.exists() or not any(runs.iterdir()), f"a run folder was left: {list(runs.iterdir())}"


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("variant", list(BAD))
def test_a_bad_library_is_an_error_naming_the_file(tmp_path, variant, command, good):
    path = write_library(tmp_path, variant, good)
    r = run(tmp_path, command, path)
    assert_handled(r, 1, says=str(path))
    if command == "play":
        assert_no_bare_journal(tmp_path)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_missing_library_named_by_the_variable_is_an_error(tmp_path, command):
    missing = tmp_path / "nowhere" / "plans.json"
    r = run(tmp_path, command, missing)
    assert_handled(r, 1, says=("PUZZLE_AGENT_PLANS", str(missing)))
    assert not missing.exists()
    if command == "play":
        assert_no_bare_journal(tmp_path)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_good_small_library_works(tmp_path, command, good):
    """The control: the same commands with the good library succeed."""
    path = tmp_path / "plans.json"
    path.write_text(json.dumps(good))
    (tmp_path / "plans-faithful.json").write_text(json.dumps(good))  # what `plans stats` compares with
    r = run(tmp_path, command, path)
    assert_handled(r, 0)
    if command == "play":
        assert_intact(tmp_path / "runs")
    if command == "verify":
        assert "300 plans verified" in r.out
