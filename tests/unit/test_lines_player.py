"""Color Lines: the move table against brute force, the players, and whole games."""

from __future__ import annotations

import numpy as np
import pytest

from agent.games.lines.bench import Summary, play_game, run_games
from agent.games.lines.board import EMPTY, WILD, Position, parse_board
from agent.games.lines.config import PRESETS
from agent.games.lines.evaluate import Evaluator, fragmentation
from agent.games.lines.linefind import find_lines
from agent.games.lines.paths import reachable
from agent.games.lines.players import GreedyPlayer, RandomPlayer, SearchPlayer, make_player
from agent.games.lines.rules import LinesGame, clear_lines

SEED = PRESETS["seed"]


def random_board(rng: np.random.Generator, rows: int = 8, cols: int = 8, colors: int = 5) -> np.ndarray:
    b = np.zeros((rows, cols), np.int8)
    n = int(rng.integers(8, rows * cols - 6))
    cells = rng.choice(rows * cols, n, replace=False)
    vals = rng.integers(1, colors + 2, n)
    vals[vals == colors + 1] = WILD
    b.ravel()[cells] = vals
    clear_lines(b, SEED.with_(rows=rows, cols=cols, colors=colors))
    return b


@pytest.mark.parametrize("shape", [(8, 8, 5), (9, 9, 7), (6, 10, 4)])
def test_move_table_matches_playing_every_move(shape):
    rows, cols, colors = shape
    ev = Evaluator(rows, cols, colors, 5)
    rng = np.random.default_rng(rows * 100 + cols)
    checked = 0
    for _ in range(4):
        b = random_board(rng, rows, cols, colors)
        table = ev.table(b)
        worth = ev.worth(b)
        for s in range(b.size):
            src = divmod(s, cols)
            reach = reachable(b, src) if b[src] != EMPTY else np.zeros_like(b, bool)
            assert (table.legal[s].reshape(rows, cols) == reach).all()
            for d in np.flatnonzero(reach):
                after = b.copy()
                after.flat[d], after.flat[s] = after.flat[s], EMPTY
                clears = bool(find_lines(after, 5).any())
                assert table.clears[s, d] == clears
                if not clears:
                    assert table.delta[s, d] == pytest.approx(ev.worth(after) - worth, abs=1e-9)
                checked += 1
    assert checked > 200


def test_players_take_a_line_when_one_is_there():
    text = "\n".join(["AAAA....", "........", "........", ".....B..", "........", "..C.....", "......A.", "D......."])
    b = parse_board(text)
    rng = np.random.default_rng(0)
    for player in (SearchPlayer(SEED, budget_ms=0), SearchPlayer(SEED, budget_ms=5), GreedyPlayer(SEED)):
        move = player.choose(Position(b), rng)
        assert move is not None and move.src == (6, 6) and move.dst == (0, 4), player.name


def test_search_player_uses_the_rainbow_ball_for_a_line():
    text = "\n".join(["BB.BB...", "........", "........", "........", "......*.", "........", "........", "........"])
    move = SearchPlayer(SEED, budget_ms=0).choose(Position(parse_board(text)), np.random.default_rng(0))
    assert move is not None and move.src == (4, 6) and move.dst == (0, 2)


def test_search_player_reopens_a_walled_off_region():
    # Row 3 and the As in column 7 cut the top three rows off; the player's best move
    # is to open the wall again, not to build on the line the wall is made of.
    rows = ["........"] * 8
    rows[1] = ".......A"
    rows[2] = ".......A"
    rows[3] = "CDCDAAA."
    rows[6] = "A......."
    b = parse_board("\n".join(rows))
    move = SearchPlayer(SEED, budget_ms=0).choose(Position(b), np.random.default_rng(0))
    after = b.copy()
    after[move.dst], after[move.src] = after[move.src], EMPTY
    assert fragmentation(b) == (22, 2)
    assert fragmentation(after) == (0, 1)


def test_players_return_only_legal_moves_and_none_without_one():
    rng = np.random.default_rng(3)
    for name in ("random", "greedy", "player"):
        player = make_player(name, SEED, budget_ms=0)
        for _ in range(5):
            b = random_board(rng)
            move = player.choose(Position(b), rng)
            assert move is not None
            assert b[move.src] != EMPTY and reachable(b, move.src)[move.dst]
        assert player.choose(Position(np.zeros((8, 8), np.int8)), rng) is None
    with pytest.raises(ValueError, match="unknown player"):
        make_player("oracle", SEED)


def test_games_replay_exactly_from_their_seed():
    player = SearchPlayer(SEED, budget_ms=0)  # no time budget: nothing depends on the clock
    a = play_game(SEED, player, seed=11, max_turns=80)
    b = play_game(SEED, player, seed=11, max_turns=80)
    assert (a.turns, a.removed, a.score) == (b.turns, b.removed, b.score)


def test_the_search_player_outlives_random_and_greedy():
    seeds = [1, 2, 3]
    turns = {}
    for player in (RandomPlayer(SEED), GreedyPlayer(SEED), SearchPlayer(SEED, budget_ms=0)):
        results = run_games(SEED, player, seeds, max_turns=150)
        turns[player.name] = Summary.of(player.name, results).mean_turns
    assert turns["player"] > 2 * turns["greedy"]
    assert turns["greedy"] >= turns["random"]
    assert turns["player"] == 150  # no game lost within 150 turns


def test_summary_figures():
    from agent.games.lines.bench import GameResult

    s = Summary.of("x", [GameResult(0, 10, 5, 5, 0.01, False), GameResult(1, 30, 20, 20, 0.03, True),
                         GameResult(2, 20, 8, 8, 0.02, False)])
    assert (s.mean_turns, s.median_turns, s.median_removed, s.capped) == (20.0, 20.0, 8.0, 1)
    assert s.ms_per_move == pytest.approx(1.0)


def test_classic_player_reads_the_preview():
    game = LinesGame.new(PRESETS["classic"], 4)
    pos = game.position()
    assert len(pos.next_balls) == 3
    move = SearchPlayer(PRESETS["classic"], budget_ms=3).choose(pos, np.random.default_rng(0))
    assert move is not None
    game.play(move)
