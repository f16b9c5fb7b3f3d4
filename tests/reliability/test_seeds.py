"""Cause 6: a negative or huge seed is a usage error (exit 2) naming --seed."""

from __future__ import annotations

import pytest

from redteam import agent, assert_handled

COMMANDS = [
    ("play", "--sim", "--moves", "2"),
    ("play", "--sim", "--game", "lines", "--moves", "2"),
    ("farm", "--sim", "1", "--moves", "2"),
    ("sim", "screenshot", "x.png"),
    ("sim", "serve"),
    ("bench", "play", "--games", "1", "--moves", "2"),
    ("bench", "solve", "--boards", "2"),
    ("bench", "lines", "--games", "1"),
    ("bench", "lightsout", "--repeat", "1"),
    ("calibrate", "--sim", "--yes"),
]


@pytest.mark.parametrize("seed", ["-1", "-99999999999999999999"])
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_negative_seed_is_a_usage_error(tmp_path, command, seed):
    r = agent(*command, "--seed", seed, cwd=tmp_path, timeout=60)
    assert_handled(r, 2, says="--seed")


def test_farm_seeds_past_the_cap_are_a_usage_error(tmp_path):
    """Phone i gets seed + i: the last one must fit too, checked before any phone starts."""
    from agent.cli.app import SEED_MAX

    r = agent("farm", "--sim", "3", "--moves", "2", "--seed", str(SEED_MAX - 1), cwd=tmp_path, timeout=60)
    assert_handled(r, 2, says=("--seed", str(SEED_MAX + 1)))
