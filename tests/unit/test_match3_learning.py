"""The match-3 player learns the game's rules by watching (`--variant auto`), plays around
cells it cannot read, and stops swiping a cell that never moves."""

from __future__ import annotations

from agent.games.match3.board import Board, Move
from agent.games.match3.game import Match3Player
from agent.games.base import Decision
from agent.games.match3.rules import Match3Config, has_match, is_legal_swap
from agent.games.match3.solver import GreedySolver, evaluate


def player(variant: str | None = None, cfg: Match3Config | None = None) -> Match3Player:
    cfg = cfg or Match3Config(variant="classic", rows=4, cols=4, n_types=4)
    return Match3Player(cfg, GreedySolver(), variant)


NO_MATCH = Board.parse("""
ABCD
BCDA
CDAB
DABC
""")

WITH_MATCH = Board.parse("""
AABA
BCDB
CDAC
DABD
""")


def test_auto_plays_only_matching_swaps_until_it_knows():
    p = player("auto")
    d = p.decide(WITH_MATCH)
    assert not isinstance(d, type(None)) and d.fields.get("probe") is None
    assert has_match(WITH_MATCH.swapped(d.move))  # a move under every rule set


def test_auto_probes_when_nothing_matches_and_learns_classic_from_an_undone_swap():
    p = player("auto")
    d = p.decide(NO_MATCH)
    assert d.fields["probe"] is True
    check = p.check(NO_MATCH, d, NO_MATCH)  # the game swapped it back
    assert check.verdict == "rules_changed" and p.known_variant == "classic"
    assert p.learned().rules == {"variant": "classic"} and "undone" in p.learned().evidence[0]
    again = p.decide(NO_MATCH)  # classic and nothing matches: wait for the game's reshuffle
    assert getattr(again, "wait", False) and not hasattr(again, "move")


def test_auto_tries_a_piece_of_unknown_kind_before_probing_the_rules():
    """Nothing matches, but a piece of unknown kind sits among tiles (a colour bomb the
    calibration never saw): it is tried first, as classic rules would take it; the probe
    of the rules waits for a board with no such piece."""
    p = player("auto")
    with_piece = Board.parse("ABCD\nBC?A\nCDAB\nDABC")
    d = p.decide(with_piece)
    assert d.fields.get("trial") and not d.fields.get("probe"), d.fields
    assert (1, 2) in d.move.cells()
    p.moved(True)
    after = Board.parse("ABCD\nBCDA\nCDAB\nDABC")  # taken: something happened to it
    p.check(with_piece, d, after)
    assert p.known_variant is None
    d2 = p.decide(NO_MATCH)
    assert d2.fields.get("probe"), d2.fields


def test_auto_learns_step_rules_when_a_non_matching_swap_is_taken():
    p = player("auto")
    d = p.decide(NO_MATCH)
    check = p.check(NO_MATCH, d, NO_MATCH.swapped(d.move))
    assert check.verdict == "rules_changed" and p.known_variant == "step" and p.config.variant == "step"


def test_a_probe_whose_result_is_something_else_teaches_nothing():
    p = player("auto")
    d = p.decide(NO_MATCH)
    other = Board.parse("BBCD\nBCDA\nCDAB\nDABC")  # changed, but not by that swap
    assert p.check(NO_MATCH, d, other).verdict == "unexpected" and p.known_variant is None
    assert p.learned().rules == {}


def test_step_rules_contradicted_by_an_undone_set_up_swap_switch_to_classic():
    cfg = Match3Config(variant="step", rows=4, cols=4, n_types=4, start_steps=30)
    p = player(None, cfg)
    d = p.decide(NO_MATCH)  # under step rules any swap is a move
    assert d.fields["predicted_cleared"] == 0
    check = p.check(NO_MATCH, d, NO_MATCH)
    assert check.verdict == "rules_changed" and p.known_variant == "classic"


def test_a_cell_that_never_moves_is_played_as_immovable():
    p = player("classic")
    first = WITH_MATCH  # its one matching swap moves (0,2)
    d1 = p.decide(first)
    assert (0, 2) in d1.move.cells()
    p.moved(False)  # the swipe was ignored: nothing moved on the screen
    assert p.check(first, d1, first).verdict == "not_applied"
    assert not hasattr(p.decide(first), "move")  # not the swipe the game just ignored, on the same board
    second = Board.parse("""
    AABA
    BCDB
    CDAC
    DACD
    """)  # another board (something else moved); its one match needs (0,2) again
    d2 = p.decide(second)
    assert (0, 2) in d2.move.cells()
    p.moved(False)
    assert p.check(second, d2, second).verdict == "not_applied"
    assert (0, 2) in p.learned().immovable and "did not move" in p.learned().evidence[-1]
    assert (0, 0) not in p.learned().immovable  # the match's other cells: the swipe never moved (0,2)
    assert not hasattr(p.decide(Board.parse("AABA\nBCDB\nCDAC\nDBCD")), "move")  # (0,2) is never swiped again
    p.reset_board()  # a new level: cells start afresh
    assert p.learned().immovable == ()


def test_a_cell_whose_tile_changed_colour_is_no_blocker_whatever_it_refused():
    """Refusals count per piece, not per place: a cell that refused two swipes was played
    as immovable, but once its tile turns into another colour (it fell, or was cleared and
    refilled) it holds another piece, and no blocker changes colour: it is swiped again
    (before: kept immovable for the level, it hid the board's one move, and the run
    stopped on "no swap makes a match")."""
    p = player("classic")
    first = WITH_MATCH
    d1 = p.decide(first)
    assert p.check(first, d1, first).verdict == "not_applied"
    second = Board.parse("AABA\nBCDB\nCDAC\nDACD")
    d2 = p.decide(second)
    assert p.check(second, d2, second).verdict == "not_applied"
    assert (0, 2) in p.learned().immovable
    # a swap elsewhere is taken; (0,2) is refilled with another colour on the way
    third = Board.parse("DACA\nBDCB\nADBC\nCBDA")
    d3 = p.decide(third)
    assert (0, 2) not in d3.move.cells()
    after = third.swapped(d3.move)
    p.check(third, d3, Board.parse("DADA\n" + "\n".join(str(after).splitlines()[1:])))
    assert (0, 2) not in p.learned().immovable and "changed colour" in p.learned().evidence[-1]
    # a tile read as unknown for a frame says nothing: a refusal kept is kept
    q = player("classic")
    d = q.decide(first)
    q.check(first, d, first)
    assert (0, 2) in q._refused
    q._forget_refusals(first, Board.parse("AA?A\nBCDB\nCDAC\nDABD"))
    assert (0, 2) in q._refused


def test_a_crate_read_as_tiles_that_two_refused_matches_needed_is_played_as_immovable():
    """A 2x2 crate read as four tiles (DD over EE at the left edge): every swap that lines
    a D up with its D pair is undone by the game. The refused match's other cells are
    suspects as its swapped ones are, and two refused matches that needed the same cells
    make them immovable: the next board's match through them is not swiped, one elsewhere
    is (world 11 swiped three such swaps on one level, each undone)."""
    cfg = Match3Config(variant="classic", rows=5, cols=5, n_types=5)
    p = player("classic", cfg)
    first = Board.parse("CDECE\nCAEBD\nDDADC\nEEBAE\nADCCE")  # one matching swap: (2,2) right
    d1 = p.decide(first)
    assert str(d1.move) == "2,2,R"
    p.moved(True)  # swapped on the screen, and swapped back
    assert p.check(first, d1, first).verdict == "not_applied"
    only = Board.parse("AEEAA\nACDCA\nDDCBD\nEEABB\nEBCCD")  # one matching swap: (1,2) down
    d2 = p.decide(only)
    assert str(d2.move) == "1,2,D"
    p.moved(True)
    assert p.check(only, d2, only).verdict == "not_applied"
    learned = p.learned()
    assert {(2, 0), (2, 1)} <= set(learned.immovable), learned
    assert any("matches the game would not make" in e for e in learned.evidence), learned.evidence
    elsewhere = Board.parse("EABEC\nBDCDB\nDDABC\nEECDC\nDECBD")  # (1,2) down through them, (0,4) down
    d3 = p.decide(elsewhere)
    assert str(d3.move) == "0,4,D", d3


def test_a_cell_that_refused_a_swipe_once_waits_while_another_swap_is_there():
    """One refused swipe does not prove a blocker (a second does), but it makes its cells
    suspects: on the next board a swap elsewhere comes first, so the proof costs no move
    while there is another to make; with no other, a suspect is swiped again."""
    p = player("classic", Match3Config(variant="classic", rows=5, cols=5, n_types=4))
    first = Board.parse("AABDA\nCDABC\nABCDA\nCDABC\nABCDA")  # one matching swap: (0,2) down
    d1 = p.decide(first)
    suspects = set(d1.move.cells())
    assert suspects == {(0, 2), (1, 2)}
    assert p.check(first, d1, first).verdict == "not_applied"
    second = Board.parse("AABDA\nCDABC\nABCDA\nCDABC\nABCAA")  # that swap, and (3,2) down
    d2 = p.decide(second)
    assert hasattr(d2, "move") and not set(d2.move.cells()) & suspects, d2
    only = Board.parse("ABDAA\nCDABC\nABCDA\nCDABC\nABCDA")  # another board whose one swap is (0,2) down
    d3 = p.decide(only)
    assert hasattr(d3, "move") and set(d3.move.cells()) == suspects, d3


def test_a_kind_that_refused_a_swipe_and_was_never_swapped_makes_its_fellows_suspects():
    """Crates of a new level read as a tile of a colour of their own (F): one refuses a
    swipe, and the other crates wait too while a swap elsewhere is there (before: each crate
    refused once, two or three refused swipes a level). The blame falls on the rarer kind
    of the two swiped, one the game never swapped on this board."""
    cfg = Match3Config(variant="classic", rows=5, cols=6, n_types=6)
    p = player("classic", cfg)
    first = Board.parse("AAFBCD\nBCAEDB\nCDBAEC\nDEFCAD\nECDBFA")  # one swap: the crate at (0,2) down
    d1 = p.decide(first)
    assert hasattr(d1, "move") and (0, 2) in d1.move.cells()
    assert p.check(first, d1, first).verdict == "not_applied"
    second = Board.parse("CADBAE\nDCBEAD\nBBFBBD\nEACEAD\nDCEAEB")  # another crate, in the best swap
    assert player("classic", cfg).decide(second).move == Move(1, 2, "D")  # (unwary, it is swiped)
    d2 = p.decide(second)
    assert hasattr(d2, "move") and (2, 2) not in d2.move.cells(), d2


def test_pieces_no_move_has_shown_to_move_wait_while_another_swap_is_there():
    """The loop names the cells of a look that came with a new board and never moved (a
    crate the colour of a tile, judged a special of it): a swap elsewhere comes first,
    even a smaller one; with no other swap they are played, not given up."""
    cfg = Match3Config(variant="classic", rows=5, cols=6, n_types=6)
    board = Board.parse("CADBAE\nDCBEAD\nBBCBBD\nEACEAD\nDCEAEB")  # (1,2) down makes five of B
    unwary = player("classic", cfg).decide(board)
    assert hasattr(unwary, "move") and (2, 2) in unwary.move.cells(), unwary
    p = player("classic", cfg)
    p.wary_of(frozenset({(2, 2)}))
    wary = p.decide(board)
    assert hasattr(wary, "move") and (2, 2) not in wary.move.cells(), wary
    assert has_match(board.swapped(wary.move))
    only = Board.parse("ABDAA\nCDABC\nABCDA\nCDABC\nABCDA")  # one matching swap: (0,2) down
    p = player("classic", Match3Config(variant="classic", rows=5, cols=5, n_types=4))
    p.wary_of(frozenset({(0, 2)}))
    forced = p.decide(only)
    assert hasattr(forced, "move") and set(forced.move.cells()) == {(0, 2), (1, 2)}, forced


def test_every_swipe_ignored_on_one_board_is_avoided_not_only_the_last():
    """Moves that the game ignored one after another on the same board: the next is none
    of them (before: each refusal let the ones before it back in, and three refusals in
    a row stopped the run on a board whose obstacles read as tiles)."""
    board = Board.parse("""
    AABDB
    ACCAC
    BCACB
    CBCAB
    CDBAC
    """)  # four matching swaps that share no cell
    p = player("classic", Match3Config(variant="classic", rows=5, cols=5, n_types=4))
    tried: list[set[tuple[int, int]]] = []
    for _ in range(3):
        d = p.decide(board)
        assert hasattr(d, "move") and not any(set(d.move.cells()) & t for t in tried)
        tried.append(set(d.move.cells()))
        assert p.check(board, d, board).verdict == "not_applied"
    d = p.decide(board)  # another move, or none (then the game must change the board)
    assert not hasattr(d, "move") or not set(d.move.cells()) & set().union(*tried)


def test_unknown_cells_are_neither_swapped_nor_matched():
    # (0,1) unknown: swapping it down would make AAA if it were A, but it is not known
    board = Board.parse("""
    A?AB
    BADC
    CDBB
    DCCA
    """)
    p = player("classic")
    d = p.decide(board)
    assert hasattr(d, "move")
    for r, c in d.move.cells():
        assert board[r, c] >= 0  # never the unknown cell
    assert not is_legal_swap(board, Move(0, 1, "D")) and not is_legal_swap(board, Move(0, 0, "R"))
    # an unknown piece is not counted in a match, whatever it may be
    assert not has_match(Board.parse("A?AB\n?BDC\nABBB\nDCCA".replace("BBB", "B?B")))


def test_a_plan_check_ignores_cells_unknown_on_either_board():
    from agent.games.match3.verify import check_outcome

    board = Board.parse("AABA\nBC?B\nCDAC\nDABD")
    choice = evaluate(Match3Config(variant="classic", rows=4, cols=4, n_types=4), board, Move(0, 2, "R"))
    assert choice.tiles_cleared == 3
    after = choice.predicted.cells.copy()
    after[after < 0] = 0  # refilled: unknown to the prediction
    c = check_outcome(board, choice, Board(after))
    assert c.verdict in ("as_predicted", "cascade")


def test_an_ignored_swipe_is_not_an_undone_one():
    """A swipe the phone never showed moving (a locked screen, a swipe too fast) says
    nothing about the rules: only a swap seen moving and coming back is undone."""
    p = player("auto")
    d = p.decide(NO_MATCH)
    p.moved(False)
    assert p.check(NO_MATCH, d, NO_MATCH).verdict == "not_applied" and p.known_variant is None
    cfg = Match3Config(variant="step", rows=4, cols=4, n_types=4, start_steps=30)
    q = player(None, cfg)
    d = q.decide(NO_MATCH)
    q.moved(False)
    assert q.check(NO_MATCH, d, NO_MATCH).verdict == "not_applied" and q.known_variant == "step"


def test_with_no_match_a_piece_of_unknown_kind_among_tiles_is_tried_once_a_side_never_an_edge_one():
    """No swap matches by colour, and a piece the profile never saw sits among tiles (a
    colour bomb: the game's only move is to swap it): it is swapped with a tile beside
    it, to see what the game does (before: "game over: no swap makes a match", and the run
    stopped). A piece read unknown at the board's edge (what shows through a hole) is not
    tried, and a trial the game refuses is not made again, even once the board reads otherwise
    elsewhere (a look learned meanwhile), but the piece's other sides are (a striped piece
    swaps only into a match of its colour; before, a board whose only match was a striped
    piece's other side stopped the run); nor is its refusal a failed move: a striped piece
    the game swaps only into a match refused three trials in a row, and the run stopped on
    "3 moves in a row did not do what the rules predicted"."""
    board = Board.parse("""
    ?BCDA
    BCDAB
    CD?BC
    DABCD
    ABCDA
    """)
    p = player("classic", Match3Config(variant="classic", rows=5, cols=5, n_types=4))
    d = p.decide(board)
    assert hasattr(d, "move") and d.fields.get("trial") is True
    assert (2, 2) in d.move.cells() and (0, 0) not in d.move.cells()
    refused = p.check(board, d, board)
    assert refused.verdict == "not_applied" and refused.trial and not refused.ok  # the game refused it
    swaps = {frozenset(d.move.cells())}
    for _ in range(3):  # its three other sides, one by one, each once
        again = p.decide(board)
        assert hasattr(again, "move") and again.fields.get("trial") is True and (2, 2) in again.move.cells()
        assert frozenset(again.move.cells()) not in swaps and (0, 0) not in again.move.cells()
        swaps.add(frozenset(again.move.cells()))
        assert p.check(board, again, board).trial
    again = p.decide(board)
    assert not hasattr(again, "move") and "no swap makes a match" in again.reason
    elsewhere = Board.parse("""
    ?BCDA
    BCDAB
    CD?BC
    DABCD
    ABCDB
    """)  # the corner read otherwise: another board's text, the same piece in the middle
    assert not hasattr(p.decide(elsewhere), "move")
    # the side it is swapped to: where it lands beside two tiles of one kind in a line (a
    # striped piece swaps only into a match of its colour), here right, under D D
    lined = Board.parse("ABCDA\nBCADB\nCD?BC\nDABCD\nABCDA")
    d = player("classic", Match3Config(variant="classic", rows=5, cols=5, n_types=4)).decide(lined)
    assert hasattr(d, "move") and d.fields.get("trial") is True and d.move == Move(2, 2, "R"), d


def test_a_line_on_a_board_at_rest_is_played_around():
    """A crate read as a tile of the colour beside it makes a line of three on a board at
    rest, which no game leaves: its cells are played around. Before, every swap looked
    like a match through that line, and each one the solver chose only for it was a swap
    the game undid."""
    board = Board.parse("""
    ABADA
    BDCAB
    CCCBA
    DABAD
    ABDDC
    """)  # row 2's CCC: one of them is no C; real matches elsewhere make 3 (0,3,D; 3,4,D)
    p = player("classic", Match3Config(variant="classic", rows=5, cols=5, n_types=4))
    d = p.decide(board)
    assert isinstance(d, Decision), d
    assert not set(d.move.cells()) & {(2, 0), (2, 1), (2, 2)} and d.fields["predicted_cleared"] == 3, (d.move, d.fields)
    board = Board.parse("""
    ABAD
    BDCA
    CCCB
    DABA
    """)  # no match but through the line
    d = p.decide(board)
    assert not isinstance(d, Decision), d.move
