"""A match-3 profile the rules cannot hold is refused before play, naming the count."""

from __future__ import annotations

import numpy as np
import pytest

from agent.errors import ProfileError
from agent.games.match3.board import MAX_TYPES
from agent.games.registry import get_game
from agent.vision.classify import Exemplar
from agent.vision.features import feature_length
from agent.vision.profile import GameProfile


def _profile(labels: str) -> GameProfile:
    rng = np.random.default_rng(0)
    exemplars = [Exemplar(lab, rng.normal(0, 30, feature_length())) for lab in labels]
    return GameProfile.from_bbox("match3", 8, 8, (0, 0, 800, 800), 1080, 2400, exemplars)


@pytest.mark.parametrize("n", [MAX_TYPES + 1, MAX_TYPES + 5])
def test_more_kinds_than_the_rules_hold_is_refused(n):
    names = [f"k{i:02d}" for i in range(n)]
    rng = np.random.default_rng(1)
    exemplars = [Exemplar(name, rng.normal(0, 30, feature_length())) for name in names]
    profile = GameProfile.from_bbox("match3", 8, 8, (0, 0, 800, 800), 1080, 2400, exemplars)
    with pytest.raises(ProfileError, match=f"{n} colour kinds.*at most {MAX_TYPES}") as info:
        get_game("match3").screen.check_profile(profile)
    assert "calibrate" in info.value.hint


def test_up_to_the_rules_limit_is_taken():
    get_game("match3").screen.check_profile(_profile("ABCDEFGH."))
    get_game("match3").screen.check_profile(_profile("ABC"))


def test_classes_of_one_kind_are_one_tile_type():
    """A special (or a lit look) of a colour matches as that colour: one type, so a game
    of seven colours with four specials fits the rules."""
    from dataclasses import replace

    from agent.games.match3.reader import label_types

    labels = "ABCDEFGIJKL"  # seven colours A-G, four more looks I-L of A, B, C and G
    profile = replace(_profile(labels + "."), kinds={"I": "A", "J": "B", "K": "C", "L": "G"})
    types = label_types(profile)
    assert types["I"] == types["A"] and types["J"] == types["B"] and types["L"] == types["G"]
    assert len(set(types.values())) == 7
    get_game("match3").screen.check_profile(profile)  # 11 classes, 7 kinds: taken
    with pytest.raises(ProfileError):
        get_game("match3").screen.check_profile(replace(profile, kinds={}))  # 11 kinds: refused


def test_kinds_past_the_rules_limit_read_unknown_not_a_board_that_cannot_be_read():
    """A run that learns the looks of a new level's obstacles as kinds of their own may hold
    more kinds than the rules have colours: those cells read unknown (the board is played
    without them), the others keep their colours."""
    from dataclasses import replace

    from agent.games.match3.reader import label_types

    profile = replace(_profile("ABCDEFGHIJ."), kinds={})
    types = label_types(profile)
    assert sorted(types) == list("ABCDEFGH") and sorted(types.values()) == list(range(8))
