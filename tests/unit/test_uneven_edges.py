"""Boards of real saga games, whose edge is uneven (issue 25): the look-alike families
`edge_columns`, `crates`, `frosted_edge` and `cut_corners` draw what they promise, and
calibration (as `agent calibrate` runs it) and the re-find of a new level's board get
their grid exact on a small fixed sample of each; the screens they do not yet get are
strict expected failures (the bench, `agent bench unseen --family
edge_columns,crates,frosted_edge,cut_corners`, measures the rest)."""

from __future__ import annotations

import numpy as np
import pytest

from agent.games.match3.game import Match3Screen
from agent.games.match3.lookalike import UNEVEN, make_case
from agent.games.match3.lookalike.scene import SPANNED
from agent.vision.frames import calibrate_frames
from agent.vision.locate import find_boards
from agent.vision.relearn import Refound, find_again
from agent.vision.scoring import iou

# a few screens of each family, of several phone sizes and piece styles, that calibrate
# grid-exact today
# (crates 10 and 19: a dark panel's margin over a textured backdrop, whose cells pass as
# loose twins of the board's, once grew the box by a line on three sides)
SAMPLE = [("edge_columns", 0), ("edge_columns", 1), ("edge_columns", 2), ("edge_columns", 8), ("crates", 0),
          ("crates", 7), ("crates", 10), ("crates", 19), ("frosted_edge", 4), ("frosted_edge", 5), ("cut_corners", 1),
          ("cut_corners", 5)]  # fmt: skip
# ... and screens that one stage once got wrong (failures of the bench), by what it was:
ONCE_MISSED = [
    # a busy texture or a blurred picture round a small board, taken into the area where
    # repetition was seen, passed as one of the board's kinds and grew the box over the
    # screen (refused: "nothing repeats"), or a wall of blocks grew over it
    ("frosted_edge", 0), ("frosted_edge", 17), ("cut_corners", 0), ("edge_columns", 18),
    # ... where a few cells of the texture repeat each other by chance
    ("frosted_edge", 1012),
    # ... where holes of the backdrop in a cut corner, moved onto the tiles beside them,
    # changed as much as tiles do (but not moved away from them)
    ("cut_corners", 2007),
    # loose twins of a textured backdrop, peeled off the box, grew it back; a coarse
    # proposal three cells wide had the board measured at ten pixels a cell
    ("edge_columns", 4),
    # a row of 2x2 crates, a row of shelves two cells wide with jars of alternating lids
    ("crates", 6), ("crates", 1002), ("crates", 5009),
    # a lattice at half the period along one axis, splitting the tiles in two
    ("crates", 5003),
    # a panel's margin over a texture as near a grey slab as empty slots are to each other
    ("crates", 1005),
    # big crates leave too few clearly repeating cells to learn the board's kinds from
    ("crates", 5001),
    # cut corners and lit tiles: a candidate that saw part of the board stopped short of
    # its sparse outer rows, and outscored the one that did not
    ("cut_corners", 5006), ("cut_corners", 16),
    # a sparse outer row of a tile and a lit tile, or of a tile and the one heart of the
    # board: one twin of the board's kinds was not enough to keep the row
    ("cut_corners", 2003), ("holes", 3),
]  # fmt: skip
# ... and screens that do not yet (strict: once they pass, the mark must go): calibration
# gets crates 5013 exact, but the re-find takes the band of blurred, grainy backdrop on
# either side for a wall of one obstacle (its cells alike, none a known look, the band
# past it another colour) and grows the board by two columns
NOT_YET = [("crates", 5013)]


def _lines(kinds: tuple[tuple[str, ...], ...]) -> list[list[str]]:
    return [list(kinds[0]), list(kinds[-1]), [r[0] for r in kinds], [r[-1] for r in kinds]]


@pytest.mark.parametrize("family", UNEVEN)
def test_each_family_draws_its_uneven_edge(family):
    for seed in range(10):
        case = make_case(family, seed, draw=False)
        t, scene = case.truth, case.scene
        flat = [v for row in t.kinds for v in row]
        if family == "edge_columns":  # one or two whole outer lines of blockers
            assert any(all(v == "#" for v in line) for line in _lines(t.kinds))
        if family == "crates":  # objects over several cells, every cell under them a blocker
            assert scene.spans and all(sp.rows * sp.cols >= 2 for sp in scene.spans)
            for sp in scene.spans:
                for r in range(sp.r, sp.r + sp.rows):
                    for c in range(sp.c, sp.c + sp.cols):
                        assert t.kinds[r][c] == "#" and scene.pieces[r][c].kind == SPANNED
        if family == "frosted_edge":
            assert scene.style.frosted > 0 and scene.style.soft_frost and "#" not in flat
        if family == "cut_corners":  # holes on the outline; every row and column keeps two cells
            assert any("." in line for line in _lines(t.kinds))
            holes = np.array([[v == "." for v in row] for row in t.kinds])
            assert ((~holes).sum(axis=0) >= 2).all() and ((~holes).sum(axis=1) >= 2).all()


@pytest.mark.parametrize(
    "family,seed",
    SAMPLE + ONCE_MISSED
    + [pytest.param(f, s, marks=pytest.mark.xfail(strict=True, reason="not yet")) for f, s in NOT_YET],
)  # fmt: skip
def test_calibration_and_the_refind_get_the_grid_exact(family, seed):
    case = make_case(family, seed)
    t = case.truth
    cal = calibrate_frames([case.frame], hints=Match3Screen.role_hints)
    assert (cal.board.rows, cal.board.cols) == (t.rows, t.cols)
    assert iou(cal.board.bbox, t.bbox) >= 0.9
    # the board found again with the profile (a new level's frame, as the play loop meets
    # it) keeps the whole grid: a wall or a crate on the edge is not trimmed away
    again = find_again(case.frame, cal.profile, Match3Screen.role_hints)
    assert isinstance(again, Refound), again
    assert (again.profile.rows, again.profile.cols) == (t.rows, t.cols)
    assert iou(again.profile.board_bbox, t.bbox) >= 0.9


def test_round_counters_past_a_gap_under_the_board_are_not_board():
    """A row of round goal counters under a board of big obstacles, past a row of bare
    backdrop: their centres pass for the board's tiles, and the box once ran over the
    gap to take them in (9 rows of 7). A line across the box holding nothing of the board
    cuts off what lies past it."""
    case = make_case("crates", 5013)
    board = find_boards(case.frame)[0]
    assert (board.rows, board.cols) == (case.truth.rows, case.truth.cols)
    assert iou(board.bbox, case.truth.bbox) >= 0.9
