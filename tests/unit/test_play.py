"""The play loop against the simulated phone, in-process and through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.device.clock import ManualClock
from agent.games.match3.sim import SimPhone
from agent.games.match3.board import Board, Move
from agent.games.match3.rules import Match3Config, has_match, is_legal_swap
from agent.games.match3.game import GAME, Match3Player, Match3Sim
from agent.games.match3.sim_profile import sim_game_profile
from agent.games.match3.solver import GreedySolver
from agent.play.journal import Journal, read_journal
from agent.play.loop import PlayLoop, PlayOptions
from agent.vision.grid import cell_at

runner = CliRunner()


class Spy:
    """Passes everything to the phone and remembers the true board at each swipe."""

    def __init__(self, phone: SimPhone) -> None:
        self.phone = phone
        self.boards_at_swipe: list[Board] = []
        self.serial, self.model = phone.serial, phone.model

    def screen_size(self):
        return self.phone.screen_size()

    def screencap(self):
        return self.phone.screencap()

    def tap(self, x, y):
        self.phone.tap(x, y)

    def swipe(self, x1, y1, x2, y2, duration_ms=200):
        self.boards_at_swipe.append(self.phone.board)
        self.phone.swipe(x1, y1, x2, y2, duration_ms)


def make_loop(phone, device=None, moves=None, journal=None, options=None):
    return PlayLoop(
        device or phone, GAME, sim_game_profile(phone), Match3Player(phone.config, GreedySolver()), phone.clock,
        options=options or PlayOptions(moves=moves), journal=journal,
        status_reader=Match3Sim().status_reader(phone),
    )


@pytest.mark.parametrize("variant", ["step", "classic"])
def test_every_swipe_is_a_legal_swap_on_the_true_board_and_is_taken(variant, tmp_path):
    phone = SimPhone(Match3Config(variant=variant, start_steps=100), seed=11, clock=ManualClock())
    spy = Spy(phone)
    with Journal(tmp_path / "j.jsonl") as journal:
        summary = make_loop(phone, spy, moves=25, journal=journal).run()
    assert summary.moves == 25 and summary.stop_reason == "move limit reached (25)"
    # every swipe the agent sent became a move the game applied, on the board the agent read
    swipes = [g for g in phone.gesture_log if g.kind == "swipe"]
    assert len(swipes) == 25 and all(g.move is not None and g.applied for g in swipes)
    decisions = [r for r in read_journal(tmp_path / "j.jsonl") if r["type"] == "decision"]
    for rec, truth, g in zip(decisions, spy.boards_at_swipe, swipes):
        assert Board.parse(rec["board"]) == truth  # read exactly
        assert Move.parse(rec["move"]).same_swap(g.move)
        assert is_legal_swap(truth, g.move)
    assert summary.counts["tiles_cleared"] > 0
    assert phone.state.moves_made == 25
    # every move's result was checked on screen, and none contradicted the rules
    assert sum(summary.checks.values()) == 25
    assert summary.checks["not_applied"] == summary.checks["unexpected"] == 0


def test_step_game_is_played_to_its_end():
    phone = SimPhone(Match3Config(variant="step", start_steps=6), seed=5, clock=ManualClock())
    summary = make_loop(phone).run()
    assert summary.finished and summary.stop_reason == "game over: no moves left"
    assert summary.stop_kind == "finished"
    assert phone.game_over and phone.state.steps_left == 0
    assert summary.moves == phone.state.moves_made
    assert summary.moves_left == 0 and summary.score == phone.state.score  # read off the header


def test_a_counter_read_as_0_before_any_move_is_doubted_and_the_board_played(tmp_path):
    """A header whose moves counter reads 0 before the first move, and never more (a label's
    "O" read as a digit): every phone of a farm stopped at once with "no moves left" and
    exit 0. Now the board is played, the doubt journaled once; a counter that has counted
    down still ends the game at 0, and a run that ended its game before any move fails."""
    from agent.games.base import Status
    from agent.play.stats import EXIT_FAILED, exit_code

    phone = SimPhone(Match3Config(variant="step", start_steps=30), seed=5, clock=ManualClock())
    with Journal(tmp_path / "j.jsonl") as journal:
        loop = make_loop(phone, moves=5, journal=journal)
        loop.status_reader = lambda frame: Status(moves_left=0, score=None)
        summary = loop.run()
    assert summary.moves == 5 and summary.stop_reason == "move limit reached (5)"
    assert [r["type"] for r in read_journal(tmp_path / "j.jsonl")].count("status_doubted") == 1
    # once the counter has read more than 0, a 0 is the game's
    phone = SimPhone(Match3Config(variant="step", start_steps=30), seed=5, clock=ManualClock())
    loop = make_loop(phone, moves=20)
    reads = iter([Status(moves_left=3, score=None)] + [Status(moves_left=0, score=None)] * 10_000)
    loop.status_reader = lambda frame: next(reads)
    summary = loop.run()
    assert summary.stop_reason == "game over: no moves left" and summary.moves == 1  # (made while it read 3)
    assert exit_code(summary) == 0
    summary.moves = 0  # the same end before any move: no game played
    assert exit_code(summary) == EXIT_FAILED


def test_classic_game_ends_at_its_move_budget():
    phone = SimPhone(Match3Config(variant="classic", move_budget=8), seed=9, clock=ManualClock())
    summary = make_loop(phone).run()
    assert summary.finished and summary.moves == 8 == phone.state.moves_made
    assert summary.moves_left == 0


def test_agent_counts_match_the_game_when_nothing_cascades_after_refill():
    phone = SimPhone(Match3Config(start_steps=50), seed=2, clock=ManualClock())
    summary = make_loop(phone, moves=20).run()
    truth = phone.state
    counts = summary.counts
    assert counts["steps_spent"] == truth.steps_spent == 20
    # the agent counts only what it could predict: never more than the game
    assert 0 < counts["tiles_cleared"] <= truth.tiles_cleared
    assert counts["steps_gained"] <= truth.steps_gained
    assert counts["points"] <= truth.score


class Covered(Spy):
    """A dialog covers the board: the agent must not swipe."""

    def screencap(self):
        frame = self.phone.screencap().copy()
        x0, y0, x1, y1 = self.phone.layout.board_bbox
        cv2.rectangle(frame, (x0 + 40, y0 + 60), (x1 - 40, y1 - 60), (235, 235, 235), -1)
        cv2.putText(frame, "Level complete!", (x0 + 80, (y0 + y1) // 2), cv2.FONT_HERSHEY_SIMPLEX, 2, (40, 40, 40), 4)
        return frame


class Shaking(Spy):
    """The board never stops moving."""

    def __init__(self, phone):
        super().__init__(phone)
        self.n = 0

    def screencap(self):
        self.n += 1
        # half a cell up and down, every frame
        return np.roll(self.phone.screencap(), 60 * (-1) ** self.n, axis=0)


@pytest.mark.parametrize("wrapper, kind, why", [
    # a dialog with no safe button, on a phone with no Back key: nothing it may do
    (Covered, "unreadable", "board not readable for 2 s"),
    (Shaking, "unreadable", "board not readable for 2 s (the board never stopped moving)"),
])
def test_never_swipes_on_a_board_it_cannot_read(wrapper, kind, why):
    phone = SimPhone(seed=1, clock=ManualClock())
    device = wrapper(phone)
    summary = make_loop(phone, device, options=PlayOptions(unreadable_timeout_s=2.0)).run()
    assert device.boards_at_swipe == [] and phone.gesture_log == []
    assert summary.moves == 0 and summary.stop_kind == kind and why in summary.stop_reason


class CoveredTicking(Covered):
    """The same dialog, with a count on it that changes for its first three looks."""

    def __init__(self, phone):
        super().__init__(phone)
        self.n = 0

    def screencap(self):
        self.n += 1
        frame = super().screencap()
        cv2.putText(frame, str(min(self.n, 3)), (20, 40), cv2.FONT_HERSHEY_SIMPLEX, 1, (255, 255, 255), 2)
        return frame


@pytest.mark.parametrize("wrapper, frames", [(Covered, 1), (CoveredTicking, 2)])
def test_a_screen_that_does_not_change_is_looked_for_a_board_and_classified_once(monkeypatch, wrapper, frames):
    import agent.vision.relearn as relearn
    import agent.vision.screens as screens
    from agent.play.screens import ScreenHandler, frame_digest

    calls = {"refind": 0, "classify": 0}
    seen: list[bytes] = []

    def counted(name, fn):
        def call(*a, **k):
            calls[name] += 1
            return fn(*a, **k)

        return call

    def handle(self, frame, *a, **k):
        seen.append(frame_digest(frame))
        return handled(self, frame, *a, **k)

    handled = ScreenHandler.handle
    monkeypatch.setattr(ScreenHandler, "handle", handle)
    monkeypatch.setattr(relearn, "refind_board", counted("refind", relearn.refind_board))
    monkeypatch.setattr(screens, "classify_screen", counted("classify", screens.classify_screen))
    phone = SimPhone(seed=1, clock=ManualClock())
    summary = make_loop(phone, wrapper(phone), options=PlayOptions(unreadable_timeout_s=1.0)).run()
    assert summary.stop_kind == "unreadable" and phone.gesture_log == []
    # looked at again and again; each picture it showed searched and classified once
    distinct = len(set(seen))
    assert len(seen) > distinct >= frames and calls == {"refind": distinct, "classify": distinct}, (calls, len(seen))


class Deaf(Spy):
    """The phone ignores every swipe (a locked screen, a wrong input device)."""

    def swipe(self, x1, y1, x2, y2, duration_ms=200):
        self.boards_at_swipe.append(self.phone.board)


def test_swipes_that_do_nothing_are_noticed_and_stop_the_loop():
    phone = SimPhone(seed=4, clock=ManualClock())
    summary = make_loop(phone, Deaf(phone), options=PlayOptions(max_failed_checks=3)).run()
    assert summary.moves == 3 and summary.checks["not_applied"] == 3
    assert "3 moves in a row did not do what the rules predicted" in summary.stop_reason


# -- CLI ------------------------------------------------------------------------


def run_cli(args, cwd: Path):
    import os

    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(app, args, catch_exceptions=False)
    finally:
        os.chdir(old)


def test_cli_play_sim_30_moves(tmp_path):
    result = run_cli(["play", "--sim", "--moves", "30", "--seed", "7", "--json"], tmp_path)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["moves"] == 30 and out["stop_reason"] == "move limit reached (30)"
    assert out["tiles_cleared"] > 0 and out["sim"]["moves"] == 30 and out["game"] == "match3"
    assert out["checks"].get("not_applied", 0) == 0 and out["checks"].get("unexpected", 0) == 0
    # the profile was written as TOML under device_profiles/ and the journal under runs/
    profile = tmp_path / "device_profiles" / "puzzle-sim_1080x2400.toml"
    assert profile.exists()
    from agent.vision.profile import load_profile

    game = load_profile(profile).games["match3"]
    records = read_journal(tmp_path / out["journal"])
    decisions = [r for r in records if r["type"] == "decision"]
    assert len(decisions) == 30 and records[-1]["type"] == "stop"
    # one schema for every game: a start line naming game, device and profile; every line stamped
    start = records[0]
    assert start["type"] == "start" and start["game"] == "match3" and start["device"]["simulated"] is True
    assert Path(start["profile"]["path"]).name == profile.name
    assert all("time" in r and "mono" in r for r in records)
    checks = [r for r in records if r["type"] == "check"]
    assert [c["index"] for c in checks] == list(range(1, 31))
    assert all("verdict" in c for c in checks)
    for rec in decisions:
        board, move = Board.parse(rec["board"]), Move.parse(rec["move"])
        assert not board.has_unknown() and not has_match(board)
        assert is_legal_swap(board, move)
        [(kind, x1, y1, x2, y2, ms)] = rec["gestures"]
        assert kind == "swipe" and ms > 0
        # the swipe starts in the move's cell and ends in its neighbour's
        assert cell_at(game.board_bbox, game.rows, game.cols, x1, y1) == move.cells()[0]
        assert cell_at(game.board_bbox, game.rows, game.cols, x2, y2) == move.other


def test_cli_play_sim_to_the_end_prints_a_summary(tmp_path):
    result = run_cli(["play", "--sim", "--steps", "5", "--size", "720x1280", "--variant", "step", "--solver", "greedy"], tmp_path)
    assert result.exit_code == 0, result.output
    for words in ("game over: no moves left", "moves made", "tiles cleared", "steps gained / spent",
                  "mean time per decision", "journal:"):
        assert words in result.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["play", "--sim", "--variant", "blitz"], "'blitz' is not one of auto, step, classic"),
        (["play", "--sim", "--size", "10x10"], "out of range"),
        (["play", "--sim", "--size", "big"], "WIDTHxHEIGHT"),
        (["play", "--sim", "--moves", "0"], "--moves"),
        (["play", "--sim", "--serial", "abc"], "either --sim or --serial"),
        (["sim", "screenshot", "shot.jpg"], "should end in .png"),
    ],
)
def test_cli_rejects_bad_options_clearly(args, message, tmp_path):
    result = run_cli(args, tmp_path)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_cli_sim_screenshot_writes_the_screen(tmp_path):
    result = run_cli(["sim", "screenshot", "shots/s.png", "--size", "1440x3200", "--seed", "3"], tmp_path)
    assert result.exit_code == 0, result.output
    img = cv2.imread(str(tmp_path / "shots" / "s.png"))
    assert img.shape == (3200, 1440, 3)
    assert np.array_equal(img, SimPhone(seed=3, size=(1440, 3200)).screencap())


def test_cli_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.startswith("puzzle-agent ")


# -- stopping on a signal -----------------------------------------------------------------


class SignalsAt(Spy):
    """Sends this process a signal (a `kill` from outside) while the loop waits for its
    `at`-th move to show on screen."""

    def __init__(self, phone, signum, at=2):
        super().__init__(phone)
        self.signum, self.at, self.sent = signum, at, False

    def screencap(self):
        import os

        if len(self.boards_at_swipe) == self.at and not self.sent:
            self.sent = True
            os.kill(os.getpid(), self.signum)
        return super().screencap()


@pytest.mark.parametrize("signum, code", [(15, 143), (1, 129), (2, 130)], ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_stop_signal_ends_the_journal_with_its_name_and_exit_code(tmp_path, signum, code):
    from agent import signals
    from agent.play.stats import exit_code

    phone = SimPhone(seed=2, clock=ManualClock())
    with signals.stop_on_signals(), Journal(tmp_path / "j.jsonl") as journal:
        summary = make_loop(phone, SignalsAt(phone, signum), moves=50, journal=journal).run()
    name = signals.name(signum)
    assert summary.stop_kind == "interrupted" and summary.moves == 2 and exit_code(summary) == code
    stop = read_journal(tmp_path / "j.jsonl")[-1]
    assert stop["type"] == "stop" and stop["signal"] == name and stop["summary"]["signal"] == name
    assert stop["reason"] == signals.reason(signum)
    # the move that was on its way when the signal came is said to be unverified, not lost
    assert summary.checks["unverified"] == 1


def test_a_signal_while_the_run_begins_waits_for_the_journal_then_stops_the_loop(tmp_path):
    """A signal that comes while the journal opens is held (deferred), then stops the loop
    as it starts: the journal has its start line, a stop line, and the summary is written."""
    import os
    import signal as sig

    from agent import signals
    from agent.games.match3.game import GAME as MATCH3
    from agent.play.run import play, sim_run

    run = sim_run(MATCH3, {"variant": "step", "solver": "greedy", "steps": 30}, 0, (1080, 2400), False,
                  tmp_path / "profiles")  # fmt: skip
    with signals.stop_on_signals(), signals.deferred():
        os.kill(os.getpid(), sig.SIGTERM)  # held here ...
        summary = play(run, PlayOptions(moves=5), tmp_path / "j.jsonl", summary_path=tmp_path / "summary.json")
    records = read_journal(tmp_path / "j.jsonl")  # ... and taken by the loop, at once
    assert [r["type"] for r in records] == ["start", "stop"] and records[-1]["signal"] == "SIGTERM"
    assert summary.moves == 0 and json.loads((tmp_path / "summary.json").read_text())["signal"] == "SIGTERM"


def test_signals_raise_once_and_defer_inside_a_write():
    import os
    import signal as sig

    from agent import signals

    with signals.stop_on_signals() as state:
        with pytest.raises(signals.Interrupted) as first:
            with signals.deferred():
                os.kill(os.getpid(), sig.SIGHUP)
                done = True  # the block runs to its end before the signal is raised
        assert done and first.value.signum == sig.SIGHUP and not state.escalated
        os.kill(os.getpid(), sig.SIGTERM)  # a second one is recorded, never raised
        assert state.received == [sig.SIGHUP, sig.SIGTERM] and signals.escalated()
    assert signals.current() is None and sig.getsignal(sig.SIGTERM) == sig.SIG_DFL


def test_a_stop_swallowed_where_python_cannot_raise_is_raised_again_soon():
    """A signal that lands in a weakref callback (or an import lock's clean-up) raises
    there, and Python only prints it: the stop comes again, in ordinary code, and it is
    still one signal, not two."""
    import gc
    import signal as sig
    import time as time_mod
    import weakref

    from agent import signals

    class Thing:
        pass

    with signals.stop_on_signals() as state:
        with pytest.raises(signals.Interrupted) as stopped:
            thing = Thing()
            ref = weakref.ref(thing, lambda _: sig.raise_signal(sig.SIGTERM))
            del thing
            gc.collect()
            assert ref() is None  # the callback ran, and its Interrupted was swallowed
            for _ in range(300):  # ... and comes again here
                time_mod.sleep(0.01)
        assert stopped.value.signum == sig.SIGTERM
        assert state.received == [sig.SIGTERM] and not signals.escalated()


def test_a_graceful_first_signal_asks_and_the_next_one_raises():
    """A farm worker's policy: a first Ctrl-C asks it to stop after its move, the next
    signal stops it at once."""
    import os
    import signal as sig

    from agent import signals

    asked = []
    with signals.stop_on_signals(request=lambda: asked.append(True), graceful=(sig.SIGINT,)):
        os.kill(os.getpid(), sig.SIGINT)
        assert asked == [True]
        with pytest.raises(signals.Interrupted) as second:
            with signals.deferred(), signals.allowed():
                os.kill(os.getpid(), sig.SIGINT)
                pytest.fail("allowed() raises at once, even inside deferred()")
    assert second.value.signum == sig.SIGINT


class Broken(Spy):
    def screencap(self):
        raise RuntimeError("a bug in the capture")


def test_a_bug_still_ends_the_journal_with_a_stop_line(tmp_path):
    phone = SimPhone(seed=2, clock=ManualClock())
    with Journal(tmp_path / "j.jsonl") as journal, pytest.raises(RuntimeError):
        make_loop(phone, Broken(phone), moves=5, journal=journal).run()
    stop = read_journal(tmp_path / "j.jsonl")[-1]
    assert stop["type"] == "stop" and stop["kind"] == "crashed" and "a bug in the capture" in stop["reason"]


def test_a_journal_whose_writer_died_gets_its_stop_line(tmp_path):
    from agent.play.journal import end_unfinished

    path = tmp_path / "j.jsonl"
    with Journal(path) as journal:
        journal.write("start", game="match3")
        journal.write("decision", index=1)
    with open(path, "a") as f:
        f.write('{"type":"deci')  # the kill came mid-line
    assert end_unfinished(path, "the worker died", "crashed", written_by="farm")
    records = read_journal(path)  # the torn line is gone, every line parses
    assert [r["type"] for r in records] == ["start", "decision", "stop"]
    assert records[-1]["kind"] == "crashed" and records[-1]["written_by"] == "farm"
    assert not end_unfinished(path, "again", "crashed")  # it ends with a stop line now
    assert not end_unfinished(tmp_path / "missing.jsonl", "x", "crashed")
    assert len(read_journal(path)) == 3
