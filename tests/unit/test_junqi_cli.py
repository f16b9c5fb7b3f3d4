"""`agent solve --game junqi`: JSON fields, the unreachable exit code, --png, and clear
errors for bad input, through the real entry point."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import cv2
import numpy as np
import pytest

from agent.cli.solve import solve_request
from agent.errors import UsageError
from agent.games.base import SolveRequest
from agent.games.junqi.render import ROUTE
from agent.games.junqi.solve import UNREACHABLE_EXIT_CODE, JunqiSolver

# A red engineer at 1,0, an own company at 3,0, a blue face-down piece in the camp 3,2,
# a blue brigade at 5,3, the blue flag in its headquarters 0,1.
BOARD = """\
# test position
.f...
E....
.....
C.x..
.....
...b.
.....
.....
.....
.....
.....
.....
"""


@pytest.fixture
def board_file(tmp_path):
    path = tmp_path / "board.txt"
    path.write_text(BOARD, encoding="utf-8")
    return path


@pytest.fixture
def agent(monkeypatch, capsys):
    """Run `agent ARGS...` in this process; returns (exit code, stdout, stderr)."""
    from agent.cli import main

    def run(*args: str, stdin: str | None = None):
        monkeypatch.setattr(sys, "argv", ["agent", *args])
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        with pytest.raises(SystemExit) as exc:
            main()
        out = capsys.readouterr()
        return exc.value.code or 0, out.out, out.err

    return run


def test_route_as_json(agent, board_file):
    code, out, _ = agent("solve", "--game", "junqi", "--board", str(board_file), "--from", "1,0", "--to", "5,3", "--json")
    assert code == 0
    r = json.loads(out)
    assert r["reachable"] is True and r["attack"] is True and r["by"] == "rail"
    # Column 0 is blocked by the own company: along row 1, down column 4, one step west.
    assert r["route"] == [[1, 0], [1, 1], [1, 2], [1, 3], [1, 4], [2, 4], [3, 4], [4, 4], [5, 4], [5, 3]]
    assert r["steps"] == 9
    assert r["piece"] == {"side": "red", "kind": "engineer", "char": "E"}
    assert (r["from"], r["to"], r["topology"], r["variant"]) == ([1, 0], [5, 3], "standard", "straight")


def test_the_route_goes_around_the_own_piece(agent, board_file):
    code, out, _ = agent("solve", "--game", "junqi", "--board", str(board_file), "--from", "1,0", "--to", "10,0", "--json")
    r = json.loads(out)
    assert code == 0 and [3, 0] not in r["route"] and [5, 3] not in r["route"]
    assert r["steps"] == len(r["route"]) - 1 == 17


def test_unreachable_is_an_answer_with_a_reason(agent, board_file):
    code, out, _ = agent("solve", "--game", "junqi", "--board", str(board_file), "--from", "1,0", "--to", "3,2")
    assert code == UNREACHABLE_EXIT_CODE == 0
    assert out.startswith("unreachable") and "camp" in out
    code, out, _ = agent("solve", "--game", "junqi", "--board", str(board_file), "--from", "0,1", "--to", "1,1", "--json")
    r = json.loads(out)
    assert code == UNREACHABLE_EXIT_CODE
    assert r["reachable"] is False and r["route"] is None and r["reason"] == "a flag never moves"


def test_all_destinations_without_to(agent, board_file):
    code, out, _ = agent("solve", "--game", "junqi", "--board", str(board_file), "--from", "3,0", "--json")
    r = json.loads(out)
    assert code == 0 and r["reason"] is None
    got = {tuple(d["to"]) for d in r["destinations"]}
    assert got == {(2, 0), (3, 1), (4, 0), (4, 1), (5, 0), (6, 0), (7, 0), (8, 0), (9, 0), (10, 0), (2, 1)}
    code, out, _ = agent("solve", "--game", "junqi", "--board", str(board_file), "--from", "3,0")
    assert code == 0 and "11 destinations" in out and "10,0" in out


def test_no_moves_is_an_answer_not_an_error(agent, board_file):
    code, out, _ = agent("solve", "--game", "junqi", "--board", str(board_file), "--from", "0,1")
    assert code == 0 and "no legal moves" in out and "flag never moves" in out


def test_board_from_stdin(agent):
    code, out, _ = agent("solve", "--game", "junqi", "--board", "-", "--from", "1,0", "--to", "2,0", "--json", stdin=BOARD)
    assert code == 0 and json.loads(out)["steps"] == 1


def route_pixels(path) -> int:
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    assert img is not None, f"{path} is not a readable PNG"
    return int(np.all(img == np.array(ROUTE, np.uint8), axis=2).sum())


def test_png_draws_the_route(agent, board_file, tmp_path):
    out_png = tmp_path / "out" / "route.png"
    code, out, _ = agent("solve", "--game", "junqi", "--board", str(board_file), "--from", "1,0", "--to", "10,0", "--png", str(out_png))
    assert code == 0 and f"wrote {out_png}" in out.replace("\n", "")
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert route_pixels(out_png) > 500
    none_png = tmp_path / "none.png"
    code, out, _ = agent("solve", "--game", "junqi", "--board", str(board_file), "--from", "1,0", "--to", "3,2", "--png", str(none_png), "--json")
    assert code == UNREACHABLE_EXIT_CODE and json.loads(out)["png"] == str(none_png)
    assert route_pixels(none_png) == 0  # the board, without a route
    assert not list(tmp_path.glob("**/*.tmp"))


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["--from", "12,0"], 2, "12,0 is off the board: rows 0-11"),
        (["--from", "one"], 2, "is not ROW,COL"),
        (["--from", "1,0", "--to", "1,0"], 2, "own station"),
        (["--from", "1,0", "--objective", "score"], 2, "junqi does not use --objective"),
        (["--from", "1,0", "--puzzle", "turtle"], 2, "junqi does not use --puzzle"),
        (["--from", "1,0", "--top", "3"], 2, "junqi does not use --top"),
        (["--from", "1,0", "--png", "out.jpg"], 2, "should end in .png"),
        ([], 2, "junqi needs the piece to move"),
        (["--from", "2,2"], 1, "there is no piece at 2,2"),
        (["--from", "3,2"], 1, "face-down"),
    ],
)
def test_bad_input_is_a_clear_error(agent, board_file, args, code, message):
    got, out, err = agent("solve", "--game", "junqi", "--board", str(board_file), *args)
    text = " ".join((out + err).replace("│", " ").split())  # unwrap rich's error panel
    assert got == code, text
    assert message in text, text
    assert "Traceback" not in text


def test_bad_board_files(agent, tmp_path):
    code, _, err = agent("solve", "--game", "junqi", "--board", str(tmp_path / "missing.txt"), "--from", "1,0")
    assert code == 1 and "no board file" in err
    bad = tmp_path / "bad.txt"
    bad.write_text(BOARD.replace("E....", "E..?."), encoding="utf-8")
    code, _, err = agent("solve", "--game", "junqi", "--board", str(bad), "--from", "1,0")
    assert code == 1 and "line 3 (row 1, column 3): '?'" in err and "fix:" in err and "UPPERCASE is red" in err


def solve(**values):
    """The junqi solver on `values` (as SolveRequest.values), for JSON: its one record."""
    report = JunqiSolver().solve(SolveRequest(values=values, png=None, as_json=True))
    (record,) = report.records
    return json.loads(json.dumps(record))  # as `--json` prints it


def test_options_of_other_games_are_refused_by_solve():
    # Options agent solve may grow for other games are refused too, unless left unset.
    options = JunqiSolver().options
    with pytest.raises(UsageError, match="junqi does not use --seed"):
        solve_request("junqi", options, {"board": BOARD, "start": "1,0", "seed": 3}, None, False)
    request = solve_request("junqi", options, {"board": BOARD, "start": "1,0", "seed": None}, None, False)
    assert dict(request.values) == {"board": BOARD, "start": "1,0", "to": None}
    with pytest.raises(UsageError, match="'diagonal' is not one of straight, curved"):
        solve(board=BOARD, start="1,0", variant="diagonal")


def test_curved_corners_through_solve():
    # `agent solve` has no --variant yet; the solver takes it for when it does.
    rows = ["....."] * 12
    rows[2] = "C...."  # a red company at 2,0, below the corner 1,0
    board = "\n".join(rows)
    r = solve(board=board, start="2,0", to="1,2", variant="curved")
    assert r["reachable"] and r["route"] == [[2, 0], [1, 0], [1, 1], [1, 2]] and r["variant"] == "curved"
    r = solve(board=board, start="2,0", to="1,2")  # straight corners: no turning
    assert not r["reachable"] and r["variant"] == "straight" and "only engineers turn" in r["reason"]


def test_end_to_end_without_a_traceback(board_file):
    r = subprocess.run(
        [sys.executable, "-m", "agent.cli", "solve", "--game", "junqi", "--board", str(board_file), "--from", "9,9"],
        capture_output=True, text=True, timeout=120,
    )
    assert r.returncode == 2 and "off the board" in r.stderr and "Traceback" not in r.stderr
