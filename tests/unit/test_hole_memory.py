"""The holes of the board in play stay holes while the scene behind them changes.

A level of an irregular board is played for minutes over an animated scene (clouds that
drift, a sky that turns to sunset): its holes come to show colours calibration never saw.
"""

from __future__ import annotations

import numpy as np
import pytest

from agent.device.clock import ManualClock
from agent.games.match3.game import GAME
from agent.games.match3.hints import ROLE_HINTS
from agent.games.match3.saga import SagaPhone
from agent.vision.calibrate import calibrate_frame
from agent.vision.hole_memory import SEEN_TIMES, HoleMemory
from agent.vision.profile import GameProfile
from test_blockers import board_of


def _level(world: int, seed: int, level: int, size: tuple[int, int]) -> SagaPhone:
    """The phone of `world` showing `level`'s board at rest."""
    ph = board_of(world, seed, size, levels=4)
    ph._start_level(level, ph.clock.now(), fresh=True)
    clock = ph.clock
    assert isinstance(clock, ManualClock)
    clock.advance(max(0.0, ph.settles_at - clock.now()) + 2.0)
    assert ph.screen_kind == "board", ph.screen_detail
    return ph


def _sunset(frame: np.ndarray, profile: GameProfile, cells: list[tuple[int, int]], seed: int) -> np.ndarray:
    """`frame` with the scene behind `cells` changed to colours never seen there: a
    saturated gradient of a random hue per cell, with grain."""
    rng = np.random.default_rng(seed)
    out = frame.copy()
    x0, y0, x1, y1 = profile.board_bbox
    pw, ph = (x1 - x0) / profile.cols, (y1 - y0) / profile.rows
    for r, c in cells:
        a, b = (int(y0 + r * ph), int(x0 + c * pw)), (int(y0 + (r + 1) * ph), int(x0 + (c + 1) * pw))
        h, w = b[0] - a[0], b[1] - a[1]
        lo, hi = rng.integers(0, 256, 3), rng.integers(0, 256, 3)
        ramp = np.linspace(0.0, 1.0, h)[:, None, None]
        patch = lo[None, None, :] * (1 - ramp) + hi[None, None, :] * ramp + rng.normal(0, 12, (h, w, 3))
        out[a[0]:b[0], a[1]:b[1]] = np.clip(patch, 0, 255).astype(np.uint8)
    return out


@pytest.fixture(scope="module")
def diamond():
    """World 7's second level: a diamond of 9x9 with a third of its cells holes, over clouds."""
    ph = _level(7, 7, 2, (720, 1280))
    frame = ph.screencap()
    cal = calibrate_frame(frame, hints=ROLE_HINTS)
    holes = {(int(r), int(c)) for r, c in zip(*np.nonzero(ph.level.hole_mask()))}
    assert (cal.profile.rows, cal.profile.cols) == ph.level.hole_mask().shape
    return frame, cal.profile, holes


def test_a_hole_that_shows_a_scene_never_seen_reads_as_the_hole_it_was(diamond):
    frame, profile, holes = diamond
    before = profile.read(frame)
    assert {rc for rc in holes if before.labels[rc[0]][rc[1]] == "."} == holes  # calibration knows them
    late = _sunset(frame, profile, sorted(holes), seed=1)
    alone = profile.read(late)
    unknown = set(alone.unknown_cells())
    assert len(unknown & holes) >= len(holes) // 2, "the case: the new sky reads unknown"
    assert not GAME.screen.read(late, profile).playable  # (a fifth of the board unknown: no board to play)

    memory = HoleMemory()
    assert memory.lend(profile, late, alone) is None  # nothing remembered yet
    for _ in range(SEEN_TIMES):
        memory.saw(profile, before)
    assert memory.holes(profile) == frozenset(holes)
    lent = memory.lend(profile, late, alone)
    assert lent is not None
    again = lent.read(late)
    assert {(r, c) for r in range(profile.rows) for c in range(profile.cols) if again.labels[r][c] == "."} == holes
    # the pieces read as they did: the lent looks are of this frame's holes only
    assert [[v for c, v in enumerate(row) if (r, c) not in holes] for r, row in enumerate(again.labels)] == \
        [[v for c, v in enumerate(row) if (r, c) not in holes] for r, row in enumerate(alone.labels)]
    read = GAME.screen.read(late, lent)
    assert read.playable
    assert profile.exemplars == lent.exemplars[: len(profile.exemplars)]  # the kept profile learned nothing


def test_a_cell_read_as_a_piece_or_another_board_forgets_the_hole(diamond):
    from dataclasses import replace

    frame, profile, holes = diamond
    memory = HoleMemory()
    reading = profile.read(frame)
    memory.saw(profile, reading)
    assert memory.holes(profile) == frozenset()  # once is a cell emptied for an instant
    memory.saw(profile, reading)
    r, c = sorted(holes)[0]
    labels = [list(row) for row in reading.labels]
    piece = next(v for row in labels for v in row if v not in (".", "?"))
    labels[r][c] = piece  # another level of the same shape: a piece where the hole was
    memory.saw(profile, replace(reading, labels=labels))
    assert memory.holes(profile) == frozenset(holes - {(r, c)})
    labels[r][c] = "?"  # unknown says nothing: what was remembered stays
    memory.saw(profile, replace(reading, labels=labels))
    assert memory.holes(profile) == frozenset(holes - {(r, c)})
    x0, y0, x1, y1 = profile.board_bbox
    moved = replace(profile, board_bbox=(x0 + 8, y0, x1 + 8, y1))
    assert memory.holes(moved) == frozenset()  # another board
    memory.saw(moved, reading)
    assert memory.holes(profile) == frozenset()  # and the first is forgotten


def test_a_vivid_patch_of_sky_in_a_cut_corner_is_learned_as_a_hole_not_a_piece():
    """World 2's second level: a diamond over a drifting nebula. Two cells of its cut
    corners showed a purple patch just vivid enough to pass the flat-tile chroma test, and
    calibration made of them a "special of purple": swiped, refused, and one of the
    refusals took the board's one real move with it. A flat look whose every cell touches
    a hole, nearer to that hole than to any piece, is the scene behind the board."""
    from test_saga_family import level_board

    from agent.games.match3.saga.family import world_of

    ph = level_board(2, 2, size=world_of(2).size)
    cal = calibrate_frame(ph.screencap(), hints=ROLE_HINTS)
    holes = ph.level.hole_mask()
    assert (cal.profile.rows, cal.profile.cols) == holes.shape
    labels = np.array(cal.clustering.labels)
    assert (labels[holes] == ".").all(), labels
    assert (labels[~holes] != ".").all(), labels  # every piece is still a piece
    assert all(cal.profile.role_of(k) != "special" or (labels == k).sum() > 2 for k in cal.profile.class_labels)
