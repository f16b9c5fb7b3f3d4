"""The simulated Lights Out phone's profile, learned from its known layout.

As for match-3 (`agent.games.match3.sim_profile`): the phone knows where it draws the
board, so its profile is made by drawing boards of known lights exactly as the phone
would (a checkerboard and its inverse, so every cell is seen both on and off) and taking
exemplars from them. The agent then reads the phone only through screenshots and this
profile, as it would a real one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agent.games.lightsout.render import render
from agent.games.lightsout.sim import LightsOutPhone
from agent.vision.classify import exemplars_from_labels
from agent.vision.features import cell_features
from agent.vision.profile import GameProfile, write_phone_profile

GAME = "lightsout"


def sim_game_profile(phone: LightsOutPhone) -> GameProfile:
    layout = phone.layout
    rows, cols = layout.rows, layout.cols
    checker = (np.indices((rows, cols)).sum(axis=0) % 2).astype(np.float32)
    feats, labels = [], []
    for levels in (checker, 1 - checker):
        frame = render(layout, levels, moves=0, solved=False)
        feats.append(cell_features(frame, layout.board_bbox, rows, cols))
        labels += [["1" if v else "0" for v in row] for row in levels.astype(int).tolist()]
    w, h = phone.screen_size()
    return GameProfile.from_bbox(
        GAME, rows, cols, layout.board_bbox, w, h, exemplars_from_labels(np.concatenate(feats), labels)
    )


def save_sim_profile(phone: LightsOutPhone, directory: Path | str) -> Path:
    """Write (or refresh) the phone's lightsout profile in `directory`, keeping other games."""
    # Derived data: a stale or broken sim profile is simply rewritten.
    return write_phone_profile(phone, sim_game_profile(phone), directory).path
