"""Match-3 rules: notation, matching groups, gravity, cascades, both variants, determinism."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.errors import NotationError
from agent.games.match3.board import EMPTY, Board, Move
from agent.games.match3.rules import (
    GameState,
    Match3Config,
    apply_move,
    find_groups,
    gravity,
    has_match,
    is_over,
    legal_moves,
    new_game,
    random_board,
    resolve,
)


def B(text: str) -> Board:
    return Board.parse(text)


# -- notation -----------------------------------------------------------------

boards = st.integers(3, 12).flatmap(
    lambda rows: st.integers(3, 12).flatmap(
        lambda cols: st.lists(
            st.lists(st.integers(-2, 7), min_size=cols, max_size=cols), min_size=rows, max_size=rows
        )
    )
)


@given(boards)
def test_notation_round_trips(grid):
    b = Board(np.array(grid))
    assert Board.parse(str(b)) == b
    assert str(Board.parse(str(b))) == str(b)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "empty"),
        ("ABC\nAB\nABC", "different lengths"),
        ("ABC\nAXC\nABC", "row 2, column 2"),
        ("AB\nAB", "3x3 to 12x12"),
    ],
)
def test_bad_notation_is_a_clear_value_error(text, fragment):
    with pytest.raises(NotationError, match=fragment) as info:
        Board.parse(text)
    assert isinstance(info.value, ValueError)


def test_moves_parse_and_canonicalise():
    m = Move.parse("2,3,l")
    assert m == Move(2, 3, "L") and m.other == (2, 2)
    assert m.canonical() == Move(2, 2, "R") and m.same_swap(Move(2, 2, "R"))
    with pytest.raises(NotationError):
        Move.parse("2,3")


# -- matching -----------------------------------------------------------------


def test_runs_of_three_four_five_are_single_groups():
    b = B(
        """
        AAABC
        BCDEF
        CCCCD
        DEFAB
        EEEEE
        """
    )
    sizes = sorted((g.kind, g.size) for g in find_groups(b))
    assert sizes == [(0, 3), (2, 4), (4, 5)]


def test_parallel_runs_that_share_no_cell_are_separate():
    b = B(
        """
        AAAB
        AAAC
        BCDE
        """
    )
    assert sorted(g.size for g in find_groups(b)) == [3, 3]


@pytest.mark.parametrize(
    "text, size",
    [
        # L of 5
        ("ABCDE\nABCEF\nAAADE\nCDEFA", 5),
        # T of 5
        ("AAABC\nBADEF\nCAFBD\nDEFAB", 5),
        # the seed's 7-element cross: 5 across, 3 down through the middle
        ("BCDEB\nAAAAA\nCDAEC\nDEAFD", 7),
        # the 6-shape: 4 across, 3 down from the second tile
        ("BCDEF\nCAAAA\nDABCD\nEACDE", 6),
    ],
)
def test_crossing_runs_count_as_one_elimination_of_all_cells(text, size):
    groups = find_groups(B(text))
    assert len(groups) == 1
    assert groups[0].size == size and groups[0].kind == 0


def test_empty_cells_never_match():
    b = B("...\nABC\nCAB")
    assert find_groups(b) == () and not has_match(b)


# -- gravity, refill, cascades ------------------------------------------------


def test_gravity_pulls_tiles_down_and_reports_sources():
    b = B("AB.\n.C.\nD.E")
    fallen, sources = gravity(b)
    assert str(fallen) == "...\nAB.\nDCE"
    assert sources[1, 0] == 0 and sources[2, 0] == 2 and sources[1, 1] == 0 and sources[2, 1] == 1
    assert sources[0, 0] == EMPTY


def test_cascade_without_refill_is_fully_predictable():
    # Clearing the bottom row drops column 0's AAA on top of ... forming a second match.
    b = B(
        """
        ABC
        ABC
        DAB
        EEE
        """
    )
    phases = resolve(b, n_types=6, rng=None)
    assert [p.cleared_count for p in phases] == [3]
    b2 = B(
        """
        BCD
        ACD
        AEF
        BBB
        ACE
        """
    )
    # After BBB clears, column 0 reads (top->bottom) . B A A A: AAA now lines up vertically.
    phases = resolve(b2, n_types=6, rng=None)
    assert [p.cleared_count for p in phases] == [3, 3]
    assert str(phases[-1].fallen).splitlines()[-1] == "BCE"


def test_refill_fills_every_hole_and_cascades_until_stable():
    rng = np.random.default_rng(7)
    cfg = Match3Config(rows=8, cols=8)
    for _ in range(50):
        board = random_board(cfg, rng)
        assert not has_match(board)
        a = board.cells.copy()
        a[4, 2:5] = a[4, 2]  # force a run
        phases = resolve(Board(a), cfg.n_types, rng)
        assert phases, "a forced run must clear"
        final = phases[-1].refilled
        assert (final.cells >= 0).all()
        assert not has_match(final)
        for p in phases:
            # new tiles come from above: negative sources only where the column was short
            holes_per_col = (p.fallen.cells == EMPTY).sum(axis=0)
            for c in range(cfg.cols):
                assert (p.sources[:, c] < 0).sum() == holes_per_col[c]


# -- variants -----------------------------------------------------------------


def test_step_variant_any_swap_costs_one_step():
    cfg = Match3Config(variant="step", rows=4, cols=4, start_steps=5)
    board = B("ABCD\nBCDA\nCDAB\nDABC")
    state = GameState(board=board, steps_left=5)
    out = apply_move(cfg, state, Move(0, 0, "R"), np.random.default_rng(0))
    assert out.applied and out.tiles_cleared == 0
    assert out.state.steps_left == 4 and out.state.steps_spent == 1
    assert out.state.board == board.swapped(Move(0, 0, "R"))


def test_step_variant_gives_back_steps_by_group_size_and_level():
    board = B("BCAEB\nAAFAA\nCDAEC\nDEAFD")
    move = Move(0, 2, "D")  # A drops into the gap: 5 across + 2 below = the 7-cross
    for level, gain in [(0, 4), (1, 12), (2, 36)]:
        cfg = Match3Config(variant="step", rows=4, cols=5, levels=(level,), start_steps=3)
        out = apply_move(cfg, GameState(board=board, steps_left=3), move, rng=None)
        first = out.phases[0]
        assert [g.size for g in first.groups] == [7]
        assert out.phases[0].groups[0].kind == 0
        assert out.steps_gained >= gain  # later known-only cascades may add more
        assert sum((g.size - 3) * 3 ** (level if g.kind == 0 else 0) for p in out.phases for g in p.groups) == out.steps_gained
        assert out.state.steps_left == 3 - 1 + out.steps_gained


def test_step_game_ends_when_steps_run_out():
    cfg = Match3Config(variant="step", rows=4, cols=4, start_steps=1)
    state = GameState(board=B("ABCD\nBCDA\nCDAB\nDABC"), steps_left=1)
    out = apply_move(cfg, state, Move(0, 0, "R"), rng=None)
    assert is_over(cfg, out.state) and legal_moves(cfg, out.state) == []
    with pytest.raises(ValueError, match="over"):
        apply_move(cfg, out.state, Move(0, 0, "R"), rng=None)


def test_classic_non_matching_swap_is_undone_and_free():
    cfg = Match3Config(variant="classic", rows=4, cols=4, move_budget=3)
    board = B("ABCD\nBCDA\nCDAB\nDABA")
    state = GameState(board=board)
    out = apply_move(cfg, state, Move(0, 0, "R"), np.random.default_rng(0))
    assert not out.applied and out.state is state


def test_classic_legal_moves_are_exactly_the_matching_swaps_and_budget_ends_it():
    rng = np.random.default_rng(3)
    cfg = Match3Config(variant="classic", move_budget=2)
    state = new_game(cfg, rng)
    moves = legal_moves(cfg, state)
    assert moves
    for m in moves:
        assert has_match(state.board.swapped(m))
    for _ in range(2):
        state = apply_move(cfg, state, legal_moves(cfg, state)[0], rng).state
    assert is_over(cfg, state)


def test_classic_game_over_when_no_swap_matches():
    cfg = Match3Config(variant="classic", rows=3, cols=3, n_types=6)
    stuck = GameState(board=B("ABC\nDEF\nBCA"))
    assert is_over(cfg, stuck) and legal_moves(cfg, stuck) == []


def test_swaps_touching_empty_or_outside_are_illegal():
    cfg = Match3Config(rows=3, cols=3)
    state = GameState(board=B("A.C\nDEF\nBCA"), steps_left=3)
    with pytest.raises(ValueError, match="illegal"):
        apply_move(cfg, state, Move(0, 0, "R"), rng=None)
    with pytest.raises(ValueError, match="illegal"):
        apply_move(cfg, state, Move(0, 2, "R"), rng=None)


# -- determinism --------------------------------------------------------------


def play_random(cfg: Match3Config, seed: int, n: int) -> list[str]:
    rng = np.random.default_rng(seed)
    chooser = np.random.default_rng(seed + 1000)
    state = new_game(cfg, rng)
    trace = [str(state.board)]
    for _ in range(n):
        moves = legal_moves(cfg, state)
        if not moves:
            break
        state = apply_move(cfg, state, moves[int(chooser.integers(len(moves)))], rng).state
        trace.append(f"{state.board}|{state.score}|{state.steps_left}")
    return trace


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["step", "classic"]))
def test_same_seed_and_moves_give_the_same_game(seed, variant):
    cfg = Match3Config(variant=variant, start_steps=15, move_budget=15)
    assert play_random(cfg, seed, 15) == play_random(cfg, seed, 15)


def test_different_seeds_give_different_games():
    cfg = Match3Config()
    assert play_random(cfg, 1, 5) != play_random(cfg, 2, 5)
