"""A run of a game of levels: when a level ends, and how it ended (agent.play.levels)."""

from __future__ import annotations

from agent.games.base import Status
from agent.play.levels import HEADER_LAG_S, ZERO_READS, LevelTracker
from agent.vision.goal import Goal


def _played(tr: LevelTracker, t: float, moves: int, level: int | None = None, left: int = 10) -> None:
    tr.board(t)
    tr.status(Status(moves_left=left, score=0, level=level), t)
    for _ in range(moves):
        tr.moved()


def test_a_move_counter_at_0_ends_the_level_not_the_run_and_the_card_says_won():
    tr = LevelTracker()
    _played(tr, 0.0, 15, level=1)
    for i in range(ZERO_READS):
        assert not tr.ending
        tr.status(Status(moves_left=0, score=900, level=1), 1.0 + i)
    assert tr.ending == "the move counter reads 0"
    rec = tr.screen("won", None, None, 5.0, "covered")
    assert rec is not None and rec.won is True and rec.moves == 15 and rec.score == 900 and rec.level == 1
    assert tr.current is None and tr.won == 1 and tr.lost == 0


def test_one_zero_or_a_zero_before_any_move_is_doubted():
    tr = LevelTracker()
    tr.board(0.0)
    zero = Status(moves_left=0, score=0, level=3)
    tr.status(zero, 0.0)
    assert tr.zero_doubted(zero) and not tr.ending  # no move made in this level yet
    tr.moved()
    zero = Status(moves_left=0, score=0, level=3)
    tr.status(zero, 1.0)
    assert tr.zero_doubted(zero) and not tr.ending  # read once only
    tr.status(zero, 1.5)  # the same reading again (the header is read every few frames): still once
    assert tr.zero_doubted(zero) and not tr.ending
    zero = Status(moves_left=0, score=0, level=3)
    tr.status(zero, 2.0)
    assert not tr.zero_doubted(zero) and tr.ending


def test_a_failed_level_then_the_same_level_again_counts_a_retry():
    tr = LevelTracker()
    _played(tr, 0.0, 20, level=4)
    lost = tr.screen("lost", None, None, 3.0)
    assert lost is not None and lost.won is False
    _played(tr, 4.0, 12, level=4)
    assert tr.current is not None and tr.current.retries == 1
    won = tr.screen("won", None, None, 9.0)
    assert won is not None and won.won and won.retries == 1
    assert (tr.won, tr.lost) == (1, 1)


def test_without_a_card_the_next_level_number_tells_the_outcome():
    tr = LevelTracker()
    _played(tr, 0.0, 9, level=2)
    closed = tr.new_board(5.0)  # a board of another shape: a new level
    assert closed is not None and closed.won is None
    _played(tr, 6.0, 1, level=3)
    resolved = tr.resolve()
    assert resolved == [closed] and closed.won is True and "next level was 3" in closed.how
    _played(tr, 7.0, 0)
    closed2 = tr.new_board(8.0)
    assert closed2 is not None  # the level of 1 move ended too
    _played(tr, 9.0, 1, level=3)
    tr.resolve()
    # the same number right after a board of another shape may be the header not yet redrawn
    assert closed2.won is None and tr.current is not None and tr.current.level is None
    tr.status(Status(moves_left=9, score=0, level=3), 8.0 + HEADER_LAG_S)  # still 3, well after
    tr.resolve()
    assert closed2.won is False and "came again" in closed2.how


def test_a_level_whose_number_was_never_read_takes_it_from_its_neighbours():
    tr = LevelTracker()
    _played(tr, 0.0, 6, level=4)
    first = tr.screen("won", 4, 1200, 1.0)  # level 4 won, its card read
    assert first is not None and first.won is True
    _played(tr, 2.0, 7)  # no number read on this level's header, intro or card
    unread = tr.new_board(3.0)
    assert unread is not None and unread.level is None and unread.won is None
    _played(tr, 4.0, 2, level=6)  # the level after it reads 6: it was level 5, and won
    tr.resolve()
    assert (unread.level, unread.won) == (5, True) and unread.level_from == "neighbours"
    assert [r.level for r in tr.records] == [4, 5, 6]

    tr = LevelTracker()
    _played(tr, 0.0, 6, level=4)
    tr.screen("won", 4, 1200, 1.0)
    _played(tr, 2.0, 7)
    unread = tr.new_board(3.0)
    _played(tr, 4.0, 2, level=5)  # 5 comes next: the unread one was 5, lost, and 5 is its retry
    tr.resolve()
    assert (unread.level, unread.won) == (5, False) and tr.records[-1].retries == 1
    assert "came again" in unread.how

    tr = LevelTracker()
    _played(tr, 0.0, 6, level=4)
    tr.screen("won", 4, 1200, 1.0)
    _played(tr, 2.0, 7)
    unread = tr.new_board(3.0)
    _played(tr, 4.0, 2, level=9)  # neither 5 nor 6: nothing to tell it by
    tr.resolve()
    assert unread.level is None and unread.won is None


def test_the_header_level_changing_under_the_agent_ends_the_level():
    tr = LevelTracker()
    _played(tr, 0.0, 5, level=6)
    assert tr.status(Status(moves_left=20, score=0, level=8), 2.0) == []  # once: a misread, maybe
    assert tr.status(Status(moves_left=20, score=0, level=7), 2.5) == []
    closed = tr.status(Status(moves_left=20, score=0, level=7), 3.0)
    assert [r.level for r in closed] == [6] and closed[0].won is True
    assert tr.current is not None and tr.current.level == 7 and tr.current.moves == 0


def test_a_goal_read_as_met_ends_the_level_as_won_when_no_card_says_otherwise():
    tr = LevelTracker()
    tr.board(0.0)
    tr.status(Status(moves_left=20, score=0, level=1, goal=Goal("collect", 12, 12, "B")), 0.0)
    tr.moved()
    tr.status(Status(moves_left=19, score=60, level=1, goal=Goal("collect", None, 0)), 1.0)
    assert tr.ending == "the goal reads as met"
    cur = tr.current
    assert cur is not None and cur.goal == Goal("collect", 12, 0, "B")  # the colour kept from the first reading
    closed = tr.new_board(2.0)
    assert closed is not None and closed.won is True and "goal" in closed.how


def test_an_intro_cards_goal_goes_to_the_next_level_and_a_dialog_over_the_board_ends_nothing():
    tr = LevelTracker()
    _played(tr, 0.0, 3, level=1)
    assert tr.screen(None, None, None, 1.0, "covered") is None and not tr.ending  # a tip over the board
    tr.screen("won", None, None, 2.0)
    tr.screen(None, 2, None, 3.0, "intro")
    tr.goal(Goal("break", 20), 3.0)
    tr.board(4.0)
    cur = tr.current
    assert cur is not None and cur.level == 2 and cur.goal == Goal("break", 20)


def test_the_run_stopping_mid_level_leaves_it_open_ended_and_an_unplayed_level_is_no_attempt():
    tr = LevelTracker()
    _played(tr, 0.0, 4, level=1)
    rec = tr.finish(2.0)
    assert rec is not None and rec.won is None and rec.as_dict()["moves"] == 4
    tr2 = LevelTracker()
    tr2.board(0.0)
    assert tr2.finish(1.0) is None and tr2.records == []


def test_a_header_number_that_is_not_the_next_level_ends_nothing_and_a_cards_number_wins():
    tr = LevelTracker()
    tr.screen(None, 2, None, 0.0, "intro")  # the intro card names level 2 in big words
    _played(tr, 1.0, 3, level=4)  # its header's small digits read as 4
    for i in range(3):
        assert tr.status(Status(moves_left=10, score=0, level=4), 2.0 + i) == []
    cur = tr.current
    assert cur is not None and cur.level == 2 and cur.moves == 3


def test_a_swipe_the_game_did_not_take_uses_none_of_the_levels_moves():
    tr = LevelTracker()
    _played(tr, 0.0, 3, level=5)
    tr.moved()
    tr.not_taken()  # the board did not change: the game refused the swipe
    assert tr.current is not None and tr.current.moves == 3
    for _ in range(4):
        tr.not_taken()
    assert tr.current is not None and tr.current.moves == 0  # never below none
    tr.finish(1.0)
    assert tr.records == []  # a level whose every swipe was refused is no attempt


def test_a_header_reading_from_before_the_new_board_names_nothing_of_it():
    """The header is read every few frames, and its last reading stands between; and a
    game may redraw its header a moment after the new board. A board of a new shape came
    (level 2 over): until the header shows another number, its reading is level 2's, and
    must not name the new board level 2 with level 2's goal (before: the new level was
    recorded as a retry of level 2, then "won" when the header said 3, and level 2 "lost",
    though the game had counted 3 levels won and none lost)."""
    tr = LevelTracker()
    tr.board(0.0)
    before = Status(moves_left=4, score=80, level=2, goal=Goal("score", target=2000, text="TARGET 2000"))
    tr.status(before, 0.0)
    for _ in range(8):
        tr.moved()
    assert tr.new_board(1.0) is not None  # another shape: level 2 is over
    tr.board(1.0)
    tr.status(before, 1.0)  # the same reading, taken before the board changed
    cur = tr.current
    assert cur is not None and cur.level is None and cur.goal is None and cur.score is None
    # read again, but the header not redrawn yet: level 2's number, moves and goal
    tr.status(Status(moves_left=13, score=80, level=2, goal=Goal("score", target=2000, text="TARGET 2000")), 1.1)
    tr.moved()  # (and a move made meanwhile)
    assert cur.level is None and cur.goal is None and cur.score is None
    after = Status(moves_left=20, score=0, level=3, goal=Goal("score", target=3000, text="TARGET 3000"))
    tr.status(after, 1.2)
    assert cur.level == 3 and cur.goal is not None and cur.goal.target == 3000
    for _ in range(10):
        tr.moved()
    tr.status(Status(moves_left=9, score=500, level=3), 2.0)
    assert tr.current is cur  # still level 3: no level closed
    assert tr.screen("won", None, None, 3.0) is cur and cur.won
    tr.resolve()  # (the loop asks once a level ends)
    assert [(r.level, r.won) for r in tr.records] == [(2, True), (3, True)]


def test_near_the_levels_end_the_header_is_read_on_every_frame(monkeypatch):
    """The header is read every few frames and the last reading stands between; near the
    level's end a reading a few frames old could still say 1 after the last move, and a
    move made on it is one the game ignores (a run counted 14 moves where the game took
    13). With a few moves left, every frame is read."""
    import numpy as np

    import agent.vision.header as header
    from agent.play.run import HEADER_EVERY, HeaderStatus
    from agent.vision.header import HeaderReading

    shown = iter(range(2 * HEADER_EVERY + 3, -1, -1))  # the counter on each frame: one move a frame
    read_on: list[int] = []

    def reading(profile, ocr):
        def read(frame):
            read_on.append(int(frame[0, 0]))
            return HeaderReading(int(frame[0, 0]), None, None, None)

        return read

    monkeypatch.setattr(header, "header_reading", reading)
    status = HeaderStatus(profile=None, ocr=None)  # type: ignore[arg-type]
    seen = []
    for left in shown:
        got = status(np.full((2, 2), left, np.uint8))
        seen.append((left, None if got is None else got.moves_left))
    # far from the end: every few frames; within HEADER_EVERY moves of it: every frame
    assert any(said != left for left, said in seen if left > HEADER_EVERY)
    assert all(said == left for left, said in seen if left < HEADER_EVERY)
    assert seen[-1] == (0, 0)


def test_a_level_told_late_by_the_next_levels_number_stops_the_run_at_once(tmp_path):
    """World 3 with --levels 3: level 3's board gave way to another board before any card
    said how it ended; the next board's header then read 4, but that told level 3 won only
    once level 4 had ended too, so the run played a level more and stopped at "4 levels
    won (--levels 3)". The next level's number, once read, tells the open-ended level at
    once: journalled, counted, and the run stops there; the level being played keeps its
    goal."""
    from agent.device.clock import ManualClock
    from agent.games.match3.game import GAME, Match3Player
    from agent.games.match3.rules import Match3Config
    from agent.games.match3.sim import SimPhone
    from agent.games.match3.sim_profile import sim_game_profile
    from agent.games.match3.solver import GreedySolver
    from agent.play.journal import Journal, read_journal
    from agent.play.loop import PlayLoop, PlayOptions

    phone = SimPhone(Match3Config(variant="classic", start_steps=30), seed=3, clock=ManualClock())

    def loop(levels: int, journal: Journal) -> PlayLoop:
        return PlayLoop(phone, GAME, sim_game_profile(phone), Match3Player(phone.config, GreedySolver()), phone.clock,
                        options=PlayOptions(level_life=True, levels=levels), journal=journal)  # fmt: skip

    with Journal(tmp_path / "j.jsonl") as journal:
        lp = loop(2, journal)
        assert lp._level_on_board(Status(None, None, level=1), 0.0) is None
        lp.levels.moved()
        assert lp.level_ended(lp.levels.screen("won", None, None, 1.0)) is None  # level 1 won
        assert lp._level_on_board(Status(None, None, level=2), 2.0) is None
        lp.levels.moved()
        assert lp.level_ended(lp.levels.new_board(3.0)) is None  # another board: level 2 over, how unknown
        assert lp.levels.won == 1
        stop = lp._level_on_board(Status(None, None, level=3), 4.0)  # the next board reads level 3
        assert stop is not None and stop.levels_won == 2 and "2 levels won" in stop.stop_reason
    lines = [x for x in read_journal(tmp_path / "j.jsonl") if x["type"] == "level"]
    assert [(x["level"], x["won"]) for x in lines] == [(1, True), (2, None), (2, True)]
    assert lines[-1]["how"] == "the next level was 3"

    goal = Goal("collect", target=9, left=9, colour="A", piece="A")
    with Journal(tmp_path / "k.jsonl") as journal:
        lp = loop(5, journal)  # far from --levels: the level played goes on, with its goal
        lp._level_on_board(Status(None, None, level=1), 0.0)
        lp.levels.moved()
        lp.level_ended(lp.levels.new_board(1.0))
        lp._level_on_board(Status(None, None, goal=goal), 2.0)  # the goal read first, the number not yet
        assert lp.levels.won == 0
        lp._level_on_board(Status(None, None, level=2, goal=goal), 3.0)
        assert lp.levels.won == 1 and lp.player.goal_progress()["goal"] == "collect"


def test_a_level_whose_card_was_not_read_is_won_when_the_map_names_the_next_level():
    # the card at level 3's end unread (its words lost under an animation), then the map
    # (or an intro card) names level 4: the game moved on, which it does for a level won
    tr = LevelTracker()
    _played(tr, 0.0, 6, level=3)
    assert tr.screen(None, None, None, 1.0, kind="card") is None  # a card came, its words unread
    assert tr.screen(None, 4, None, 2.0, kind="map") is None
    closed = tr.board(3.0)
    assert closed is not None and (closed.level, closed.won) == (3, True) and "4" in closed.how
    assert tr.current is not None and tr.current.level == 4

    # a number that is not the next one tells nothing (a misread, a level skipped)
    tr = LevelTracker()
    _played(tr, 0.0, 6, level=3)
    tr.screen(None, None, None, 1.0, kind="card")
    tr.screen(None, 7, None, 2.0, kind="map")
    closed = tr.board(3.0)
    assert closed is not None and closed.won is None


def test_the_header_still_showing_the_level_just_won_names_no_level():
    # World 18: level 2 won by its card, Next, the new board up while the header still
    # read 2 (another app came in front meanwhile): the new level was recorded as level 2
    # again, a retry, then closed as won when the header turned to 3; the run stopped with
    # 3 levels won that were 2.
    tr = LevelTracker()
    _played(tr, 0.0, 8, level=2)
    tr.screen("won", None, 1740, 10.0)
    assert tr.won == 1
    tr.board(11.0)
    tr.status(Status(moves_left=20, score=0, level=2), 12.0)  # read anew, still 2
    assert tr.current is not None and tr.current.level is None
    for _ in range(5):
        tr.moved()
    for i in range(ZERO_READS + 1):
        tr.status(Status(moves_left=15, score=300, level=3), 13.0 + i)
    assert tr.won == 1 and tr.current is not None and tr.current.level == 3 and tr.current.retries == 0
