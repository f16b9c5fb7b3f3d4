"""The conformance suite: every registered game, checked the same way (agent.play.conformance).

A game added to the registry is tested here without a line of its own: its notation
round-trips, its simulated phone's frames read back as the phone's true board at three
screen sizes, a seeded game is deterministic, and its player's check accepts what the
phone did and catches moves the phone never made.
"""

from __future__ import annotations

import pytest

from agent.play import conformance as checker
from agent.games.base import Game
from agent.games.registry import game_names, get_game, playable, simulated, solvable

ALL = game_names()
SIMULATED = simulated()


def test_the_registry_lists_every_game_once_and_each_loads_under_its_own_name():
    assert len(set(ALL)) == len(ALL)
    for name in ALL:
        game = get_game(name)
        assert game.name == name and game.title
        # The protocol is structural: check the members every command uses are there.
        for member in ("parse_board", "format_board", "screen", "sim", "solver"):
            assert hasattr(game, member), (name, member)


def test_what_the_commands_offer_comes_from_the_registry():
    assert set(SIMULATED) <= set(playable()) <= set(ALL)
    assert {"match3", "lines", "lightsout"} <= set(SIMULATED)
    assert {"match3", "lightsout", "junqi"} <= set(solvable())
    assert "junqi" not in playable()  # solved only: no screen to read


@pytest.mark.parametrize("name", SIMULATED)
def test_sim_frames_read_back_as_the_true_board_at_three_sizes(name):
    checker.check_sim_reads(get_game(name))


@pytest.mark.parametrize("name", SIMULATED)
def test_a_seeded_game_is_deterministic(name):
    checker.check_deterministic(get_game(name))


@pytest.mark.parametrize("name", SIMULATED)
def test_the_check_accepts_what_the_phone_did_and_catches_what_it_did_not(name):
    checker.check_outcomes(get_game(name))


@pytest.mark.parametrize("name", SIMULATED)
def test_notation_round_trips_on_boards_the_phone_shows(name):
    from agent.device.clock import ManualClock
    from agent.games.registry import settings

    game: Game = get_game(name)
    assert game.sim is not None
    texts = []
    for seed in range(5):
        phone = game.sim.phone(settings(game, {}, sim=True), seed, (1080, 2400), ManualClock(), None)
        texts.append(game.format_board(game.sim.true_board(phone)))
    checker.check_notation(game, texts)
    assert len(set(texts)) > 1  # seeds deal different boards


def test_the_checker_catches_a_game_whose_notation_does_not_round_trip():
    class Lossy:
        name = "lossy"

        def parse_board(self, text):
            return text.strip().upper()

        def format_board(self, board):
            return board

    with pytest.raises(checker.ConformanceError, match="round-trip"):
        checker.check_notation(Lossy(), ["ab\ncd"])  # type: ignore[arg-type]


@pytest.mark.parametrize("name", [n for n in ALL])
def test_an_option_a_game_does_not_take_is_a_usage_error_naming_both(name):
    from agent.errors import UsageError
    from agent.games.registry import settings

    game = get_game(name)
    if game.screen is None:
        return
    with pytest.raises(UsageError) as e:
        settings(game, {"no_such_option": "x"}, sim=True)
    assert e.value.option == "--no-such-option" and name in str(e.value) and e.value.exit_code == 2
    for opt in game.screen.options:
        if opt.choices:
            with pytest.raises(UsageError, match="bogus-value") as e:
                settings(game, {opt.name: "bogus-value"}, sim=True)
            assert e.value.option == opt.flag
