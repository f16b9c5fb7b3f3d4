"""The simulated Color Lines phone, its reader, and playing it through screenshots."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from agent.device.clock import ManualClock
from agent.games.lines.board import EMPTY, WILD, format_board
from agent.games.lines.check import check_move, predict, verdict_of
from agent.games.lines.config import PRESETS
from agent.games.lines.game import GAME
from agent.games.lines.players import SearchPlayer
from agent.games.lines.reader import read_board
from agent.games.lines.render import ball_sprite
from agent.games.lines.rules import Move
from agent.games.lines.sim import LinesSimPhone
from agent.games.lines.sim_profile import sim_game_profile
from agent.games.registry import settings
from agent.play.journal import Journal, read_journal
from agent.play.loop import PlayLoop, PlayOptions

SEED = PRESETS["seed"]
SETTINGS = settings(GAME, {}, sim=True)  # the search player, on the seed's rules


def phone(seed: int = 0, size=(720, 1280), config=SEED) -> LinesSimPhone:
    return LinesSimPhone(config=config, seed=seed, size=size, clock=ManualClock())


def tap_cell(p: LinesSimPhone, cell) -> object:
    x, y = (int(v) for v in p.layout.centers()[cell])
    p.tap(x, y)
    return p.gestures[-1].effect


def a_legal_move(p: LinesSimPhone) -> Move:
    move = SearchPlayer(p.config, budget_ms=0).choose(p.game.position(), np.random.default_rng(0))
    assert move is not None
    return move


def test_tap_ball_then_cell_moves_it_with_an_animation():
    p = phone(2)
    move = a_legal_move(p)
    value = int(p.board[move.src])
    assert tap_cell(p, move.src).kind == "select"
    effect = tap_cell(p, move.dst)
    assert effect.kind == "move" and p.game.turns == 1
    assert p.animating
    start = p.clock.now()
    first = p.frame_at(start)
    middle = p.frame_at(start + 0.001 + 0.5 * (p.settles_at - start))
    settled = p.frame_at(p.settles_at + 0.01)
    assert not np.array_equal(first, settled) and not np.array_equal(middle, settled)
    p.clock.sleep(p.settles_at - start + 0.01)
    if effect.outcome.removed_by_move == 0:
        assert p.board[move.dst] == value
    assert p.board[move.src] == EMPTY or move.src in {(r, c) for r, c, _ in effect.outcome.spawned}


def test_taps_that_do_nothing():
    p = phone(5)
    before = p.board
    empties = np.argwhere(before == EMPTY)
    assert tap_cell(p, tuple(empties[0])) is None  # nothing selected yet
    p.tap(2, 2)  # off the board
    assert p.gestures[-1].effect is None
    # A ball walled in by other balls cannot go anywhere.
    p.game.board[:] = 1
    p.game.board[0, 0] = 2
    p.game.board[3:, 3:] = EMPTY
    p.game.board[3:, 3:][1, 1] = EMPTY
    assert tap_cell(p, (0, 0)).kind == "select"
    assert tap_cell(p, (5, 5)).kind == "no-path"
    assert p.game.turns == 0


def test_taps_during_an_animation_are_ignored():
    p = phone(4)
    move = a_legal_move(p)
    tap_cell(p, move.src)
    tap_cell(p, move.dst)
    board = p.board
    ball = tuple(np.argwhere(board != EMPTY)[0])
    assert tap_cell(p, ball) is None
    assert p.selected is None


@pytest.mark.parametrize("size", [(720, 1280), (1080, 2400), (1600, 2560)])
def test_reader_reads_what_the_phone_shows(size):
    config = PRESETS["classic"] if size[0] == 1600 else SEED
    p = phone(7, size, config)
    profile = sim_game_profile(p)
    for _ in range(6):
        read = read_board(p.screencap(), profile)
        assert read.confident
        assert format_board(read.board) == format_board(p.board)
        move = a_legal_move(p)
        tap_cell(p, move.src)
        # the selection ring must not change how the selected ball reads
        assert format_board(read_board(p.screencap(), profile).board) == format_board(p.board)
        tap_cell(p, move.dst)
        p.clock.sleep(p.settles_at - p.clock.now() + 0.01)


def test_rainbow_ball_looks_unlike_every_colour():
    n = 48
    wild = ball_sprite(WILD, n)
    disc = wild.alpha[..., 0] > 0.99
    for v in range(1, 10):
        plain = ball_sprite(v, n).bgr
        assert np.abs(wild.bgr - plain)[disc].mean() > 40, v


def test_waiting_for_a_still_board_outlasts_the_animation():
    from agent.vision.settle import wait_until_still

    p = phone(9)
    profile = sim_game_profile(p)
    move = a_legal_move(p)
    tap_cell(p, move.src)
    tap_cell(p, move.dst)
    assert p.animating
    settled = wait_until_still(p.screencap, profile.board_bbox, profile.rows, profile.cols, p.clock, profile.settle)
    assert settled.still and not p.animating
    assert format_board(read_board(settled.frame, profile).board) == format_board(p.board)


def test_check_move_tells_what_happened():
    b = np.zeros((8, 8), np.int8)
    b[0, :4] = 1
    b[5, 5] = 1
    b[7, 0] = 2
    clear = Move((5, 5), (0, 4))
    after, gone = predict(b, clear, SEED)
    assert int(gone.sum()) == 5
    assert check_move(b, clear, after, SEED) == "cleared"
    assert check_move(b, clear, b, SEED) == "nothing happened"
    quiet = Move((7, 0), (7, 7))
    moved, _ = predict(b, quiet, SEED)
    landed = moved.copy()
    landed[3, 3], landed[4, 4], landed[6, 1] = 3, 4, WILD
    assert check_move(b, quiet, landed, SEED) == "moved"
    wrong = landed.copy()
    wrong[7, 7] = EMPTY
    assert check_move(b, quiet, wrong, SEED) == "ball not at its destination"
    recoloured = landed.copy()
    recoloured[0, 0] = 4
    assert check_move(b, quiet, recoloured, SEED) == "balls changed colour"
    flood = landed.copy()
    flood[2, 2] = 5
    assert "new balls" in check_move(b, quiet, flood, SEED)
    # the verdicts every game shares
    assert verdict_of("cleared") == verdict_of("moved") == "as_predicted"
    assert verdict_of("nothing happened") == "not_applied"
    for result in ("ball not at its destination", "balls changed colour", check_move(b, quiet, flood, SEED),
                   "line not cleared as predicted", "balls vanished"):
        assert verdict_of(result) == "unexpected", result


def _loop(p: LinesSimPhone, profile, options: PlayOptions, journal: Journal | None = None) -> PlayLoop:
    assert GAME.screen is not None
    return PlayLoop(p, GAME, profile, GAME.screen.player(profile, SETTINGS, 0), p.clock, options, journal)


def test_play_loop_plays_the_phone_through_screenshots(tmp_path):
    p = phone(1)
    profile = sim_game_profile(p)
    with Journal(tmp_path / "run.jsonl") as journal:
        summary = _loop(p, profile, PlayOptions(moves=25), journal).run()
    # The search player thinks against the wall clock, so a loaded machine plays another game,
    # and a tap may land in the last milliseconds of an animation whose frames already show
    # the final board: the phone refuses it, the loop must see that and play again.
    refused = summary.checks["not_applied"]
    assert summary.moves == 25 and p.game.turns == 25 - refused and refused <= 2
    assert set(summary.checks) <= {"as_predicted", "not_applied"} and sum(summary.checks.values()) == 25
    assert sum(1 for g in p.gestures if g.effect is None) >= refused
    # every move was checked (the 25th on the board the loop read before stopping)
    assert summary.counts["balls_removed"] == sum(o.removed_by_move for o in p.outcomes)
    assert summary.stop_reason.startswith("move limit") and summary.stop_kind == "limit"
    lines = read_journal(tmp_path / "run.jsonl")
    assert {ln["type"] for ln in lines} <= {"decision", "check", "unreadable", "stop"} and lines[-1]["type"] == "stop"
    checks = [ln for ln in lines if ln["type"] == "check"]
    assert len(checks) == 25 and sum(ln["verdict"] == "as_predicted" for ln in checks) == 25 - refused
    assert {ln["detail"] for ln in checks} <= {"moved", "cleared", "nothing happened"}  # the detail says which
    decisions = [ln for ln in lines if ln["type"] == "decision"]
    assert [d["gestures"][1][0] for d in decisions] == ["pause"] * 25  # tap the ball, a beat, tap the cell


def test_play_loop_stops_when_the_board_cannot_be_read():
    p = phone(1)
    profile = sim_game_profile(PHONE_OTHER_COLOURS())
    summary = _loop(p, profile, PlayOptions(moves=5, unreadable_timeout_s=1.0)).run()
    assert summary.moves == 0 and summary.stop_reason.startswith("board not readable")
    assert summary.stop_kind == "unreadable" and not summary.finished


def PHONE_OTHER_COLOURS() -> LinesSimPhone:
    # Two colours only: the other three and the rainbow ball are unknown to this profile.
    return phone(1, config=SEED.with_(colors=2, wildcard=False, wildcard_weight=0.0))


def test_play_loop_stops_at_game_over():
    config = SEED.with_(rows=5, cols=5, colors=5)
    p = phone(3, config=config)
    profile = sim_game_profile(p)
    summary = _loop(p, profile, PlayOptions()).run()
    assert summary.finished and p.game.over and summary.moves == p.game.turns


def test_agent_play_lines_sim_json(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "agent.cli", "play", "--game", "lines", "--sim", "--moves", "4", "--json",
         "--size", "720x1280", "--profiles", str(tmp_path / "p"), "--runs", str(tmp_path / "r")],
        capture_output=True, text=True, timeout=300, env=dict(os.environ), cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["game"] == "lines" and out["moves"] == 4 and out["sim"]["turns"] == 4
    assert set(out["checks"]) <= {"as_predicted"}
    assert (tmp_path / "p").is_dir() and list((tmp_path / "r").glob("*/*.jsonl"))


def test_agent_bench_lines_json_and_bad_options(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "agent.cli", "bench", "lines", "--games", "2", "--moves", "20", "--json",
         "--budget-ms", "0", "--png", str(tmp_path / "chart.png")],
        capture_output=True, text=True, timeout=300, env=dict(os.environ),
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [p["player"] for p in out["players"]] == ["random", "greedy", "player"]
    assert out["players"][2]["median_turns"] == 20.0
    import cv2

    chart = cv2.imread(str(tmp_path / "chart.png"))
    assert chart is not None and chart.shape[2] == 3 and (chart < 128).any()
    bad = subprocess.run([sys.executable, "-m", "agent.cli", "bench", "lines", "--variant", "huge"],
                         capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert bad.returncode == 2 and "huge" in bad.stderr and "Traceback" not in bad.stderr
