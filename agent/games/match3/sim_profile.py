"""The simulated phone's profile, learned from its known layout.

A real phone's profile comes from calibration; the simulated phone knows where it draws
the board, so its profile is made by drawing a board of known tiles (every type, and
empty cells) exactly as the phone would and taking one exemplar set from it. The agent
then reads the phone only through screenshots and this profile, as it would a real one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from agent.games.match3.sim import SimPhone
from agent.games.match3.board import EMPTY, LETTERS, Board
from agent.games.match3.hud import Hud, read_hud
from agent.games.match3.render import Layout, render_board
from agent.vision.classify import exemplars_from_labels
from agent.vision.features import cell_features
from agent.vision.grid import bbox_to_frac
from agent.vision.profile import GameProfile, load_profile, profile_filename, write_phone_profile


SIM_LAYOUT = "sim-layout"  # GameProfile.source of profiles made from the known layout


def specimen_board(rows: int, cols: int, n_types: int) -> Board:
    """Every tile type in many positions (both checker shades), a few empty cells."""
    a = np.empty((rows, cols), dtype=np.int8)
    for r in range(rows):
        for c in range(cols):
            a[r, c] = (r * 3 + c) % (n_types + 1) - 1  # -1 is EMPTY
    return Board(a)


def sim_game_profile(phone: SimPhone) -> GameProfile:
    layout = phone.layout
    cfg = phone.config
    board = specimen_board(cfg.rows, cfg.cols, cfg.n_types)
    frame = render_board(layout, board, Hud(steps=0, score=0))
    feats = cell_features(frame, layout.board_bbox, cfg.rows, cfg.cols)
    labels = [["." if v == EMPTY else LETTERS[v] for v in row] for row in board.cells.tolist()]
    w, h = phone.screen_size()
    return GameProfile.from_bbox(
        "match3", cfg.rows, cfg.cols, layout.board_bbox, w, h, exemplars_from_labels(feats, labels),
        hud={"steps": bbox_to_frac(layout.steps_box, w, h), "score": bbox_to_frac(layout.score_box, w, h)},
        source=SIM_LAYOUT,
    )


def save_sim_profile(phone: SimPhone, directory: Path | str) -> Path:
    """Write (or refresh) the phone's profile in `directory`, keeping other games in the file."""
    # Derived data: a stale or broken sim profile is simply rewritten.
    return write_phone_profile(phone, sim_game_profile(phone), directory).path


def sim_profile_for_play(phone: SimPhone, directory: Path | str) -> tuple[Path, str]:
    """The profile `agent play --sim` uses, and a sentence saying which it is.

    A profile made by `agent calibrate --sim` for this phone's screen is used as it is
    (that is what calibrating it is for). Otherwise the profile is (re)written from the
    simulator's known layout: it is derived data, refreshed every run.
    """
    w, h = phone.screen_size()
    path = Path(directory) / profile_filename(phone.model, w, h)
    if path.exists():
        try:
            game = load_profile(path).games.get("match3")
        except ValueError:
            game = None  # stale or broken: fall through and rewrite it
        if game is not None and game.source == "calibrated":
            return path, f"{path} (calibrated with `agent calibrate --sim`)"
    saved = write_phone_profile(phone, sim_game_profile(phone), directory)
    return saved.path, saved.told("written from the simulator's known layout; `agent calibrate --sim` calibrates it instead")


def sim_status_reader(layout: Layout) -> Callable[[np.ndarray], Hud | None]:
    return lambda frame: read_hud(frame, layout)
