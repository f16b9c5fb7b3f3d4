"""The simulated Lines phone's profile, learned from a board it draws with known balls
(every colour and the rainbow ball in many cells, empty cells, and a selected ball), as
the match-3 sim does: the agent then reads the phone only through screenshots."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agent.games.lines.board import EMPTY, WILD, char_of
from agent.games.lines.render import render_board
from agent.games.lines.sim import LinesSimPhone
from agent.vision.classify import exemplars_from_labels
from agent.vision.features import cell_features
from agent.vision.profile import GameProfile, write_phone_profile

GAME = "lines"


def specimen_board(rows: int, cols: int, colors: int, wildcard: bool) -> np.ndarray:
    kinds = [EMPTY, *range(1, colors + 1)] + ([WILD] if wildcard else [])
    a = np.empty((rows, cols), dtype=np.int8)
    for r in range(rows):
        for c in range(cols):
            a[r, c] = kinds[(r * 3 + c) % len(kinds)]
    return a


def sim_game_profile(phone: LinesSimPhone) -> GameProfile:
    cfg, layout = phone.config, phone.layout
    feats, labels = [], []
    board = specimen_board(cfg.rows, cfg.cols, cfg.colors, cfg.wildcard)
    # Twice: plain, and with a selected ball, so the selection ring is part of what a ball looks like.
    r, c = np.argwhere(board != EMPTY)[0]
    for selected in (None, (int(r), int(c))):
        frame = render_board(layout, board, 0, (), selected)
        feats.append(cell_features(frame, layout.board_bbox, cfg.rows, cfg.cols))
        labels.extend([[char_of(int(v)) for v in row] for row in board.tolist()])
    w, h = phone.screen_size()
    return GameProfile.from_bbox(GAME, cfg.rows, cfg.cols, layout.board_bbox, w, h,
                                 exemplars_from_labels(np.concatenate(feats), labels))


def save_sim_profile(phone: LinesSimPhone, directory: Path | str) -> Path:
    """Write (or refresh) the phone's profile in `directory`, keeping other games in the file."""
    # Derived data: a stale or broken sim profile is simply rewritten.
    return write_phone_profile(phone, sim_game_profile(phone), directory).path
