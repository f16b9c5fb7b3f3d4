"""Goal-aware match-3 play: a level's goal (collect a colour, break blockers) chooses the
swap first, the solver second; no goal plays exactly as before; `goal="off"` is blind."""

from __future__ import annotations

import numpy as np
import pytest

from agent.games.base import Decision, PursuesGoal
from agent.games.match3.board import UNKNOWN, Board, Move
from agent.games.match3.game import GAME, Match3Player, Match3Screen
from agent.games.match3.goal_bench import draw, levels, one_move, seen
from agent.games.match3.goal_board import ReadBoard, with_blockers
from agent.games.match3.goal_play import Aim, aim_for, predict
from agent.games.match3.rules import Match3Config, random_board
from agent.games.match3.solver import GreedySolver, make_solver
from agent.vision.goal import Goal, merge_goals

CFG5 = Match3Config(variant="classic", rows=5, cols=5, n_types=5)

# Greedy's swap (0,2)D makes four B in row 0; (3,2)D makes three A in column... row 3.
TWO_WAYS = Board.parse("""
BBCBD
ECBDE
DEDCA
AACDE
CDAEC
""")


def player(goal: Goal | None = None, mode: str = "auto", cfg: Match3Config = CFG5) -> Match3Player:
    p = Match3Player(cfg, GreedySolver(), "classic", goal=mode)
    p.set_goal(goal)
    return p


def chosen(p: Match3Player, board: Board) -> Move:
    d = p.decide(board)
    assert isinstance(d, Decision)
    return d.move


def test_a_collect_goal_takes_its_colour_over_a_bigger_match():
    greedy = chosen(player(), TWO_WAYS)
    assert greedy.same_swap(Move(0, 2, "D"))  # four B: more points
    aware = chosen(player(Goal("collect", target=12, colour="A")), TWO_WAYS)
    assert aware.same_swap(Move(3, 2, "D"))  # three A: the goal's colour
    # blind to it, the same goal changes nothing
    assert chosen(player(Goal("collect", target=12, colour="A"), mode="off"), TWO_WAYS) == greedy


def test_a_break_goal_takes_the_match_beside_a_blocker():
    # (2,2) is a crate: the three A of row 3 touch it, the four B of row 0 do not
    board = with_blockers(Board.parse("""
BBCBD
ECBDE
DE?CA
AACDE
CDAEC
"""), frozenset({(2, 2)}))
    assert isinstance(board, ReadBoard) and board.blockers == frozenset({(2, 2)})
    assert chosen(player(), board).same_swap(Move(0, 2, "D"))
    p = player(Goal("break", target=5))
    d = p.decide(board)
    assert isinstance(d, Decision) and d.move.same_swap(Move(3, 2, "D"))
    assert d.fields["goal_predicted"] == 1  # one blocker hit


def test_a_break_goal_whose_blockers_were_not_told_aims_beside_what_is_no_tile():
    # the crate at (4,0) was read as a hole: with no blocker known, the goal aims beside it
    board = Board.parse("""
BBCBD
ECBDE
DEDCA
AACDE
.DAEC
""")
    assert chosen(player(), board).same_swap(Move(0, 2, "D"))  # four B, away from it
    d = player(Goal("break", target=5)).decide(board)
    assert isinstance(d, Decision) and d.move.same_swap(Move(3, 2, "D")) and d.fields["goal_predicted"] == 1
    # a goal of another kind does not aim at holes
    assert chosen(player(Goal("collect", target=12, colour="B")), board).same_swap(Move(0, 2, "D"))


def test_a_read_board_is_a_board_in_notation_and_equality():
    b = with_blockers(Board.parse("AB?C\nBC?A\nCAAB\nABCA"), frozenset({(0, 2), (1, 2), (2, 0)}))
    assert isinstance(b, ReadBoard)
    assert b.blockers == frozenset({(0, 2), (1, 2)})  # only unknown cells hold blockers
    assert Board.parse(str(b)) == b and b == Board.parse(str(b)) and hash(b) == hash(Board.parse(str(b)))
    assert type(with_blockers(Board(b.cells), frozenset())) is Board  # no blockers: the board as it was


def test_predicted_waves_keep_blockers_in_place_and_hit_them():
    # a column of A over a crate: the A of row 0 falls past nothing; the crate stays put
    board = Board.parse("""
ABCD
ABCD
BACD
?DAB
""")
    e = predict(board, Move(2, 0, "R"), frozenset({(3, 0)}))
    assert e.cleared[0] == 3  # A, A, A down column 0
    assert e.hits == 1  # the crate under them
    assert e.after[3, 0] == UNKNOWN  # still there


def test_no_goal_plays_exactly_as_before_on_random_boards():
    rng = np.random.default_rng(3)
    cfg = Match3Config(variant="classic", rows=7, cols=7, n_types=5)
    for _ in range(40):
        b = random_board(cfg, rng)
        plain = chosen(Match3Player(cfg, GreedySolver(), "classic"), b)
        assert chosen(player(None, cfg=cfg), b) == plain
        assert chosen(player(Goal("score", target=3000), cfg=cfg), b) == plain
        assert chosen(player(Goal("collect", target=9), cfg=cfg), b) == plain  # no colour read: not playable
        assert chosen(player(Goal("collect", target=9, colour="B", left=0), cfg=cfg), b) == plain  # met


def test_goal_aware_collects_more_than_greedy_on_saga_boards():
    """One swap on each of 60 boards drawn as the saga game's levels, played by its own
    rules (specials and refills): what it clears of the goal's colour."""
    f = one_move(60, "collect", seed=1)
    assert f.at_least >= 0.85 * f.boards  # at least as many on most boards
    assert f.more >= 0.2 * f.boards  # strictly more on many
    assert f.aware >= 1.25 * f.blind, f.line("collect")


def test_goal_aware_hits_more_blockers_than_greedy_on_saga_boards():
    f = one_move(60, "break", seed=1)
    assert f.at_least >= 0.85 * f.boards
    assert f.more >= 0.3 * f.boards
    assert f.aware >= 1.4 * f.blind, f.line("break")


def test_over_a_level_goal_aware_breaks_more_blockers():
    f = levels(12, 12, "break", seed=2)
    assert f.at_least >= 0.8 * f.boards
    assert f.aware > f.blind, f.line("break")


def test_goal_progress_counts_checked_moves_and_starts_again_for_a_new_goal():
    b, colours = draw(11, 3)
    view = seen(b)
    cfg = Match3Config(variant="classic", rows=b.shape[0], cols=b.shape[1], n_types=colours)
    p = Match3Player(cfg, GreedySolver(), "classic")
    assert isinstance(p, PursuesGoal)
    assert p.goal_progress() == {}
    p.set_goal(Goal("collect", target=20, left=20, colour="A"))
    d = p.decide(view)
    assert isinstance(d, Decision)
    gain = d.fields["goal_predicted"]
    assert isinstance(gain, int)
    p.check(view, d, view.swapped(d.move))  # the swap shown without its clears: a cascade or unexpected
    made = p.goal_progress()["made"]
    assert made in (0, gain)
    p.set_goal(Goal("collect", target=20, left=17, colour="A"))  # the header counts down: the same goal
    assert p.goal_progress()["made"] == made and p.goal_progress()["left"] == 17
    p.set_goal(Goal("collect", target=15, left=15, colour="B"))  # the next level's
    assert p.goal_progress() == {"goal": "collect", "colour": "B", "target": 15, "left": 15, "made": 0,
                                 "pursued": True}  # fmt: skip


def test_a_checked_move_adds_what_it_did_for_the_goal():
    p = player(Goal("collect", target=12, colour="A"))
    d = p.decide(TWO_WAYS)
    assert isinstance(d, Decision)
    choice = p._made
    assert choice is not None
    p.check(TWO_WAYS, d, choice.predicted)  # exactly as predicted
    assert p.goal_progress()["made"] == 3


def test_the_goal_option_and_the_blind_player():
    screen = Match3Screen()
    opt = next(o for o in screen.options if o.name == "goal")
    assert opt.choices == ("auto", "off") and opt.default == "auto"
    from agent.vision.classify import Exemplar
    from agent.vision.features import DEFAULT_PATCH, feature_length
    from agent.vision.profile import GameProfile

    prof = GameProfile.from_bbox("match3", 5, 5, (0, 0, 500, 500), 500, 800,
                                 [Exemplar(k, np.full(feature_length(DEFAULT_PATCH), i * 10.0)) for i, k in enumerate("ABCDE")])  # fmt: skip
    settings = {"variant": "classic", "solver": "greedy", "steps": 30}
    assert screen.player(prof, {**settings, "goal": "off"}, 0).pursue_goal is False
    assert screen.player(prof, settings, 0).pursue_goal is True  # settings of before: auto
    with pytest.raises(ValueError):
        Match3Player(CFG5, GreedySolver(), "classic", goal="maybe")


def test_the_plan_solver_plays_a_read_board_with_a_goal():
    b, colours = draw(5, 4)
    view = seen(b)
    cfg = Match3Config(variant="classic", rows=b.shape[0], cols=b.shape[1], n_types=colours)
    p = Match3Player(cfg, make_solver("plan"), "classic")
    p.set_goal(Goal("break", target=8))
    d = p.decide(view)
    assert isinstance(d, Decision)
    assert GAME.parse_board(GAME.format_board(view)) == view


def test_a_break_goals_piece_makes_its_cells_blockers():
    # calibration took the crates for a colour (E): the goal's icon names them
    aim = aim_for(Goal("break", target=4, piece="E"), {k: i for i, k in enumerate("ABCDE")})
    assert aim == Aim("break", 4)
    board = Board.parse("ABCD\nBEEA\nCDAB\nABCA")
    assert aim.blockers_on(board) == frozenset({(1, 1), (1, 2)})
    p = player(Goal("break", target=4, piece="E"), cfg=Match3Config(variant="classic", rows=4, cols=4, n_types=5))
    d = p.decide(board)
    assert isinstance(d, Decision) and not ({(1, 1), (1, 2)} & set(d.move.cells()))  # never swiped


def test_merging_the_cards_goal_with_the_headers_count():
    card = Goal("break", target=12, piece="E", text="Break 12")
    header = Goal("collect", left=9, colour="E", piece="E", text="9")
    assert merge_goals(card, header) == Goal("break", target=12, left=9, text="9", piece="E")
    assert merge_goals(None, header) == header and merge_goals(card, None) == card
    red = Goal("collect", target=20, colour="A", piece="A")
    assert merge_goals(red, Goal("collect", left=5, colour="A", piece="A")).left == 5  # type: ignore[union-attr]
    assert merge_goals(red, Goal("collect", left=5, colour="C", piece="C")) == Goal("collect", left=5, colour="C", piece="C")
    assert merge_goals(Goal("score", target=3000), Goal("score", target=3000, text="Target 3000")).target == 3000  # type: ignore[union-attr]


def test_a_break_card_that_could_not_name_its_crate_wins_over_a_header_counting_to_its_target():
    """The intro card says "Break 6" before the board of the level is seen, so its crate
    icon matches no class yet; the board then brings the crate as a class the profile takes
    for a tile of its own colour, and the header's "0/6" beside it reads as a colour to
    collect. The same count is the same goal: break (before: the crates were played as a
    colour to collect, swiped, and the level lost five times)."""
    card = Goal("break", target=6, text="Break 6")
    header = Goal("collect", target=6, left=6, colour="J", piece="J", text="0/6")
    assert merge_goals(card, header) == Goal("break", target=6, left=6, text="0/6", piece="J")
    other = Goal("collect", target=20, left=20, colour="A", piece="A", text="0/20")
    assert merge_goals(card, other) == other  # another count: the card of another level
    assert merge_goals(Goal("score", target=6), header) == header  # only a card's break verb names a blocker


def test_a_goal_to_break_a_look_taken_for_a_tile_makes_it_a_blocker_and_it_alone(tmp_path):
    """The game says what the crate is: a goal to break it. The loop relabels that class
    a blocker of its own kind (the tiles of a colour it had joined stay tiles) and journals
    why; a goal to collect, or with learning off, changes nothing."""
    from dataclasses import replace

    from agent.device.clock import ManualClock
    from agent.games.base import Status
    from agent.games.match3.sim import SimPhone
    from agent.play.journal import Journal, read_journal
    from agent.play.loop import PlayLoop, PlayOptions
    from agent.games.match3.sim_profile import sim_game_profile

    phone = SimPhone(Match3Config(variant="classic", start_steps=30), seed=3, clock=ManualClock())
    base = sim_game_profile(phone)
    a, b = base.class_labels[:2]
    profile = replace(base, kinds={**base.kinds, b: a})  # b joined a's colour, as a cracked crate may

    def loop(options: PlayOptions, journal: Journal) -> PlayLoop:
        out = PlayLoop(phone, GAME, profile, Match3Player(phone.config, GreedySolver()), phone.clock,
                       options=options, journal=journal)  # fmt: skip
        out.levels.board(0.0)
        return out

    with Journal(tmp_path / "j.jsonl") as journal:
        collect = loop(PlayOptions(level_life=True), journal)
        collect._level_on_board(Status(None, None, goal=Goal("collect", target=6, left=6, colour=b, piece=b)), 0.0)
        assert collect.profile is profile
        lp = loop(PlayOptions(level_life=True), journal)
        lp._level_on_board(Status(None, None, goal=Goal("break", target=6, left=6, piece=b)), 0.0)
        assert lp.profile.role_of(b) == "blocker" and lp.profile.kind_of(b) == "#"
        assert lp.profile.role_of(a) == "tile" and lp.profile.kind_of(a) == a  # its colour stays a tile
    lines = [x for x in read_journal(tmp_path / "j.jsonl") if x["type"] == "profile"]
    assert len(lines) == 1 and lines[0]["classes"] == [b] and "break" in lines[0]["reason"]
    with Journal(tmp_path / "k.jsonl") as journal:
        blind = loop(PlayOptions(level_life=True, learn=False), journal)
        blind._level_on_board(Status(None, None, goal=Goal("break", target=6, left=6, piece=b)), 0.0)
        assert blind.profile is profile


def test_a_goal_colour_learned_after_the_run_began_is_aimed_at_once_the_loop_adopts_it(tmp_path):
    """A level's goal may name a colour first seen on a later board (a profile event
    learns it mid-run): the player built at the start had no id for it and played blind;
    the loop's adopted profile gives it one, and the goal is pursued."""
    from dataclasses import replace

    from agent.device.clock import ManualClock
    from agent.games.match3.game import kind_ids
    from agent.games.match3.sim import SimPhone
    from agent.games.match3.sim_profile import sim_game_profile
    from agent.play.journal import Journal
    from agent.play.loop import PlayLoop, PlayOptions

    phone = SimPhone(Match3Config(variant="classic", start_steps=30), seed=3, clock=ManualClock())
    learned = sim_game_profile(phone)
    a, new = learned.class_labels[0], learned.class_labels[-1]
    before = replace(learned, kinds={**learned.kinds, new: a})  # `new` not yet a colour of its own
    assert new not in kind_ids(before) and new in kind_ids(learned)
    player = Match3Player(phone.config, GreedySolver(), "classic", kind_ids(before))
    goal = Goal("collect", target=12, left=12, colour=new, piece=new)
    with Journal(tmp_path / "j.jsonl") as journal:
        loop = PlayLoop(phone, GAME, before, player, phone.clock, options=PlayOptions(level_life=True), journal=journal)
        player.set_goal(goal)
        assert player.goal_progress()["pursued"] is False
        loop.adopt(learned, "a look seen again and again is learned as a class")
    assert player.goal_progress()["pursued"] is True
    d = player.decide(phone.board)
    assert isinstance(d, Decision) and "goal_predicted" in d.fields


def test_bench_goals_prints_the_levels_won_by_both_players_and_their_ratio():
    import json

    from typer.testing import CliRunner

    from agent.cli import app

    r = CliRunner().invoke(app, ["bench", "goals", "--seeds", "1", "--levels", "2", "--plays", "1", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["plays"] == sum(k["plays"] for k in out["kinds"].values()) >= 1
    assert set(out["kinds"]) <= {"collect", "break"}
    for k in out["kinds"].values():
        assert 0.0 <= k["aware"] <= 1.0 and 0.0 <= k["blind"] <= 1.0
    assert out["won_aware"] == sum(k["aware"] * k["plays"] for k in out["kinds"].values())
