"""Calibrating and reading Color Lines boards: the simulated phone and a real screen."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from agent.device.clock import ManualClock
from agent.games.lines.board import EMPTY, UNKNOWN
from agent.games.lines.calibrate import profile_from_frame, propose_labels
from agent.games.lines.config import PRESETS
from agent.games.lines.reader import read_board
from agent.games.lines.sim import LinesSimPhone

SHARED = Path(__file__).resolve().parents[3] / "shared"
REALSHOTS = SHARED / "realshots"


def same_partition(a: list[list[object]], b: list[list[object]]) -> bool:
    """True when the two labellings split the cells the same way (a one-to-one renaming)."""
    fa = [x for row in a for x in row]
    fb = [x for row in b for x in row]
    forward: dict[object, object] = {}
    backward: dict[object, object] = {}
    for x, y in zip(fa, fb):
        if forward.setdefault(x, y) != y or backward.setdefault(y, x) != x:
            return False
    return len(fa) == len(fb)


def _colorlines_shot() -> tuple[np.ndarray, dict]:
    if not (REALSHOTS / "labels.json").is_file():
        pytest.skip(f"no shared realshots at {REALSHOTS} (CI keeps a copy of shared/ beside the clone)")
    entries = [e for e in json.loads((REALSHOTS / "labels.json").read_text()) if e["game"] == "colorlines"]
    if not entries:
        pytest.skip("the realshots have no Color Lines screen")
    e = entries[0]
    frame = cv2.imread(str(REALSHOTS / e["game"] / e["file"]))
    assert frame is not None, f"cannot read {e['file']}"
    return frame, e


def test_calibration_on_the_real_color_lines_screen():
    frame, e = _colorlines_shot()
    labels = propose_labels(frame, tuple(e["board_bbox"]), e["rows"], e["cols"])
    assert same_partition(labels, e["cells"])
    # the empty cells are named '.' like the hand labels
    assert all((a == ".") == (b == ".") for ra, rb in zip(labels, e["cells"]) for a, b in zip(ra, rb))


def test_a_profile_from_the_real_screen_reads_it_with_confidence():
    frame, e = _colorlines_shot()
    profile = profile_from_frame(frame, tuple(e["board_bbox"]), e["rows"], e["cols"])
    read = read_board(frame, profile)
    assert read.confident
    assert same_partition(read.board.tolist(), e["cells"])


def test_calibration_on_one_sim_game_reads_another():
    config = PRESETS["seed"]
    first = LinesSimPhone(config=config, seed=1, size=(720, 1280), clock=ManualClock())
    # A busier board than a new game: play some moves so every kind shows up.
    from agent.games.lines.players import SearchPlayer

    player = SearchPlayer(config, budget_ms=0)
    rng = np.random.default_rng(0)
    for _ in range(12):
        first.game.play(player.choose(first.game.position(), rng))
    profile = profile_from_frame(first.screencap(), first.layout.board_bbox, config.rows, config.cols)
    assert same_partition(propose_labels(first.screencap(), first.layout.board_bbox, 8, 8), first.board.tolist())
    other = LinesSimPhone(config=config, seed=2, size=(720, 1280), clock=ManualClock())
    for _ in range(12):
        other.game.play(player.choose(other.game.position(), rng))
    read = read_board(other.screencap(), profile)
    seen_kinds = set(np.unique(first.board).tolist())
    known = np.isin(other.board, list(seen_kinds))
    # Kinds the calibration saw are read correctly; a kind it never saw is not guessed.
    assert same_partition(read.board[known][None].tolist(), other.board[known][None].tolist())
    assert (read.board[~known] == UNKNOWN).all()
    assert (read.board[other.board == EMPTY] == EMPTY).all()
