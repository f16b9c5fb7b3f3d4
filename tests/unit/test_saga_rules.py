"""The saga game's rules: undone swaps, specials, blockers, holes, falls, levels."""

from __future__ import annotations

import numpy as np
import pytest

from agent.games.match3.saga.levels import SHAPES, generate_level, greedy_move, hole_pattern, level_rng
from agent.games.match3.saga.rules import (
    BOMB, PLAIN, STRIPED_COL, STRIPED_ROW, Board, cascade, clusters, has_move, make_board, matching_swaps, play,
    reshuffle, takes_effect,
)  # fmt: skip


def board_of(text: str, specials: dict[tuple[int, int], int] | None = None) -> Board:
    """Letters are colours (A = 0), "." a hole, "#" a 1-hit crate, "%" a 2-hit one, "*" a bomb."""
    rows = [line.strip() for line in text.strip().splitlines()]
    shape = (len(rows), len(rows[0]))
    colour = np.full(shape, -1, np.int8)
    special = np.zeros(shape, np.int8)
    blocker = np.zeros(shape, np.int8)
    hole = np.zeros(shape, bool)
    for r, line in enumerate(rows):
        for c, ch in enumerate(line):
            if ch == ".":
                hole[r, c] = True
            elif ch == "#":
                blocker[r, c] = 1
            elif ch == "%":
                blocker[r, c] = 2
            elif ch == "*":
                special[r, c] = BOMB
            else:
                colour[r, c] = ord(ch) - ord("A")
    for cell, kind in (specials or {}).items():
        special[cell] = kind
    return make_board(colour, special, blocker, hole)


def rng() -> np.random.Generator:
    return np.random.default_rng(5)


def test_a_swap_that_matches_nothing_is_undone():
    b = board_of("""
        ABCD
        BCDA
        CDAB
        DABC""")
    assert not takes_effect(b, (0, 0), (0, 1))
    out = play(b, (0, 0), (0, 1), 4, rng())
    assert not out.applied and out.board is None and out.points == 0


def test_a_matching_swap_clears_and_scores():
    b = board_of("""
        ABAD
        BCBA
        CDAB
        DBCD""")
    out = play(b, (0, 1), (1, 1), 4, rng())  # the B goes down: B B B on row 1
    assert out.applied
    assert out.phases[0].cleared == frozenset({(1, 0), (1, 1), (1, 2)})
    assert out.points >= 60


def test_runs_of_four_and_five_make_specials():
    b = board_of("""
        AABAA
        CCACD
        DBCBD""")
    out = play(b, (0, 2), (1, 2), 4, rng())  # the A moves up: five in a row
    assert out.phases[0].created == ((0, 2, -1, BOMB),)
    b4 = board_of("""
        AABAD
        CCACB
        DBCBD""")
    out = play(b4, (0, 2), (1, 2), 4, rng())
    assert out.phases[0].created == ((0, 2, 0, STRIPED_ROW),)
    down = board_of("""
        ABC
        ADC
        BAD
        ACB""")
    out = play(down, (2, 0), (2, 1), 4, rng())
    assert out.phases[0].created == ((2, 0, 0, STRIPED_COL),)


def test_an_l_shape_makes_a_bomb():
    b = board_of("""
        ABC
        ACD
        DAA
        ACB""")
    out = play(b, (2, 0), (3, 0), 4, rng())  # A comes up to (2,0): a column of 3 and a row of 3
    assert out.applied
    assert out.phases[0].created == ((2, 0, -1, BOMB),)
    assert {(0, 0), (1, 0), (2, 0), (2, 1), (2, 2)} <= out.phases[0].cleared


def test_a_striped_special_clears_its_line():
    b = board_of("""
        ABADC
        CDBCD
        DCBDC""", {(1, 2): STRIPED_ROW})
    # B B at column 2 rows 1-2 and a B swapped in at (0,2): the column clears, and the
    # striped B at (1,2) takes its whole row with it
    out = play(b, (0, 1), (0, 2), 4, rng())
    assert out.applied
    assert {(1, c) for c in range(5)} <= out.phases[0].cleared
    col = board_of("""
        ABADC
        CDBCD
        DCBDC""", {(1, 2): STRIPED_COL})
    out = play(col, (0, 1), (0, 2), 4, rng())
    assert not ({(1, 0), (1, 4)} & out.phases[0].cleared)


def test_a_bomb_swapped_with_a_tile_clears_its_colour():
    b = board_of("""
        A*BCA
        CDBAD
        ABCDA""")
    assert takes_effect(b, (0, 1), (1, 1))
    out = play(b, (0, 1), (1, 1), 4, rng())
    assert out.applied
    ds = {(r, c) for r in range(3) for c in range(5) if b.colour[r, c] == 3}
    assert ds <= out.phases[0].cleared
    assert not ({(r, c) for r in range(3) for c in range(5) if b.colour[r, c] == 0} & out.phases[0].cleared)


def test_blockers_take_hits_and_break():
    b = board_of("""
        BCDB
        CDBC
        %ACC
        BCAA""")
    # the A at (2,1) goes down: row 3 reads B A A A, beside the crate at (2,0)
    out = play(b, (2, 1), (3, 1), 4, rng())
    assert out.applied
    first = out.phases[0]
    assert (2, 0) in first.hits and first.after_clear.blocker[2, 0] == 1
    assert out.board is not None and out.board.blocker[2, 0] == 1
    assert out.board.kinds()[2][0] == "#"
    one = board_of("""
        BCDB
        CDBC
        #ACC
        BCAA""")
    out = play(one, (2, 1), (3, 1), 4, rng())
    assert (2, 0) in out.phases[0].broken
    assert out.board is not None and out.board.blocker[2, 0] == 0 and out.board.is_tile(2, 0)


def test_blockers_and_holes_never_swap_nor_match():
    b = board_of("""
        ###D
        AB.A
        CDBC""")
    assert not takes_effect(b, (0, 2), (0, 3))
    assert not takes_effect(b, (1, 1), (1, 2))
    assert clusters(b) == []


def test_tiles_fall_over_holes_and_blockers():
    b = board_of("""
        BCD
        CDB
        %.C
        AAA
        DBD""")
    phases = cascade(b, 4, rng())
    first = phases[0]
    after = first.after
    # column 0: the C above the crate lands below it; column 1: the D passes the hole
    assert after.colour[3, 0] == 2 and first.sources[3, 0] == 1
    assert after.colour[3, 1] == 3 and first.sources[3, 1] == 1
    assert after.colour[1, 0] == 1 and first.sources[1, 0] == 0
    assert first.sources[0, 0] < 0  # a refill from above
    assert after.hole[2, 1] and after.blocker[2, 0] == 1 and after.colour[2, 1] == -1
    assert after.kinds()[2][:2] == "#."


@pytest.mark.parametrize("seed", range(6))
def test_no_match_is_left_at_rest_and_a_move_remains(seed):
    lv = generate_level(3, level_rng(seed, 3), simulate=False)
    g = np.random.default_rng(seed)
    board = lv.start_board(g)
    assert clusters(board) == [] and has_move(board)
    for _ in range(12):
        m = greedy_move(board, lv.colours, g)
        assert m is not None
        out = play(board, *m, lv.colours, g)
        assert out.applied and out.board is not None
        board = out.board
        assert clusters(board) == [] and has_move(board)
        assert (board.hole == lv.hole_mask()).all()
        assert ((board.colour >= 0) | (board.special == BOMB) | board.hole | (board.blocker > 0)).all()


def test_a_board_without_moves_is_reshuffled():
    b = board_of("""
        ABCD
        CDAB
        ABCD
        CDAB""")
    assert clusters(b) == [] and not has_move(b)
    s = reshuffle(b, rng())
    assert clusters(s) == [] and has_move(s)
    assert sorted(s.colour.ravel().tolist()) == sorted(b.colour.ravel().tolist())


def test_kinds_notation():
    b = board_of("""
        A*.
        #BC""", {(1, 1): STRIPED_ROW})
    assert b.kinds() == ["A*.", "#BC"]
    assert b.special[1, 1] == STRIPED_ROW and b.special[1, 2] == PLAIN


def test_levels_are_determined_by_the_seed_and_vary():
    a = [generate_level(k, level_rng(4, k), simulate=False) for k in range(1, 7)]
    b = [generate_level(k, level_rng(4, k), simulate=False) for k in range(1, 7)]
    c = [generate_level(k, level_rng(5, k), simulate=False) for k in range(1, 7)]
    assert a == b and a != c
    for lv in a:
        assert 7 <= lv.rows <= 9 and 7 <= lv.cols <= 9 and 20 <= lv.moves <= 30
        assert all(not lv.hole_mask()[r, c] for r, c, _ in lv.blockers)
    assert len({(lv.rows, lv.cols, lv.holes) for lv in a}) >= 4
    g1, g2 = np.random.default_rng(1), np.random.default_rng(1)
    assert a[2].start_board(g1).kinds() == a[2].start_board(g2).kinds()
    for shape in SHAPES[1:]:
        assert hole_pattern(shape, 8, 8, np.random.default_rng(0)).any(), shape


def test_a_target_is_reached_by_greedy_play_within_the_budget():
    lv = generate_level(2, level_rng(0, 2))
    assert lv.target > 0
    g = np.random.default_rng(99)
    board, score = lv.start_board(g), 0
    for used in range(1, lv.moves + 1):
        m = greedy_move(board, lv.colours, g)
        assert m is not None
        out = play(board, *m, lv.colours, g)
        assert out.board is not None
        board, score = out.board, score + out.points
        if score >= lv.target:
            break
    assert score >= lv.target and used < lv.moves


def test_matching_swaps_are_exactly_those_kept():
    lv = generate_level(4, level_rng(2, 4), simulate=False)
    board = lv.start_board(np.random.default_rng(3))
    kept = set(matching_swaps(board))
    rows, cols = board.shape
    for r in range(rows):
        for c in range(cols):
            for o in ((r, c + 1), (r + 1, c)):
                if o[0] < rows and o[1] < cols:
                    out = play(board, (r, c), o, lv.colours, np.random.default_rng(0))
                    assert out.applied == (((r, c), o) in kept)
