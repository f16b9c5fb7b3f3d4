"""The Junqi board's text notation: one character per station, round-trips, and names the
row and column of anything it cannot read."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.errors import AgentError, NotationError
from agent.games.junqi.board import Board, JunqiNotationError
from agent.games.junqi.layouts import SEED_MASK, STANDARD
from agent.games.junqi.pieces import LEGEND, Kind, Piece, Side

CHARS = "." + "".join(k.value for k in Kind) + "".join(k.value.lower() for k in Kind)


def board_texts(rows: int, cols: int = 5):
    row = st.text(alphabet=CHARS, min_size=cols, max_size=cols)
    return st.lists(row, min_size=rows, max_size=rows).map("\n".join)


@settings(max_examples=200, deadline=None)
@given(st.one_of(board_texts(12), board_texts(13)))
def test_text_round_trips(text):
    b = Board.parse(text)
    assert str(b) == text
    assert Board.parse(str(b)) == b
    assert Board.parse(b.to_text(legend=True)) == b
    assert b.topology is (STANDARD if text.count("\n") == 11 else SEED_MASK)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(
    st.tuples(st.integers(0, 11), st.integers(0, 4)),
    st.builds(Piece, st.sampled_from(Side), st.sampled_from(Kind)),
))
def test_boards_round_trip(pieces):
    b = Board.from_pieces(pieces)
    again = Board.parse(str(b))
    assert again == b and dict(again.pieces()) == pieces


def test_letters_and_case():
    b = Board.parse("\n".join(["M.e..", "....."] + ["....."] * 10))
    assert b[(0, 0)] == Piece(Side.RED, Kind.MARSHAL)
    assert b[(0, 2)] == Piece(Side.BLUE, Kind.ENGINEER)
    assert b[(0, 1)] is None
    assert len({k.value for k in Kind}) == len(Kind)  # one letter per kind
    for k in Kind:
        assert k.value in LEGEND and k.english in LEGEND


def test_comments_and_blank_lines_are_skipped():
    text = "# a comment\n\n" + "\n".join(["....."] * 5 + ["", "  ..E..  "] + ["....."] * 6)
    assert Board.parse(text)[(5, 2)] == Piece(Side.RED, Kind.ENGINEER)


def test_errors_name_the_line_row_and_column():
    rows = ["....."] * 12
    bad = rows.copy()
    bad[3] = "..q.."
    with pytest.raises(JunqiNotationError, match=r"line 4 \(row 3, column 2\): 'q'"):
        Board.parse("\n".join(bad))
    short = rows.copy()
    short[7] = "...."
    with pytest.raises(JunqiNotationError, match=r"line 8 \(row 7\) has 4 characters.*\(5\)"):
        Board.parse("\n".join(short))
    with pytest.raises(JunqiNotationError, match=r"12 \(standard\) or 13 \(seed13x5\) rows, got 11"):
        Board.parse("\n".join(rows[:11]))
    with pytest.raises(JunqiNotationError, match="no rows"):
        Board.parse("# only a comment\n")
    with pytest.raises(JunqiNotationError, match="standard board has 12 rows, got 13"):
        Board.parse("\n".join(["....."] * 13), STANDARD)


def test_notation_errors_are_agent_errors_with_the_legend_as_the_fix():
    with pytest.raises(NotationError) as exc:
        Board.parse("?")
    assert isinstance(exc.value, ValueError) and isinstance(exc.value, AgentError)
    assert LEGEND in exc.value.hint
