"""Roles: what each class is to the game, told from the screen (agent.vision.roles).

Boards are drawn with the simulated phone's renderer: a board at rest (no three in a
line) of five colours, with one more look placed where a game puts obstacles (a whole
edge column, a mirror-symmetric pattern) or scattered at random as a tile would be.
"""

from __future__ import annotations

import itertools
import json

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.games.match3.board import UNKNOWN, Board
from agent.games.match3.game import Match3Screen
from agent.games.match3.hud import Hud
from agent.games.match3.reader import read_board
from agent.games.match3.render import layout_for, render_board
from agent.games.match3.rules import Match3Config, random_board
from agent.vision.calibrate import calibrate_frame, kind_labels
from agent.vision.roles import colour_name, in_runs, symmetric_share, symmetry_chance

runner = CliRunner()
HINTS = Match3Screen.role_hints
CRATE = 6  # the renderer's seventh look stands for an obstacle


def _frame(types: np.ndarray) -> np.ndarray:
    layout = layout_for(720, 1600, *types.shape)
    return render_board(layout, Board(types), Hud(steps=10, score=0))


def _rest(seed: int, rows: int = 8, cols: int = 8) -> np.ndarray:
    return random_board(Match3Config(rows=rows, cols=cols, n_types=5), np.random.default_rng(seed)).cells.copy()


def _roles_of(frame: np.ndarray, truth: np.ndarray, hints=HINTS) -> dict[int, set[str]]:
    """Per tile type drawn, the roles calibration gave its cells' classes."""
    cal = calibrate_frame(frame, hints=hints)
    out: dict[int, set[str]] = {}
    for r, row in enumerate(cal.labels):
        for c, label in enumerate(row):
            out.setdefault(int(truth[r, c]), set()).add(cal.profile.role_of(label))
    return out


# -- where a class lies ------------------------------------------------------------------------


def test_cells_in_runs():
    cells = {(0, 0), (0, 1), (0, 2), (1, 0), (2, 0), (5, 5), (5, 6)}
    assert in_runs(cells, 3) == {(0, 0), (0, 1), (0, 2), (1, 0), (2, 0)}
    assert in_runs(cells, 2) == cells
    assert in_runs(cells, 4) == set()


@pytest.mark.parametrize("rows,cols,k", [(3, 4, 2), (3, 3, 3), (4, 3, 4), (3, 5, 3)])
def test_the_share_of_symmetric_sets_is_counted_exactly(rows, cols, k):
    board = {(r, c) for r in range(rows) for c in range(cols)}
    mirror = {(r, c): (r, cols - 1 - c) for r, c in board}
    sets = list(itertools.combinations(sorted(board), k))
    symmetric = sum(all(mirror[p] in s for p in s) for s in sets)
    assert symmetric_share(board, mirror, k) == pytest.approx(symmetric / len(sets))


def test_symmetry_chance_is_none_without_symmetry_and_small_for_a_pattern():
    board = {(r, c) for r in range(8) for c in range(8)}
    assert symmetry_chance({(0, 0), (1, 3), (5, 2)}, board, 8, 8) is None
    pattern = {(2, 1), (2, 6), (5, 1), (5, 6), (3, 3), (3, 4)}
    chance = symmetry_chance(pattern, board, 8, 8)
    assert chance is not None and chance < 1e-3


@pytest.mark.parametrize("bgr,name", [((40, 40, 220), "red"), ((60, 200, 60), "green"), ((220, 80, 40), "blue"),
                                      ((250, 250, 250), "white"), ((10, 10, 10), "black"), ((40, 210, 230), "yellow")])  # fmt: skip
def test_colour_names(bgr, name):
    assert colour_name(bgr) == name


# -- calibration -------------------------------------------------------------------------------


def test_an_edge_column_of_obstacles_is_a_blocker_and_reads_as_hash():
    types = _rest(3)
    types[:, 0] = CRATE
    frame = _frame(types)
    roles = _roles_of(frame, types)
    assert roles[CRATE] == {"blocker"}
    assert all(roles[t] == {"tile"} for t in range(5))
    cal = calibrate_frame(frame, hints=HINTS)
    kinds = kind_labels(cal, cal.labels)
    assert all(row[0] == "#" for row in kinds) and not any("#" in row[1:] for row in kinds)


def test_a_symmetric_pattern_is_a_blocker():
    types = _rest(4)
    for r, c in ((2, 1), (2, 6), (5, 1), (5, 6), (3, 3), (3, 4), (4, 3), (4, 4)):
        types[r, c] = CRATE
    assert _roles_of(_frame(types), types)[CRATE] == {"blocker"}


def test_without_the_game_s_hints_no_class_is_a_blocker():
    types = _rest(3)
    types[:, 0] = CRATE
    assert _roles_of(_frame(types), types, hints=None)[CRATE] == {"tile"}


@pytest.mark.parametrize("seed", range(6))
def test_colours_at_rest_are_never_blockers(seed):
    types = random_board(Match3Config(rows=8, cols=8, n_types=7), np.random.default_rng(100 + seed)).cells.copy()
    roles = _roles_of(_frame(types), types)
    assert {r for v in roles.values() for r in v} <= {"tile", "special"}, roles


def test_a_piece_of_many_hues_is_a_colourless_special():
    types = _rest(5)
    layout = layout_for(720, 1600, *types.shape)
    frame = render_board(layout, Board(types), Hud(steps=10, score=0))
    x0, y0, _, _ = layout.board_bbox
    p = layout.cell_px
    r, c = 4, 3
    centre = (x0 + c * p + p // 2, y0 + r * p + p // 2)
    for i in range(12):  # a rainbow disc in the cell
        hue = np.uint8(i * 15)
        bgr = cv2.cvtColor(np.array([[[hue, 255, 255]]], np.uint8), cv2.COLOR_HSV2BGR)[0, 0].tolist()
        cv2.ellipse(frame, centre, (int(p * 0.4), int(p * 0.4)), 0, i * 30, i * 30 + 30, bgr, -1)
    cal = calibrate_frame(frame, hints=HINTS)
    label = cal.labels[r][c]
    assert cal.profile.role_of(label) == "colourless"
    assert sum(row.count(label) for row in cal.labels) == 1


def test_match3_reads_blockers_as_pieces_that_never_match_with_confidence():
    types = _rest(3)
    types[:, 0] = CRATE
    frame = _frame(types)
    cal = calibrate_frame(frame, hints=HINTS)
    read = read_board(frame, cal.profile)
    assert read.confident
    assert (read.board.cells[:, 0] == UNKNOWN).all()
    assert (read.board.cells[:, 1:] >= 0).all()
    assert len(np.unique(read.board.cells[:, 1:])) == 5


def test_calibrate_json_gives_classes_with_roles_and_kinds_with_hash(tmp_path):
    types = _rest(3)
    types[:, 0] = CRATE
    path = tmp_path / "board.png"
    cv2.imwrite(str(path), _frame(types))
    result = runner.invoke(app, ["calibrate", "--image", str(path), "--profiles", str(tmp_path / "p"), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    classes = {c["letter"]: c for c in out["classes"]}
    blockers = [c for c in classes.values() if c["role"] == "blocker"]
    assert len(blockers) == 1 and blockers[0]["kind"] == "#" and blockers[0]["cells"] == 8
    assert blockers[0]["name"].endswith("blocker") and blockers[0]["colour"].startswith("#")
    assert {c["role"] for c in classes.values()} == {"tile", "blocker"}
    assert [row[0] for row in out["kinds"]] == ["#"] * 8
    toml = next((tmp_path / "p").glob("*.toml")).read_text()
    assert 'role = "blocker"' in toml
