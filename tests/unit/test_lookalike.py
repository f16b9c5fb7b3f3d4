"""Look-alike screens (agent.games.match3.lookalike) and `agent bench unseen`.

The generator must be a function of (family, seed): the same pair gives the same
screen and truth, another seed another screen. Its truth must be consistent with the
screen (the box inside it, grids of rows x cols, the labels each family promises) and
the families must vary the phone. Scoring must treat "#" like "." (only to itself).
The bench must run on a tiny set and report numbers that agree with each other, and
the clean family must calibrate grid-exact on seeds where it does today.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.games.match3.lookalike import FAMILIES, REFUSING, Truth, make_case
from agent.games.match3.unseen_bench import misread_cells
from agent.vision.calibrate import calibrate_frame
from agent.vision.scoring import CellScore, best_mapping, cell_score, iou

runner = CliRunner()
TILE = re.compile(r"^[A-H]$")


@pytest.mark.parametrize("family", FAMILIES)
def test_same_seed_same_screen_other_seed_other_screen(family):
    a, b, c = make_case(family, 5), make_case(family, 5), make_case(family, 6)
    assert a.truth == b.truth
    assert np.array_equal(a.frame, b.frame)
    assert a.truth != c.truth
    assert a.frame.shape != c.frame.shape or not np.array_equal(a.frame, c.frame)
    assert a.frame.shape == (a.truth.screen[1], a.truth.screen[0], 3) and a.frame.dtype == np.uint8


def _truths(family: str, n: int = 12) -> list[Truth]:
    return [make_case(family, s, draw=False).truth for s in range(n)]


@pytest.mark.parametrize("family", FAMILIES)
def test_truth_is_consistent(family):
    truths = _truths(family)
    assert len({t.screen for t in truths}) >= 2  # several phone sizes per family
    for t in truths:
        w, h = t.screen
        x0, y0, x1, y1 = t.bbox
        assert 0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h
        assert 6 <= t.rows <= 10 and 6 <= t.cols <= 10
        cell = (x1 - x0) / t.cols
        assert cell == (y1 - y0) / t.rows and cell == int(cell) and 40 <= cell <= 150
        assert 4 <= t.colours <= 7
        for grid in (t.kinds, t.looks):
            assert len(grid) == t.rows and all(len(r) == t.cols for r in grid)
        for kr, lr in zip(t.kinds, t.looks):
            for k, look in zip(kr, lr):
                assert TILE.match(k) or k in "*#.?", k
                # a look names its kind first: "A", "A/lit", "#crate", "*"; unscored in both or neither
                assert (k == "?") == (look == "?")
                assert look.startswith(k) or (k == "#" and look.startswith("#"))
                if TILE.match(k):
                    assert ord(k) - ord("A") < t.colours
        assert (t.refuse is not None) == (family in REFUSING)
        for r, c, showing in t.covered:
            assert t.kinds[r][c] == "?" and all(TILE.match(v) for v in showing)
        flat = [v for row in t.kinds for v in row]
        if family == "blockers":
            edges = [t.kinds[0], t.kinds[-1], [r[0] for r in t.kinds], [r[-1] for r in t.kinds]]
            assert any(all(v == "#" for v in e) for e in edges)
            assert len({v for row in t.looks for v in row if v.startswith("#")}) <= 2
        if family == "holes":
            assert "." in flat
            assert all(any(v != "." for v in row) for row in t.kinds)  # every row and column keeps a cell
            assert all(any(row[c] != "." for row in t.kinds) for c in range(t.cols))
        if family == "moving":
            assert t.covered
        if family == "clean":
            assert all(TILE.match(v) for v in flat)
        if family == "dialog":
            share = flat.count("?") / len(flat)
            assert 0.05 <= share <= 0.6


def test_live_screens_hold_specials_and_glow():
    looks = {v for t in _truths("live", 6) for row in t.looks for v in row}
    assert any(v.endswith("/lit") for v in looks)
    assert any("/" in v and not v.endswith("/lit") for v in looks)  # a special of a colour
    assert "*" in looks


def test_blockers_score_only_as_blockers():
    truth = [["R", "#", "G"], ["R", "#", "."]]
    assert cell_score([["A", "#", "B"], ["A", "#", "."]], truth) == CellScore(6, 6)
    # today's vision reads a blocker as one more class: it is never right
    assert cell_score([["A", "C", "B"], ["A", "C", "."]], truth) == CellScore(4, 6)
    # "#" read on a tile is wrong, whatever else maps
    assert cell_score([["#", "#", "B"], ["A", "#", "."]], truth) == CellScore(5, 6)
    assert best_mapping([["A", "C", "B"], ["A", "C", "."]], truth) == {"A": "R", "B": "G", ".": "."}
    # a colourless special is a class of its own
    assert cell_score([["A", "S"], ["A", "B"]], [["R", "*"], ["R", "G"]]) == CellScore(4, 4)
    assert cell_score([["A", "A"], ["A", "B"]], [["R", "*"], ["R", "G"]]) == CellScore(3, 4)


def test_misread_counts_only_colours_that_do_not_show():
    truth = Truth("moving", 0, (100, 100), (0, 0, 40, 40), 2, 2, (("A", "?"), ("B", "?")), (("A", "?"), ("B", "?")), None,
                  ((0, 1, ("A", "B")), (1, 1, ("B",))), 2)  # fmt: skip
    assert misread_cells([["X", "X"], ["Y", "Y"]], truth) == 0  # A over A/B, B over B
    assert misread_cells([["X", "?"], ["Y", "X"]], truth) == 1  # A where only B shows
    assert misread_cells([["X", "Z"], ["Y", "."]], truth) == 0  # a class of its own, an empty read


def test_bench_runs_on_a_tiny_set(tmp_path):
    r = runner.invoke(app, ["bench", "unseen", "--per-family", "1", "--family", "clean,dialog", "--family", "holes",
                            "--seed", "0", "--json", "--save", str(tmp_path)])  # fmt: skip
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    screens = out["screens"]
    assert [(s["family"], s["seed"]) for s in screens] == [("clean", 0), ("dialog", 0), ("holes", 0)]
    for s in screens:
        assert s["refusal_right"] == ((s["refused"] is not None) == (s["must_refuse"] is not None))
        truth = make_case(s["family"], s["seed"], draw=False).truth
        assert json.loads((tmp_path / f"{s['family']}-{s['seed']}.json").read_text()) == truth.as_dict()
        assert (tmp_path / f"{s['family']}-{s['seed']}.png").is_file()
        if s["grid"] is not None:
            assert (tmp_path / f"{s['family']}-{s['seed']}-overlay.png").is_file()
        if s["must_refuse"] is None and s["grid_exact"]:
            assert 0 <= s["cells_right"] <= s["cells_scored"] and s["cells_scored"] > 0
        elif s["must_refuse"] is None:
            assert s["cells_right"] == 0
        else:
            assert s["cells_right"] is None
    dialog = screens[1]
    assert dialog["must_refuse"]
    tot = out["totals"]
    assert tot["screens"] == 3 and tot["board_screens"] == 2
    assert tot["refusals_right"] == sum(s["refusal_right"] for s in screens)
    assert tot["grids_exact"] == sum(s["grid_exact"] for s in screens if s["must_refuse"] is None)
    assert tot["cells"]["right"] == sum(s["cells_right"] for s in screens if s["must_refuse"] is None)
    targets = {t["what"]: t for t in out["targets"]}
    assert targets["every dialog or dim screen refused"]["met"] == (dialog["refused"] is not None)
    assert targets["grid exact on every board screen"]["met"] == (tot["grids_exact"] == 2)


@pytest.mark.parametrize("args,named", [(["--family", "nope"], "--family"), (["--seed", "-1"], "--seed"),
                                       (["--per-family", "0"], "--per-family")])  # fmt: skip
def test_bad_options_are_usage_errors_naming_the_option(args, named):
    r = runner.invoke(app, ["bench", "unseen", *args])
    assert r.exit_code == 2 and named in r.output and "Traceback" not in r.output


def test_a_save_folder_that_cannot_be_written_is_refused_before_any_work(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = runner.invoke(app, ["bench", "unseen", "--family", "clean", "--per-family", "1", "--save", str(blocker / "out")])
    assert r.exit_code == 2 and "--save" in r.output


# seeds where calibration finds the clean board exactly today (the bench reports the rest)
@pytest.mark.parametrize("seed", [0, 2])
def test_clean_boards_calibrate_grid_exact(seed):
    case = make_case("clean", seed)
    cal = calibrate_frame(case.frame)
    assert (cal.board.rows, cal.board.cols) == (case.truth.rows, case.truth.cols)
    assert iou(cal.board.bbox, case.truth.bbox) >= 0.9
