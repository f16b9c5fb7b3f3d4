"""`agent solve --game lightsout`, puzzle files, bad input, and `agent bench lightsout`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import cv2
import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.games.lightsout.gf2 import from_bits
from agent.games.lightsout.puzzle import (
    TURTLE_ACTIONS, PuzzleError, builtin, lights_out, load_puzzle, parse_state, turtle,
)  # fmt: skip
from agent.games.lightsout.solver import solver_for

runner = CliRunner()
PUZZLES = Path(__file__).resolve().parents[2] / "agent" / "games" / "lightsout" / "puzzles"
SHARED = Path(__file__).resolve().parents[3] / "shared"


def solve_json(*args: str, input: str | None = None) -> dict:
    r = runner.invoke(app, ["solve", "--game", "lightsout", *args, "--json"], input=input)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def agent(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent.cli", *args], capture_output=True, text=True, timeout=120,
        env=dict(os.environ), cwd=cwd,
    )  # fmt: skip


# -- the seed's puzzle ----------------------------------------------------------------------


def test_turtle_actions_are_the_seeds():
    seeds = sorted((SHARED / "seeds").glob("004_*.txt")) if SHARED.is_dir() else []
    if not seeds:
        pytest.skip(f"the seed article 004 is not in {SHARED / 'seeds'} (the project's shared/ folder)")
    text = seeds[0].read_text(encoding="utf-8")
    # the seed gives the table twice: as index lists and as bit masks (GameState3)
    lists = re.search(r"actions=\{(.*?)\};", text, re.S).group(1)
    as_lists = [tuple(int(v) for v in m.split(",")) for m in re.findall(r"\{([\d,]+)\}", lists)]
    masks = [int(m, 2) for m in re.findall(r"0b([01]+),//\{", text)]
    assert as_lists == list(TURTLE_ACTIONS)
    assert masks == [from_bits(a) for a in TURTLE_ACTIONS] == list(turtle().actions)
    assert "state = 0b11111111" in text and "goalState = 0b00000010" in text
    assert (turtle().start, turtle().goal) == (0b11111111, 0b00000010)


# -- solve --------------------------------------------------------------------------------------


def test_solve_turtle_json():
    out = solve_json("--puzzle", "turtle")
    assert out["solvable"] is True and out["solutions"] == 2 and out["min_presses"] == 3
    assert out["presses"] == [0, 2, 7]  # button indexes: the turtle is not a grid of lights
    assert sorted(map(sorted, out["all_solutions"])) == [[0, 1, 2, 3, 4, 5], [0, 2, 7]]
    out = solve_json("--puzzle", "turtle", "--board", "01000000")  # already the goal
    assert out["presses"] == [] and out["min_presses"] == 0 and out["solutions"] == 2


def test_solve_lightsout_presses_are_cells_and_work():
    board = "01000\n11100\n01000\n00001\n00011"  # (1, 1) and (4, 4) pressed
    out = solve_json("--board", board)
    assert out["solvable"] and out["solutions"] == 4 and out["rank"] == 23 and out["nullity"] == 2
    p = lights_out(5)
    state = parse_state(board, p)
    presses = from_bits(r * 5 + c for r, c in out["presses"])
    assert p.apply(state, presses) == 0 and len(out["presses"]) == out["min_presses"] == 2
    assert all(p.apply(state, from_bits(r * 5 + c for r, c in sol)) == 0 for sol in out["all_solutions"])
    assert out["min_presses"] == min(len(s) for s in out["all_solutions"])


def test_solve_reads_the_board_from_a_file_and_stdin(tmp_path):
    f = tmp_path / "b.txt"
    f.write_text("1 1 0\n1 0 0\n0 0 0\n")  # spaces are allowed
    a = solve_json("--board", str(f))
    b = solve_json("--board", "-", input="110/100/000")
    assert a == b and a["puzzle"] == "lightsout 3x3" and a["solutions"] == 1


def test_solve_unsolvable_says_which_lights():
    out = solve_json("--board", "10000/00000/00000/00000/00000")
    assert out["solvable"] is False and out["presses"] is None and out["solutions"] == 0
    assert out["min_presses"] is None and [0, 0] in out["unreachable"]
    assert "parity" in out["reason"]
    r = runner.invoke(app, ["solve", "--game", "lightsout", "--board", "10000/00000/00000/00000/00000"])
    assert r.exit_code == 0 and "unsolvable" in r.stdout


def test_solve_torus_and_sizes():
    out = solve_json("--puzzle", "torus", "--rows", "3", "--cols", "4", "--board", "100010001000")
    assert out["puzzle"] == "torus 3x4" and out["solvable"]
    s = solver_for(builtin("torus", 3, 4))
    assert out["solutions"] == 1 << s.nullity


def test_solve_puzzle_files(tmp_path):
    out = solve_json("--puzzle", str(PUZZLES / "turtle.toml"))
    assert out["presses"] == [0, 2, 7] and out["solutions"] == 2
    out = solve_json("--puzzle", str(PUZZLES / "knight.toml"), "--rows", "3", "--cols", "3", "--board", "000/010/000")
    assert out["puzzle"] == "knight lights" and out["solvable"]


def test_solve_png(tmp_path):
    png = tmp_path / "out" / "sol.png"
    r = runner.invoke(app, ["solve", "--game", "lightsout", "--board", "110/100/000", "--png", str(png)])
    assert r.exit_code == 0, r.output
    img = cv2.imread(str(png))
    assert img is not None and img.shape[0] > img.shape[1]
    assert not list(png.parent.glob(".*.tmp"))  # written atomically: no leftovers


# -- puzzle files ---------------------------------------------------------------------------


def test_turtle_file_is_the_builtin_turtle():
    f = load_puzzle(PUZZLES / "turtle.toml")
    t = turtle()
    fields = ("actions", "start", "goal", "light_names", "button_grid")
    assert [getattr(f, k) for k in fields] == [getattr(t, k) for k in fields]


@pytest.mark.parametrize(
    "text, message",
    [
        ('lights = 3\nbuttons = [[0, 3]]', "buttons\\[0\\] must list light indexes in 0..2"),
        ('lights = 3\nbuttons = [[0, 0]]', "lists a light twice"),
        ('lights = 3\nbuttons = [[0]]\nstart = "11"', "has 2 lights but"),
        ('lights = 3\nbuttons = [[0]]\ncolour = "red"', "unknown key\\(s\\) colour"),
        ('rows = 2\ncols = 2\nstencil = [[0, 0]]\nbuttons = [[0]]', "either buttons"),
        ('rows = 2\ncols = 2\nstencil = [[0]]', "stencil must be a list of \\[drow, dcol\\]"),
        ('rows = 0\ncols = 2\nstencil = [[0, 0]]', "rows must be an integer in 1.."),
        ('lights = 3\nbuttons = [[0]]\nstart = "1a1"', "'a' at row 0, column 1"),
        ("lights = [", "not a TOML puzzle file"),
    ],
)
def test_bad_puzzle_files_are_named(tmp_path, text, message):
    f = tmp_path / "p.toml"
    f.write_text(text)
    with pytest.raises(PuzzleError, match=message):
        load_puzzle(f)


# -- bad input through the real entry point --------------------------------------------------


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["--board", "10a01/00000"], 1, "neither an existing file nor board text"),
        (["--board", "1000/0000/000"], 1, "rows have different lengths"),
        (["--rows", "4", "--board", "10000/00000/00000/00000/00000"], 1, "is 4x4"),
        (["--puzzle", "turtle", "--board", "111"], 1, "has 3 lights but turtle has 8"),
        (["--puzzle", "turtle", "--rows", "3"], 1, "fixed shape"),
        (["--puzzle", "nosuch.toml", "--board", "1"], 1, "neither a built-in puzzle nor a file"),
        (["--puzzle", "lightsout"], 1, "has no start state"),
        (["--puzzle", "turtle", "--png", "t.png"], 1, "needs a grid puzzle"),
        (["--objective", "score", "--board", "1"], 2, "lightsout does not use --objective"),
        (["--from", "1,2", "--board", "1"], 2, "lightsout does not use --from"),
        (["--top", "3", "--board", "1"], 2, "lightsout does not use --top"),
    ],
)
def test_bad_input_is_a_clear_error_without_traceback(tmp_path, args, code, message):
    r = agent("solve", "--game", "lightsout", *args, cwd=tmp_path)
    err = " ".join((r.stderr + r.stdout).split())  # rich wraps long lines
    assert r.returncode == code, err
    assert message in err
    assert "Traceback" not in err
    if code == 1:
        assert "error:" in r.stderr and "fix:" in r.stderr


# -- bench ------------------------------------------------------------------------------------


def test_bench_runs_and_checks_its_answers():
    """The benchmark's plumbing on tiny batches (its figures are for people, not asserts)."""
    r = runner.invoke(
        app, ["bench", "lightsout", "--turtle", "2000", "--grid", "500", "--scalar", "50", "--repeat", "1", "--json"]
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    names = [f["name"] for f in out["figures"]]
    assert names[0].startswith("turtle") and names[1].startswith("5x5") and len(names) == 3
    assert out["figures"][0]["items"] == 2000 and out["figures"][1]["items"] == 500
    assert "turn start into goal" in out["figures"][0]["checked"]
    extra = out["figures"][1]["extra"]
    assert extra["nullity"] == 2 and extra["expected_solvable"] == 0.25
    r = runner.invoke(app, ["bench", "lightsout", "--turtle", "10", "--grid", "10", "--rows", "19", "--cols", "19"])
    assert r.exit_code == 2 and "2^16 solutions" in r.output
