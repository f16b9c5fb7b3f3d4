"""Checking a move's outcome on the next still board."""

from __future__ import annotations

from agent.games.match3.board import Board, Move
from agent.games.match3.rules import Match3Config
from agent.games.match3.solver import Choice, evaluate
from agent.games.match3.verify import at_rest, check_outcome

CFG = Match3Config(rows=4, cols=4)
BEFORE = Board.parse("ABCD\nBCDA\nACBB\nDABC")


def test_swap_without_clear_must_show_exactly_the_swapped_board():
    move = Move(0, 0, "R")
    choice = evaluate(CFG, BEFORE, move)
    assert choice.tiles_cleared == 0
    assert check_outcome(BEFORE, choice, BEFORE.swapped(move)).verdict == "as_predicted"
    assert check_outcome(BEFORE, choice, BEFORE).verdict == "not_applied"
    other = BEFORE.swapped(Move(3, 0, "R"))
    assert check_outcome(BEFORE, choice, other).verdict == "unexpected"


def test_clearing_swap_predicted_part_and_cascades():
    before = Board.parse("ABCD\nBCDA\nCACC\nDABD")
    move = Move(2, 1, "U")  # the C above drops into row 2: C C C C
    choice = evaluate(CFG, before, move)
    assert choice.tiles_cleared == 4
    # the prediction: row 2 cleared, everything above falls one row, the top row unknown
    assert str(choice.predicted) == "....\nABCD\nBADA\nDABD"
    refilled = Board.parse("EFAB\nABCD\nBADA\nDABD")
    assert check_outcome(before, choice, refilled).verdict == "as_predicted"
    # new tiles that line up with known ones clear them too: a cascade, still fine
    cascaded = Board.parse("FEAB\nEBCD\nBCDA\nDABD")
    check = check_outcome(before, choice, cascaded)
    assert check.verdict == "cascade" and check.agreeing < check.known_cells
    assert check_outcome(before, choice, before).verdict == "not_applied"
    # a board that still shows 3 in a row cannot be the result
    assert check_outcome(before, choice, Board.parse("AAAB\nABCD\nBCDA\nDABD")).verdict == "unexpected"


def test_at_rest_rejects_matches_and_new_holes():
    before = Board.parse("ABC\nBCA\nCAB")
    assert at_rest(before, Board.parse("CAB\nBCA\nCAB"))
    assert not at_rest(before, Board.parse("...\nBCA\nCAB"))  # tiles still dropping in
    assert not at_rest(before, Board.parse("AAA\nBCA\nCAB"))  # about to clear
    holed = Board.parse("A.C\nBCA\nCAB")
    assert at_rest(holed, Board.parse("C.B\nBCA\nCAB"))  # a hole that was there stays


def test_a_cell_read_unknown_on_one_side_only_is_no_change():
    # The game undid a trial swap of an unknown piece with the C above it; the piece read
    # unknown before (a hint glowing on it) and as a D after, at rest again. Nothing known
    # on both sides changed: not taken (it was judged "unexpected", never marked as tried,
    # and the same trial was swiped forty times in world 12).
    before = Board.parse("ABCD\nBCDA\nA?BB\nDABC")
    after = Board.parse("ABCD\nBCDA\nADBB\nDABC")
    move = Move(2, 1, "U")
    choice = Choice(move, 0, 0, 1, 0, (0, 0), before.swapped(move))  # a trial: its prediction is the swapped board
    assert check_outcome(before, choice, after).verdict == "not_applied"
    # a taken swap changes what was known
    assert check_outcome(before, choice, before.swapped(Move(2, 1, "U"))).verdict != "not_applied"
