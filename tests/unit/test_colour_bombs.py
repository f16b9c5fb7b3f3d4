"""Colour bombs: told by what the game did with one, then played on purpose.

A colour bomb looks like nothing else on the board (a dark ball with sprinkles is no
colour to calibration, and too dark to be "of many hues"), so it reads as a look of
unknown kind. Swapped with a tile (a trial, when nothing else matches), it clears every
tile of that tile's colour: from then on it is a colour bomb, and the player swaps one
with the colour that does most (the goal's colour first).
"""

from __future__ import annotations

from agent.games.base import Decision
from agent.games.match3.board import EMPTY, Board, Move
from agent.games.match3.game import Match3Player
from agent.games.match3.goal_board import ReadBoard
from agent.games.match3.rules import Match3Config
from agent.games.match3.solver import GreedySolver
from agent.vision.bombs import fired_bomb
from agent.vision.goal import Goal

KINDS = {"A": "A", "B": "B", "C": "C", "D": "D", "X": "?"}  # X: a look of unknown kind


def _grid(text: str) -> list[list[str]]:
    return [list(row) for row in text.split()]


BEFORE = """
ABCDAB
BCXACD
CDABCA
DABCDB
ABCDBC
"""
# X at (1,2) swapped with the A at (1,3): every A went; what stood above fell, new tiles came
ALL_A_GONE = """
DBCDCB
BCDCCD
CDCBCC
DBBCDB
DBCDBC
"""


def test_a_look_whose_swap_cleared_every_tile_of_its_partners_colour_is_a_colour_bomb():
    before = _grid(BEFORE)
    after = _grid(ALL_A_GONE)
    assert fired_bomb(before, after, [(1, 2), (1, 3)], KINDS.__getitem__) == "X"
    assert fired_bomb(before, after, [(1, 3), (1, 2)], KINDS.__getitem__) == "X"  # either way round


def test_a_match_with_cascades_or_a_striped_piece_is_no_bomb():
    before = _grid(BEFORE)
    # a line of B cleared in row 3's middle and a cascade beside: the A tiles far off stayed
    after = _grid("""
    CBDDAB
    BDCACD
    CCADCA
    DAACDB
    ABCDBC
    """)
    assert fired_bomb(before, after, [(1, 2), (1, 3)], KINDS.__getitem__) is None
    gone = _grid(ALL_A_GONE)  # two tiles of known colours swapped: nothing to learn, whatever came
    assert fired_bomb(before, gone, [(2, 0), (2, 1)], KINDS.__getitem__) is None
    few = _grid("""
    ABCDCB
    BCXACD
    CDDBCC
    DABCDB
    DBCDBC
    """)  # A in three columns only (all of it gone): too few to tell
    assert fired_bomb(few, gone, [(1, 2), (1, 3)], KINDS.__getitem__) is None


def _player(goal: Goal | None = None) -> Match3Player:
    p = Match3Player(Match3Config(variant="classic", rows=5, cols=6, n_types=4), GreedySolver(), "classic",
                     {"A": 0, "B": 1, "C": 2, "D": 3})  # fmt: skip
    p.set_goal(goal)
    return p


BOARD = Board.parse("""
ABCDAB
BC?ACD
CDABCA
DABCDB
ABCDBC
""")


def test_a_colour_bomb_is_swapped_with_the_colour_that_does_most():
    """Beside the bomb: C (8 tiles on the board) and A (7). Without a goal, C."""
    bombs = ReadBoard(BOARD.cells, frozenset(), frozenset({(1, 2)}))
    p = _player()
    d = p.decide(bombs)
    assert hasattr(d, "move"), d
    assert (1, 2) in d.move.cells()
    (partner,) = [rc for rc in d.move.cells() if rc != (1, 2)]
    assert BOARD[partner] == 2 and p._made is not None and p._made.tiles_cleared == 9
    # without the bomb known, the same board is played with a match, or not at all
    plain = _player().decide(BOARD)
    assert not hasattr(plain, "move") or (1, 2) not in plain.move.cells()


def test_with_a_goal_to_collect_a_colour_the_bomb_takes_that_colour():
    bombs = ReadBoard(BOARD.cells, frozenset(), frozenset({(1, 2)}))
    p = _player(Goal("collect", target=30, left=30, colour="A", piece="A"))
    d = p.decide(bombs)
    assert hasattr(d, "move"), d
    (partner,) = [rc for rc in d.move.cells() if rc != (1, 2)]
    assert BOARD[partner] == 0 and d.fields.get("goal_predicted") == 7  # every A on the board
    made = p._made
    assert made is not None and made.tiles_cleared == 8
    # the prediction leaves each column it clears unknown down to its lowest cleared cell
    assert (made.predicted.cells[:2, 3] == EMPTY).all() and (made.predicted.cells[2:, 3] != EMPTY).all()
    assert (made.predicted.cells[:, 0] == EMPTY).all()  # an A at the bottom of column 0


def test_on_a_family_game_a_bomb_is_learned_from_a_swap_and_then_read_and_played_as_one():
    """World 5's candy art: a bomb is a dark ball with sprinkles. The grower learns its
    look as a look of unknown kind; a swap with a tile clears that tile's colour, which
    makes it a colour bomb; the board then reads it as one, and the player swaps it."""
    from dataclasses import replace
    from types import SimpleNamespace

    import numpy as np

    from agent.device.clock import ManualClock
    from agent.games.match3.game import GAME
    from agent.games.match3.hints import ROLE_HINTS
    from agent.games.match3.saga.rules import BOMB, NO_COLOUR
    from agent.vision.calibrate import calibrate_frame
    from agent.vision.grow import ClassGrower
    from test_blockers import board_of, learning_handler

    ph = board_of(5, 5)
    clock = ph.clock
    assert isinstance(clock, ManualClock)
    profile = calibrate_frame(ph.screencap(), hints=ROLE_HINTS).profile
    grower = ClassGrower(profile)
    first = ph.screencap()
    assert grower.observe(first, profile.read(first)) is None  # the board as dealt, before the bombs are made
    b = ph._board
    special, colour = b.special.copy(), b.colour.copy()
    at = [(1, 1), (4, 5), (6, 2)]
    for r, c in at:
        special[r, c], colour[r, c] = BOMB, NO_COLOUR
    ph._board = replace(b, special=special, colour=colour)
    ph._version += 1
    for _ in range(3):
        clock.advance(0.5)
        frame = ph.screencap()
        profile = grower.observe(frame, grower.profile.read(frame)) or profile
    (look,) = {v for v in profile.class_labels if profile.kind_of(v) == "?"}  # the bombs' look, learned
    assert profile.kind_of(look) == "?" and profile.role_of(look) != "colourless"  # the case: no colour to tell

    loop, handler = learning_handler(profile)
    before = profile.read(ph.screencap())
    assert all(before.labels[r][c] == look for r, c in at)
    bomb, partner = (4, 5), (4, 4)
    ph.swipe(*ph.cell_centre(*bomb), *ph.cell_centre(*partner), 100)
    clock.advance(max(0.0, ph.settles_at - clock.now()) + 0.5)
    after = profile.read(ph.screencap())
    pending = SimpleNamespace(labels=before.labels, swiped=(bomb, partner), changed=True, text=str(before.labels))
    handler.learn_from_move(pending, SimpleNamespace(reading=after, text=str(after.labels)))
    assert loop.profile.role_of(look) == "colourless" and any("colour bomb" in w for w in loop.why)
    read = GAME.screen.read(ph.screencap(), loop.profile)
    left = {(int(r), int(c)) for r, c in zip(*np.nonzero(ph._board.special == BOMB))}
    assert read.board.bombs == frozenset(left) and left  # type: ignore[attr-defined]
    d = GAME.screen.player(loop.profile, {"variant": "classic", "steps": 30, "solver": "greedy", "goal": "auto"},
                           0).decide(read.board)  # fmt: skip
    assert hasattr(d, "move") and set(d.move.cells()) & left, d


def test_a_look_of_unknown_kind_beside_the_goals_colour_is_tried_once_a_look():
    """No move has shown what the look at (1,2) does: beside A, the goal's colour, it is
    swapped with an A once (a colour bomb would take every A); the same look elsewhere is
    not tried again, whatever the game did; nor is any look without a goal to collect."""
    from agent.games.match3.goal_board import ReadBoard as RB

    looks = (((1, 2), "X"), ((3, 3), "X"))
    cells = BOARD.cells.copy()
    cells[3, 3] = -2  # (UNKNOWN) the second piece of the look
    cells[0, 0] = 2  # a match of C to play meanwhile: (0,1) down
    board = RB(cells, frozenset(), frozenset(), looks)
    p = _player(Goal("collect", target=30, left=30, colour="A", piece="A"))
    d = p.decide(board)
    assert hasattr(d, "move") and d.fields.get("trial") is True, d
    (partner,) = [rc for rc in d.move.cells() if rc != (1, 2)]
    assert BOARD[partner] == 0
    assert p.check(board, d, board).trial  # refused: an answer
    again = p.decide(board)
    assert hasattr(again, "move") and not again.fields.get("trial") and again.move == Move(0, 1, "D"), again
    blind = _player().decide(board)
    assert not (hasattr(blind, "move") and blind.fields.get("trial")), blind


NO_MATCH = Board.parse("""
DADADA
AC?BCD
DBCDBA
CBBACD
CADADC
""")  # no swap of two tiles matches; (1,2) is a piece of a look no move has shown


def test_a_break_goal_with_no_blocker_in_sight_still_tries_the_unknown_piece():
    """A break goal whose blockers the board does not show as such (its crates gone, or
    read as a colour): the unknown cells are guessed to be them, to aim beside. That guess
    must not keep the piece from its trial swap: on a board with no match as read it is
    the only move (a colour bomb, in world 7's level 2; before, the run stopped there
    with "no swap makes a match"), and a bomb known as one is swapped as with no goal."""
    goal = Goal("break", target=6, left=2, piece="#")
    plain = _player().decide(NO_MATCH)
    assert isinstance(plain, Decision) and plain.fields.get("trial"), plain
    d = _player(goal).decide(NO_MATCH)
    assert isinstance(d, Decision) and d.fields.get("trial") and (1, 2) in d.move.cells(), d
    bombs = ReadBoard(NO_MATCH.cells, frozenset(), frozenset({(1, 2)}))
    d = _player(goal).decide(bombs)
    assert isinstance(d, Decision) and (1, 2) in d.move.cells() and not d.fields.get("trial"), d
