"""Pieces of a look never seen, guessed by hue, and swapped by that guess when nothing else matches.

A striped tile the calibration never saw reads unknown; it still matches as its colour.
With no swap that matches as read, the player used to try the unknown pieces blind, side
by side (worlds 12 and 19: nine of eleven such tries undone, 81% of swipes taken). Its
hue names its colour (agent.vision.hue_guess): the swap that matches by that guess is
tried first.
"""

from __future__ import annotations

from collections import Counter

import cv2
import numpy as np
import pytest

from agent.games.base import Decision
from agent.games.match3.board import UNKNOWN, Board, Move
from agent.games.match3.game import Match3Player, Match3Screen
from agent.games.match3.goal_board import ReadBoard, guesses_of
from agent.games.match3.hints import ROLE_HINTS
from agent.games.match3.rules import Match3Config, find_groups
from agent.games.match3.saga import rules as R
from agent.games.match3.solver import GreedySolver
from agent.vision.frames import calibrate_frames
from test_blockers import board_of


def _ids_by_colour(truth: R.Board, board: Board, skip: set[tuple[int, int]]) -> dict[int, int]:
    """The game's colour -> the id the reading gives its plain tiles (by majority)."""
    votes: dict[int, Counter[int]] = {}
    for r in range(truth.colour.shape[0]):
        for c in range(truth.colour.shape[1]):
            k = int(truth.colour[r, c])
            if (r, c) in skip or k < 0 or truth.special[r, c] != R.PLAIN or board[r, c] < 0:
                continue
            votes.setdefault(k, Counter())[int(board[r, c])] += 1
    return {k: v.most_common(1)[0][0] for k, v in votes.items()}


@pytest.mark.parametrize("world", [0, 12, 19, 20])
def test_a_striped_tile_never_seen_is_guessed_its_colour(world):
    ph = board_of(world, world)
    profile = calibrate_frames([ph.screencap()], "match3", hints=ROLE_HINTS).profile
    was = ph._board
    b = R.Board(was.colour.copy(), was.special.copy(), was.blocker.copy(), was.hole.copy())
    rows, cols = b.colour.shape
    rng = np.random.default_rng(world)
    tiles = [(r, c) for r in range(rows) for c in range(cols) if b.colour[r, c] >= 0 and b.special[r, c] == R.PLAIN
             and b.blocker[r, c] == 0]  # fmt: skip
    striped = [tiles[i] for i in rng.choice(len(tiles), size=5, replace=False)]
    for i, (r, c) in enumerate(striped):
        b.special[r, c] = R.STRIPED_ROW if i % 2 else R.STRIPED_COL
    ph._board = b
    ph._version += 1  # (the phone keeps its picture of a board at rest)
    frame = ph.screencap()
    board = Match3Screen().read(frame, profile).board
    ids = _ids_by_colour(b, board, set(striped))
    guessed = dict(guesses_of(board))
    unknown = {rc for rc in striped if board[rc] == UNKNOWN}
    assert unknown, "the calibration never saw a striped tile: it reads unknown"
    # every guess is the piece's own colour; every unknown stripe of a colour with a hue
    # gets one (a grey tile's stripes may not: grey is told by lightness, which stripes change)
    assert {rc: k for rc, k in guessed.items() if rc in striped} == {rc: ids[int(b.colour[rc])] for rc in guessed
                                                                    if rc in striped}  # fmt: skip
    hued = {rc for rc in unknown if _saturation(frame, ph, b, int(b.colour[rc])) >= 80}
    assert hued <= set(guessed), (unknown, guessed)
    assert len(hued) >= 3


def _saturation(frame: np.ndarray, ph, b: R.Board, colour: int) -> float:
    """The mean HSV saturation at the centres of `colour`'s plain tiles."""
    hsv = cv2.cvtColor(frame, cv2.COLOR_BGR2HSV)
    got = [hsv[ph.cell_centre(r, c)[1], ph.cell_centre(r, c)[0], 1] for r, c in zip(*np.nonzero(b.colour == colour))
           if b.special[r, c] == R.PLAIN]  # fmt: skip
    return float(np.mean(got))


def _player() -> Match3Player:
    return Match3Player(Match3Config(n_types=4, variant="classic"), GreedySolver(), "classic")


# No swap of two tiles matches as read; (1,2) and (2,4) are pieces of unknown look.
NO_MATCH = Board.parse("""
DADADA
AC?BCD
DBCD?A
CBBACD
CADADC
""")


def _swapped(cells: np.ndarray, move: Move) -> Board:
    a = cells.copy()
    (r1, c1), (r2, c2) = move.cells()
    a[r1, c1], a[r2, c2] = a[r2, c2], a[r1, c1]
    return Board(a)


def test_with_nothing_that_matches_as_read_the_swaps_that_match_by_hue_are_tried_first():
    board = ReadBoard(NO_MATCH.cells, guesses=(((2, 4), 0),))  # (2,4)'s hue names A
    guessed = NO_MATCH.cells.copy()
    guessed[2, 4] = 0
    p = _player()
    tried: set[frozenset[tuple[int, int]]] = set()
    for _ in range(2):  # two swaps match by the guess: each tried once, each refused
        d = p.decide(board)
        assert isinstance(d, Decision) and d.fields.get("trial"), d
        groups = find_groups(_swapped(guessed, d.move))
        assert any((2, 4) in g.cells or any(rc in g.cells for rc in d.move.cells() if rc == (2, 4)) for g in groups) \
            or any((2, 4) in d.move.cells() for _ in groups), (d, groups)  # fmt: skip
        assert frozenset(d.move.cells()) not in tried
        tried.add(frozenset(d.move.cells()))
        assert p.check(board, d, board).trial
    blind = p.decide(board)  # then the blind tries of the pieces, as before
    assert isinstance(blind, Decision) and blind.fields.get("trial"), blind
    assert frozenset(blind.move.cells()) not in tried
    assert not find_groups(_swapped(guessed, blind.move))


def test_a_guess_never_comes_before_a_swap_that_matches_as_read():
    board = Board.parse("""
DADADA
AC?BCD
DBCDAA
CBBACD
CADADC
""")  # (2,3) swapped down: A A A as read; the guess (1,2) = B would match by (1,1) right too
    d = _player().decide(ReadBoard(board.cells, guesses=(((1, 2), 1),)))
    assert isinstance(d, Decision) and not d.fields.get("trial"), d
    assert find_groups(_swapped(board.cells, d.move))


def test_a_trial_swap_is_made_twice_at_most_whatever_the_screen_seemed_to_say():
    board = ReadBoard(NO_MATCH.cells)
    p = _player()
    made: list[frozenset[tuple[int, int]]] = []
    for _ in range(12):
        d = p.decide(board)
        if not isinstance(d, Decision) or not d.fields.get("trial"):
            break
        made.append(frozenset(d.move.cells()))
        # the board came back changed elsewhere, each time: never "not taken"
        other = NO_MATCH.cells.copy()
        other[4, 5] = (other[4, 5] + 1 + len(made) % 2) % 4
        assert p.check(board, d, Board(other)).trial
    assert made and max(made.count(m) for m in made) <= 2
