"""Blockers known as blockers from what the screen and the game show.

Calibration on a still board (a colour kind never lies three in a line at rest; a block
of one repeated object is no picture behind the board), and in play (a cell that keeps
its look while its column falls is no tile; a new look where a blocker stood is a look
of that blocker), on the saga family's boards and on synthetic ones.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from agent.device.clock import ManualClock
from agent.games.match3.hints import ROLE_HINTS
from agent.games.match3.saga import SagaPhone
from agent.games.match3.saga.family import world_of
from agent.vision.calibrate import calibrate_frame
from agent.vision.classify import EMPTY_LABEL
from test_calibrate import Look, jpeg, random_kinds, synthetic

SAFE = ("play_level", "play", "collect", "ok", "close", "resume", "next")


def board_of(world: int, seed: int) -> SagaPhone:
    """The phone of `world` showing its first board at rest."""
    ph = SagaPhone(seed=seed, size=world_of(world).size, clock=ManualClock(), levels=2, world=world)
    for _ in range(10):
        if ph.screen_kind == "board":
            break
        b = sorted((b for b in ph.buttons if not b.forbidden and b.action in SAFE), key=lambda b: SAFE.index(b.action))[0]
        ph.tap((b.box[0] + b.box[2]) // 2, (b.box[1] + b.box[3]) // 2)
    clock = ph.clock
    assert isinstance(clock, ManualClock)
    clock.advance(max(0.0, ph.settles_at - clock.now()) + 0.5)
    assert ph.screen_kind == "board"
    return ph


def blockers_in(rows: list[str]) -> set[tuple[int, int]]:
    return {(r, c) for r, row in enumerate(rows) for c, v in enumerate(row) if v == "#"}


# -- calibration ------------------------------------------------------------------------------


def test_a_crate_block_whose_cracked_looks_join_its_colour_is_blockers():
    """World 6's first board: a 2x2 and a 3x2 block of crates, plain, cracked and banded.
    The plain crate's class has 3 of its 7 cells in a run, its cracked and banded looks
    join its colour (brown, beside the orange gems): the colour kind has most of its cells
    in runs, which no matchable colour has at rest. (Before: an orange tile and two
    orange specials, and the goal's crate icon read as a colour to collect.)"""
    ph = board_of(6, 6)
    truth = blockers_in(ph.board_kinds)
    assert len(truth) == 10
    cal = calibrate_frame(ph.screencap(), hints=ROLE_HINTS)
    kinds = cal.profile.kind_grid(cal.labels)
    assert blockers_in(["".join(row) for row in kinds]) == truth
    tiles = {cal.profile.kind_of(v) for row in cal.labels for v in row} - {"#"}
    assert len(tiles) == ph.level.colours


BLOCK = [(4, 2), (4, 3), (4, 4), (5, 2), (5, 3), (5, 4)]


def _crate(img: np.ndarray, box: tuple[int, int, int, int]) -> None:
    """A flat wooden crate filling its cell: a face, a rim and a diagonal plank."""
    x0, y0, x1, y1 = box
    cv2.rectangle(img, (x0 + 2, y0 + 2), (x1 - 3, y1 - 3), (40, 90, 150), -1)
    cv2.rectangle(img, (x0 + 2, y0 + 2), (x1 - 3, y1 - 3), (25, 55, 95), 2)
    cv2.line(img, (x0 + 4, y1 - 5), (x1 - 5, y0 + 4), (25, 55, 95), 2, cv2.LINE_AA)


@pytest.mark.parametrize("seed", [0, 3])
def test_a_block_of_flat_crates_inside_the_board_is_no_hole(seed):
    """Flat crates are smooth, as holes over a scene out of focus are, and no tile kind
    of the board; but they repeat one another exactly, and two holes show two parts of
    the scene. (Before: the block was six holes, and a crate read as one forever after.)"""
    look = Look(background="soft", holes=[(0, 0), (0, 8)])
    frame, box = synthetic(random_kinds(9, 9, 5, seed=21 + seed), look, seed=seed)
    c = look.cell
    for r, k in BLOCK:
        _crate(frame, (box[0] + k * c, box[1] + r * c, box[0] + (k + 1) * c, box[1] + (r + 1) * c))
    cal = calibrate_frame(jpeg(frame), hints=ROLE_HINTS)
    assert (cal.board.rows, cal.board.cols) == (9, 9)
    got = {cal.labels[r][k] for r, k in BLOCK}
    assert len(got) == 1 and EMPTY_LABEL not in got
    assert cal.labels[0][0] == cal.labels[0][8] == EMPTY_LABEL
    assert cal.profile.role_of(got.pop()) == "blocker"  # and a block of six lies in runs

