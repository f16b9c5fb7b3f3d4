"""Calibration from several frames of one board (agent.vision.frames)."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.games.match3.board import Board
from agent.games.match3.game import Match3Screen
from agent.games.match3.hud import Hud
from agent.games.match3.render import layout_for, render_board
from agent.games.match3.rules import Match3Config, random_board
from agent.vision.calibrate import calibrate_frame
from agent.vision.frames import MAX_FRAMES, calibrate_frames
from agent.vision.locate import NoBoardError
from agent.vision.scoring import cell_score

runner = CliRunner()


def _frame(types: np.ndarray, size: tuple[int, int] = (720, 1600)) -> np.ndarray:
    return render_board(layout_for(*size, *types.shape), Board(types), Hud(steps=10, score=0))


def _boards() -> tuple[np.ndarray, np.ndarray]:
    """Two boards of one game: the second shows a sixth look the first does not."""
    first = random_board(Match3Config(n_types=5), np.random.default_rng(1)).cells.copy()
    second = random_board(Match3Config(n_types=5), np.random.default_rng(2)).cells.copy()
    for r, c in ((1, 2), (4, 6), (6, 1)):
        second[r, c] = 5
    return first, second


def _truth(types: np.ndarray) -> list[list[str]]:
    return [[str(v) for v in row] for row in types]


def test_a_look_seen_only_in_a_later_frame_is_learned():
    first, second = _boards()
    f1, f2 = _frame(first), _frame(second)
    alone = calibrate_frame(f1, hints=Match3Screen.role_hints).profile.read(f2)
    assert alone.unknown_count >= 3  # one frame never saw the sixth look
    cal = calibrate_frames([f1, f2], hints=Match3Screen.role_hints)
    assert cell_score(cal.labels, _truth(first)).share == 1.0  # the calibration shows the first frame
    for frame, types in ((f1, first), (f2, second)):
        reading = cal.profile.read(frame)
        assert reading.unknown_count == 0, reading.text
        assert cell_score(reading.labels, _truth(types)).share == 1.0
    assert len(cal.profile.class_labels) == 6


def test_one_frame_is_calibrate_frame():
    first, _ = _boards()
    f1 = _frame(first)
    assert calibrate_frames([f1]).labels == calibrate_frame(f1).labels


def test_frames_of_another_size_or_none_are_refused():
    first, second = _boards()
    with pytest.raises(NoBoardError, match="frame 2 is 1080x2400, the first 720x1600"):
        calibrate_frames([_frame(first), _frame(second, (1080, 2400))])
    with pytest.raises(ValueError, match="no frames"):
        calibrate_frames([])
    with pytest.raises(ValueError, match=f"at most {MAX_FRAMES}"):
        calibrate_frames([_frame(first)] * (MAX_FRAMES + 1))


def test_calibrate_takes_several_images(tmp_path):
    first, second = _boards()
    paths = []
    for i, types in enumerate((first, second)):
        paths.append(tmp_path / f"f{i}.png")
        cv2.imwrite(str(paths[-1]), _frame(types))
    args = ["calibrate", "--image", str(paths[0]), "--image", str(paths[1]), "--profiles", str(tmp_path / "p"), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["frames"] == 2 and len(out["classes"]) == 6
    read = runner.invoke(app, ["read", "--image", str(paths[1]), "--profiles", str(tmp_path / "p"), "--json"])
    assert read.exit_code == 0, read.output
    assert "?" not in {v for row in json.loads(read.stdout)["cells"] for v in row}


@pytest.mark.parametrize("extra,message", [(["--frames", "2"], "--frames is for a phone"),
                                           (["--frames", "0"], "--frames"), (["--every", "-1"], "--every")])  # fmt: skip
def test_frame_options_are_checked(tmp_path, extra, message):
    first, _ = _boards()
    path = tmp_path / "f.png"
    cv2.imwrite(str(path), _frame(first))
    result = runner.invoke(app, ["calibrate", "--image", str(path), "--profiles", str(tmp_path / "p"), *extra])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "p").exists() or not list((tmp_path / "p").glob("*.toml"))
