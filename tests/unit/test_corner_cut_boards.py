"""Boards of big gems with cut corners, placed on their own lattice.

Gems that fill most of their cells with strong outlines (the saga family's Star Jeweled
art, cut from the shared real shots) put a peak in the autocorrelation at a gem's width
as well as at the cell's: a family of sidebands beside the true harmonics, whose first
one tops the hump where the first peak merges with it. The period fitted through them
came out a tenth short, and a 9x8 board with three cells cut at each corner was placed
96.5 pixels a column for 106 (its box shrunk, most of its tiles misread). See
agent.vision.locate._off_sideband.
"""

from __future__ import annotations

import numpy as np
import pytest

from agent.device.clock import ManualClock
from agent.games.match3.saga import SagaPhone
from agent.games.match3.saga.family import world_of
from agent.games.match3.saga.looks import REAL
from agent.vision.locate import find_boards, refine_period
from agent.vision.scoring import iou
from test_blockers import board_of
from test_board_period import assert_cells_where_drawn


def _sidebanded_acf(p: float, width: float, n: int = 200) -> np.ndarray:
    """The autocorrelation of a row of cells `p` long holding sprites `width` long: sharp
    peaks at k*p (what repeats exactly: slots, gaps), broad ones at k*p -/+ (p - width)
    (a sprite's outline against the other side of itself or its neighbour), falling with
    the lag."""
    lag = np.arange(n, dtype=float)
    v = np.zeros(n)
    for k in range(int(n / p) + 2):
        v += 0.6 * np.exp(-0.5 * ((lag - k * p) / 1.2) ** 2)
        for side in (-(p - width), p - width):
            v += np.exp(-0.5 * ((lag - k * p - side) / 3.0) ** 2)
    v *= np.exp(-lag / 60.0)
    return v / v[0]


@pytest.mark.parametrize("p, proposed", [(32.0, 0.9), (36.0, 1.0)])
def test_a_fit_that_follows_the_sprites_sidebands_is_put_back_on_the_period(p, proposed):
    """The first sideband stands above the first true peak: fitted through the sidebands
    the period came out 10% short (28.7 for 32, 32.3 for 36)."""
    v = _sidebanded_acf(p, 0.8 * p)
    assert refine_period(v, proposed * p, 8) == pytest.approx(p, rel=0.01)


def test_a_clean_comb_keeps_its_fitted_period():
    """Sprites nearly as wide as their cells put the sidebands on the peaks: nothing to
    correct, the fit stands to its sub-pixel precision."""
    for p in (30.0, 32.0, 36.0):
        v = _sidebanded_acf(p, 0.9 * p)
        assert refine_period(v, p, 8) == pytest.approx(p, abs=0.1)


def _level_drawn(world: int, seed: int, level: int, draws: int) -> SagaPhone:
    """The phone of `world` showing `level`'s board at rest, its tiles drawn `draws` times
    over (each start of a level fills the board afresh)."""
    ph = board_of(world, seed, world_of(world).size, levels=4)
    clock = ph.clock
    assert isinstance(clock, ManualClock)
    for _ in range(draws + 1):
        ph._start_level(level, clock.now(), fresh=True)
        clock.advance(max(0.0, ph.settles_at - clock.now()) + 2.0)
    assert ph.screen_kind == "board", ph.screen_detail
    return ph


# (world, seed, level, draws): Star Jeweled worlds, boards found before on a period a
# tenth short: a 9x8 board with its corners cut (rows of 4, 6, 8, ..., 6, 4), found 7 rows
# of 95.9 pixels for 106; a 9x7 board with a cell cut each side, 10 rows of 148.6 for 175.
CASES = [(14, 14, 3, 6), (8, 16, 2, 0)]


@pytest.mark.parametrize("world, seed, level, draws", CASES)
def test_a_board_of_big_gems_is_placed_on_its_own_period(world, seed, level, draws):
    ph = _level_drawn(world, seed, level, draws)
    if ph._art.source != REAL:
        pytest.skip("needs the shared real shots (the worlds' gem art)")
    frame = ph.screencap()
    board = find_boards(frame)[0]
    lv = ph.level
    assert (board.rows, board.cols) == (lv.rows, lv.cols)
    assert iou(board.bbox, ph.board_bbox) >= 0.95
    x0, y0, x1, y1 = ph.board_bbox
    true = ((x1 - x0) / lv.cols, (y1 - y0) / lv.rows)
    for got, want in zip(board.pitch, true):
        assert abs(got / want - 1.0) < 0.02, (board.pitch, true)
    # every cell's centre where the game draws it, the far columns' too (before: most of
    # a cell off at the board's edges)
    assert_cells_where_drawn(board, ph)
