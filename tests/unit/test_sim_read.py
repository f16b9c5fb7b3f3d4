"""The simulated phone's screen read back by vision: the same board at every resolution."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from agent.device.clock import ManualClock
from agent.games.match3.sim import SimPhone
from agent.simphone.sizes import SCREEN_SIZES
from agent.games.match3.board import EMPTY, Board
from agent.games.match3.hud import Hud
from agent.games.match3.reader import read_board
from agent.games.match3.render import render_board
from agent.games.match3.rules import Match3Config
from agent.games.match3.sim_profile import save_sim_profile, sim_game_profile
from agent.vision.profile import find_profile, save_game_profile


def jpeg(frame: np.ndarray, quality: int) -> np.ndarray:
    ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


@pytest.mark.parametrize("size", sorted(SCREEN_SIZES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_render_then_read_gives_the_same_board(size, seed):
    phone = SimPhone(seed=seed, size=SCREEN_SIZES[size], clock=ManualClock())
    profile = sim_game_profile(phone)
    frame = phone.screencap()
    for shot in (frame, jpeg(frame, 70)):
        got = read_board(shot, profile)
        assert got.confident, got.reading.text
        assert got.board == phone.board


@pytest.mark.parametrize("size", sorted(SCREEN_SIZES))
def test_every_type_and_empty_cells_read_at_every_size(size):
    cfg = Match3Config(n_types=8, rows=9, cols=7)
    phone = SimPhone(cfg, seed=0, size=SCREEN_SIZES[size], clock=ManualClock())
    profile = sim_game_profile(phone)
    rng = np.random.default_rng(5)
    cells = rng.integers(-1, 8, size=(9, 7))
    board = Board(cells)
    frame = jpeg(render_board(phone.layout, board, Hud(steps=3, score=120)), 70)
    got = read_board(frame, profile)
    assert got.board == board
    assert (got.board.cells == EMPTY).sum() == (cells == -1).sum()


def test_a_frame_in_motion_is_not_read_as_a_board():
    phone = SimPhone(seed=3, clock=ManualClock())
    profile = sim_game_profile(phone)
    # find a clearing swap and look at the screen in the middle of its animation
    from agent.games.match3.solver import GreedySolver

    choice = GreedySolver().choose(phone.config, phone.board)
    assert choice is not None and choice.tiles_cleared > 0
    from agent.games.match3.game import swipe_points

    phone.swipe(*swipe_points(profile, choice.move), 100)
    phone.clock.advance(0.1 + 0.075)  # finger up, then halfway through the swap
    mid = read_board(phone.screencap(), profile)
    assert not mid.confident and mid.reading.unknown_count >= 2


def test_profile_file_round_trip_and_lookup(tmp_path):
    phone = SimPhone(seed=0, size=(720, 1280), clock=ManualClock())
    path = save_sim_profile(phone, tmp_path)
    assert path.name == "puzzle-sim_720x1280.toml"
    assert find_profile("puzzle-sim", 720, 1280, "match3", [tmp_path]).how == "exact"
    # what was written is what is read back, exactly (written again from one profile: a
    # profile made afresh may differ in a feature's last stored decimal, float32 sums
    # depending on the memory's alignment)
    made = sim_game_profile(phone)
    assert save_game_profile(phone.model, 720, 1280, made, tmp_path) == path
    match = find_profile("puzzle-sim", 720, 1280, "match3", [tmp_path])
    assert match.how == "exact" and match.profile == made
    # the same profile scales to another 16:9 screen and still reads it
    big = SimPhone(seed=4, size=(1080, 1920), clock=ManualClock())
    scaled = find_profile("other-phone", 1080, 1920, "match3", [tmp_path])
    assert scaled.how == "scaled"
    assert read_board(big.screencap(), scaled.profile).board == big.board
