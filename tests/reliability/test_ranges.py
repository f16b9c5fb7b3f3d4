"""Cause 7: numbers out of range, from an option or from the screen, are refused or read
as unknown, never taken as a wrong value (a 12-digit step counter read as 0 once ended a
game as "over" after no moves)."""

from __future__ import annotations

import json

import pytest

from agent.games.match3.hud import MAX_STEPS, Hud, read_hud
from agent.games.match3.render import layout_for, render
from agent.simphone.sizes import SCREEN_SIZES
from redteam import agent, assert_handled


@pytest.mark.parametrize("size", list(SCREEN_SIZES))
def test_header_counter_is_exact_or_unknown(size):
    """Every length of counter, on every screen: the header reads the number drawn, or
    nothing (too long for its box, or beyond what the game shows), never another number."""
    layout = layout_for(*SCREEN_SIZES[size])
    for digits in range(1, 16):
        for lead in "19":
            steps = int(lead * digits)
            hud = read_hud(render(layout, [], Hud(steps, 70)), layout)
            if steps <= MAX_STEPS:
                assert hud == Hud(steps, 70), (size, steps, hud)
            else:  # unknown (a counter this long may spill into the score's box too)
                assert hud is None or (hud.score == 70 and hud.steps is None), (size, steps, hud)
    for digits in range(1, 16):
        score = int("9" * digits)
        hud = read_hud(render(layout, [], Hud(5, score)), layout)
        assert hud is None or hud.score == score, (size, score, hud)


def test_a_huge_step_count_is_refused_not_misread(tmp_path):
    r = agent("play", "--sim", "--steps", "999999999999", "--moves", "3", cwd=tmp_path, timeout=60)
    assert_handled(r, 2, says=("--steps", str(MAX_STEPS)))


def test_the_most_steps_the_header_shows_plays(tmp_path):
    r = agent("play", "--sim", "--steps", str(MAX_STEPS), "--moves", "3", "--json", cwd=tmp_path, timeout=120)
    assert_handled(r, 0)
    result = json.loads(r.out.splitlines()[-1])
    assert result["moves"] == 3 and result["stop_kind"] != "game_over", result


USAGE = [
    ("play", "--sim", "--moves", "0"),
    ("play", "--sim", "--moves", "-1"),
    ("play", "--sim", "--steps", "0"),
    ("play", "--sim", "--steps", "-3"),
    ("play", "--sim", "--size", "0x0"),
    ("play", "--sim", "--size", "99999x99999"),
    ("play", "--sim", "--size", "1e3x2e3"),
    ("play", "--sim", "--size", "nanxinf"),
    ("farm", "--sim", "65"),
    ("farm", "--sim", "-1"),
    ("farm", "--adb", "127.0.0.1:0"),
    ("farm", "--adb", "127.0.0.1:99999"),
    ("sim", "serve", "--port", "0"),
    ("sim", "serve", "--port", "65536"),
    ("sim", "serve", "--steps", "10000000"),
    ("bench", "play", "--games", "0"),
    ("bench", "lines", "--games", "0"),
    ("bench", "farm", "--sim", "0"),
    ("bench", "farm", "--sim", "65"),
    ("bench", "farm", "--sim", "x"),
    ("solve", "--game", "lightsout", "--rows", "0", "--cols", "3"),
    ("solve", "--game", "lightsout", "--rows", "100000", "--cols", "100000"),
]


@pytest.mark.parametrize("args", USAGE, ids=[" ".join(a) for a in USAGE])
def test_numeric_option_out_of_range_is_a_usage_error(tmp_path, args):
    r = agent(*args, cwd=tmp_path, timeout=60)
    # A size the solver cannot hold is a value of the problem, not of the option's type.
    assert_handled(r, (1, 2) if args[0] == "solve" else 2)
