"""Color Lines rules: rainbow semantics, paths, turn order, notation, determinism."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.games.lines.board import EMPTY, WILD, LinesNotationError, Position, format_board, parse_board
from agent.games.lines.config import PRESETS, LinesConfig, preset
from agent.games.lines.linefind import find_lines
from agent.games.lines.paths import reachable, shortest_path
from agent.games.lines.rules import IllegalMoveError, LinesGame, Move

SEED = PRESETS["seed"]


def removed(text: str, length: int = 5) -> str:
    """The board with the balls lines would remove shown as 'x'."""
    board = parse_board(text)
    mask = find_lines(board, length)
    rows = format_board(board).splitlines()
    return "\n".join("".join("x" if mask[r, c] else ch for c, ch in enumerate(row)) for r, row in enumerate(rows))


def test_plain_lines_in_all_four_directions():
    assert removed("AAAAA...\n........") == "xxxxx...\n........"
    col = "\n".join(["B......."] * 5 + ["........"])
    assert removed(col).splitlines()[:5] == ["x......."] * 5
    diag = "\n".join("." * i + "C" + "." * (7 - i) for i in range(5)) + "\n........"
    assert removed(diag).count("x") == 5
    anti = "\n".join("." * (7 - i) + "D" + "." * i for i in range(5)) + "\n........"
    assert removed(anti).count("x") == 5


def test_four_is_not_a_line_and_other_colours_break_runs():
    assert "x" not in removed("AAAA.AAA\n........")
    assert "x" not in removed("AABAA...\n........")


def test_longer_lines_are_removed_whole():
    assert removed("AAAAAAA.\n........") == "xxxxxxx.\n........"


def test_rainbow_joins_a_colours_line():
    assert removed("AA*AA...\n........") == "xxxxx...\n........"
    # The seed's own example: the run B**BB... no, A**CCC: the rainbows join the Cs, not the A.
    assert removed(".A**CCC.\n........") == ".Axxxxx.\n........"


def test_one_rainbow_completes_two_colours_in_one_row():
    assert removed("AAAA*BBBB\n.........") == "xxxxxxxxx\n........."


def test_one_rainbow_completes_lines_in_two_directions():
    text = "\n".join([
        "....A...",
        "....A...",
        "....A...",
        "....A...",
        "BBBB*...",
        "........",
    ])
    out = removed(text)
    assert out.count("x") == 9
    assert out.splitlines()[4] == "xxxxx..."


def test_rainbow_balls_alone_are_not_a_line():
    assert "x" not in removed("*****...\n........")
    assert "x" not in removed("******..\n........")


def test_rainbow_run_counts_once_a_colour_reaches_it():
    assert removed("*****A..\n........") == "xxxxxx..\n........"
    # Four rainbows and a colour make exactly five.
    assert removed("A****B..\n........") == "xxxxxx..\n........"


def test_rainbow_between_two_short_runs_does_not_make_a_line():
    assert "x" not in removed("AA*BB...\n........")


def test_shortest_path_goes_around_balls():
    board = parse_board(
        "\n".join([
            "A.B.....",
            ".BB.....",
            "........",
        ])
    )
    path = shortest_path(board, (0, 0), (0, 1))
    assert path == [(0, 0), (0, 1)]
    walled = parse_board("A.B\nBB.\n...")
    assert shortest_path(walled, (0, 0), (2, 2)) is None
    assert shortest_path(walled, (0, 0), (0, 1)) == [(0, 0), (0, 1)]
    open_board = parse_board("A......\n.BBBBB.\n.......")
    path = shortest_path(open_board, (0, 0), (2, 3))
    assert path is not None and len(path) == 1 + 5  # down 2, right 3
    for (r1, c1), (r2, c2) in zip(path, path[1:]):
        assert abs(r1 - r2) + abs(c1 - c2) == 1
        assert open_board[r2, c2] == EMPTY


def test_reachable_is_the_regions_next_to_the_ball():
    board = parse_board("A.B\nBB.\n...")
    assert reachable(board, (0, 0)).sum() == 1
    assert reachable(board, (1, 1)).sum() == 1 + 3 + 1  # (0,1) and the L of empties


def test_notation_round_trips_and_rejects_bad_text():
    text = "A.*\n.BC\nI.."
    assert format_board(parse_board(text)) == text
    pos = Position(parse_board(text), (1, WILD, 3), 42)
    assert Position.parse(str(pos)) == pos
    with pytest.raises(LinesNotationError, match="row 2, column 1"):
        parse_board("A..\nZ..")
    with pytest.raises(LinesNotationError, match="different lengths"):
        parse_board("A..\nA.")


def _game(text: str, next_balls: tuple[int, ...] = (1, 2, 3), seed: int = 0, **cfg) -> LinesGame:
    config = SEED.with_(**cfg) if cfg else SEED
    return LinesGame.from_position(config, Position(parse_board(text), next_balls), np.random.default_rng(seed))


EMPTY8 = ["........"] * 8


def test_a_clearing_move_spawns_nothing_and_scores():
    rows = list(EMPTY8)
    rows[0] = "AAAA...."
    rows[3] = "......A."
    rows[6] = "B......."
    g = _game("\n".join(rows))
    out = g.play(Move((3, 6), (0, 4)))
    assert out.removed_by_move == 5 and out.spawned == ()
    assert int((g.board != EMPTY).sum()) == 1
    assert g.score == 5 and g.turns == 1


def test_a_move_that_empties_the_board_brings_new_balls():
    rows = list(EMPTY8)
    rows[0] = "AAAA...."
    rows[3] = "......A."
    g = _game("\n".join(rows))
    out = g.play(Move((3, 6), (0, 4)))
    assert len(out.spawned) == 3 and int((g.board != EMPTY).sum()) == 3


def test_a_quiet_move_spawns_the_previewed_balls():
    rows = list(EMPTY8)
    rows[0] = "B......."
    rows[7] = ".......C"
    g = _game("\n".join(rows), next_balls=(1, WILD, 4))
    out = g.play(Move((0, 0), (4, 4)))
    assert out.removed_by_move == 0
    assert sorted(v for _, _, v in out.spawned) == sorted([1, WILD, 4])
    assert int((g.board != EMPTY).sum()) == 5
    assert len(g.next_balls) == 3


def test_spawn_never_lands_on_a_line_before_it_is_cleared():
    # The move completes a line: its five cells are empty again before anything lands,
    # and nothing lands at all; a quiet move may then refill those cells.
    rows = list(EMPTY8)
    rows[0] = "AAAA...."
    rows[2] = "B......."
    rows[5] = "....A..."
    g = _game("\n".join(rows))
    out = g.play(Move((5, 4), (0, 4)))
    assert out.removed_by_move == 5 and out.spawned == ()
    assert (g.board[0, :5] == EMPTY).all()


def test_lines_the_spawn_makes_are_removed_and_scored():
    # 7 cells free: the quiet move leaves 4, the spawn fills 3 of them; only a C can
    # complete CCCC, so force every new ball to be C.
    text = "\n".join(["CCCC.", "BDBD.", "DBDB.", "BDBD.", "DBD.."])
    config = SEED.with_(rows=5, cols=5, colors=4, wildcard=False, wildcard_weight=0.0)
    for seed in range(10):
        g = LinesGame.from_position(config, Position(parse_board(text), (3, 3, 3)), np.random.default_rng(seed))
        out = g.play(Move((4, 2), (4, 4)))  # D moves: no line
        assert out.removed_by_move == 0
        landed = {(r, c) for r, c, _ in out.spawned}
        if (0, 4) in landed:
            assert out.removed_by_spawn >= 5 and (g.board[0, :4] == EMPTY).all()
            assert g.score == out.points > 0
            break
    else:
        pytest.fail("no seed landed a C on the completing cell")


def test_game_over_when_the_board_fills():
    text = "\n".join(["ABCD.", "CDABD", "BCDAC", "DABC.", "ABCDB"])
    config = SEED.with_(rows=5, cols=5, colors=4, wildcard=False, wildcard_weight=0.0)
    g = LinesGame.from_position(config, Position(parse_board(text), (1, 2, 3)), np.random.default_rng(0))
    out = g.play(Move((4, 4), (3, 4)))  # two cells left for three balls
    assert len(out.spawned) == 2 and out.over and g.over and not (g.board == EMPTY).any()
    with pytest.raises(IllegalMoveError, match="over"):
        g.play(Move((0, 0), (1, 1)))


def test_illegal_moves_are_refused_with_a_reason():
    g = _game("A.B\nBB.\n...", rows=3, cols=3, initial_balls=0, line_length=3)
    with pytest.raises(IllegalMoveError, match="no path"):
        g.play(Move((0, 0), (2, 2)))
    with pytest.raises(IllegalMoveError, match="no ball"):
        g.play(Move((0, 1), (2, 2)))
    with pytest.raises(IllegalMoveError, match="not empty"):
        g.play(Move((0, 0), (0, 2)))
    with pytest.raises(IllegalMoveError, match="off the"):
        g.play(Move((0, 0), (5, 0)))


def test_classic_scoring_and_preset_shapes():
    classic = preset("classic")
    assert (classic.rows, classic.cols, classic.colors, classic.preview) == (9, 9, 7, True)
    assert [classic.points(n) for n in (5, 6, 7, 9)] == [10, 12, 18, 42]
    assert SEED.points(6) == 6
    with pytest.raises(ValueError, match="unknown preset"):
        preset("nope")
    with pytest.raises(ValueError, match="colors"):
        LinesConfig(colors=12)


def test_preview_is_shown_only_when_the_variant_has_it():
    assert LinesGame.new(preset("classic"), 3).position().next_balls != ()
    assert LinesGame.new(SEED, 3).position().next_balls == ()


def _replay(seed: int, config: LinesConfig, turns: int) -> list[str]:
    game = LinesGame.new(config, seed)
    pick = np.random.default_rng(seed + 1)
    seen = [str(game.position())]
    for _ in range(turns):
        if game.over:
            break
        balls = np.argwhere(game.board != EMPTY)
        for r, c in balls[pick.permutation(len(balls))]:
            dst = np.argwhere(reachable(game.board, (int(r), int(c))))
            if len(dst):
                d = dst[pick.integers(len(dst))]
                game.play(Move((int(r), int(c)), (int(d[0]), int(d[1]))))
                break
        seen.append(str(game.position()))
    return seen


def test_same_seed_same_game_and_different_seeds_differ():
    for config in PRESETS.values():
        assert _replay(5, config, 30) == _replay(5, config, 30)
        assert _replay(5, config, 30) != _replay(6, config, 30)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(list(PRESETS)))
def test_positions_after_play_never_hold_a_line(seed, name):
    config = PRESETS[name]
    game = LinesGame.new(config, seed)
    pick = np.random.default_rng(seed)
    for _ in range(15):
        if game.over:
            break
        assert not find_lines(game.board, config.line_length).any()
        assert Position.parse(str(game.position())) == game.position()
        balls = np.argwhere(game.board != EMPTY)
        r, c = balls[pick.integers(len(balls))]
        dst = np.argwhere(reachable(game.board, (int(r), int(c))))
        if len(dst) == 0:
            continue
        d = dst[pick.integers(len(dst))]
        before = int((game.board != EMPTY).sum())
        out = game.play(Move((int(r), int(c)), (int(d[0]), int(d[1]))))
        after = int((game.board != EMPTY).sum())
        assert after == before - out.removed + len(out.spawned)


def test_the_seed_articles_examples():
    # Its first test row: 3 6 6 3 3 4 4 (6 is the rainbow ball): the first five go.
    assert removed("C**CCDD.\n........") == "xxxxxDD.\n........"
    # Its second: 1 6 6 3 3 3 4: the line starts at the rainbows, not at the 1.
    assert removed("A**CCCD.\n........") == "AxxxxxD.\n........"
    # Its diagonal test: 1 6 6 3 3 3 4 down the main diagonal.
    values = "A**CCCD."
    text = "\n".join("." * i + values[i] + "." * (7 - i) for i in range(8))
    out = removed(text).splitlines()
    assert [out[i][i] for i in range(8)] == list("AxxxxxD.")
