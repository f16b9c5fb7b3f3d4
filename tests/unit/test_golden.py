"""Golden positions with their expected answers (tests/data/golden/solve.jsonl), solved
through each game's `Solver`, as `agent solve` does. A change in any answer is a change
in a solver's behaviour: look at it, and regenerate the file only when it is meant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.games.base import SolveRequest
from agent.games.registry import get_game

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "golden" / "solve.jsonl"
CASES = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['game']}-{i}" for i, c in enumerate(CASES)])
def test_golden_position(case, monkeypatch):
    monkeypatch.chdir(ROOT)  # board files are named relative to the repository
    game = get_game(case["game"])
    assert game.solver is not None
    report = game.solver.solve(SolveRequest(case["values"], None, True))
    assert report.exit_code == case["exit_code"]
    assert json.loads(json.dumps(list(report.records))) == case["records"]


def test_the_golden_file_covers_every_game_with_a_solver():
    from agent.games.registry import solvable

    assert {c["game"] for c in CASES} == set(solvable())


def test_golden_lights_out_presses_do_turn_every_light_off():
    """Independent of the solver: pressing the answer's buttons on the board clears it."""
    from agent.games.lightsout.puzzle import lights_out

    case = next(c for c in CASES if c["game"] == "lightsout" and c["values"].get("board", "").startswith("01000"))
    rows = case["values"]["board"].split("/")
    puzzle = lights_out(len(rows), len(rows[0]))
    state = sum(1 << (r * len(rows[0]) + c) for r, row in enumerate(rows) for c, v in enumerate(row) if v == "1")
    for r, c in case["records"][0]["presses"]:
        state = puzzle.press(state, r * len(rows[0]) + c)
    assert state == puzzle.goal and len(case["records"][0]["presses"]) == case["records"][0]["min_presses"]
