"""The simulated Lights Out phone, reading it, and the play loop end to end."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from agent.device.clock import ManualClock
from agent.games.base import Decision, NoMove
from agent.games.lightsout.game import GAME, Lights, LightsOutPlayer, Press
from agent.games.lightsout.gf2 import bits
from agent.games.lightsout.puzzle import Puzzle, PuzzleError, lights_out, torus
from agent.games.lightsout.reader import read_lights
from agent.games.lightsout.sim import LightsOutPhone
from agent.games.lightsout.sim_profile import save_sim_profile, sim_game_profile
from agent.games.lightsout.solver import solver_for
from agent.play.journal import Journal, read_journal
from agent.play.loop import PlayLoop, PlayOptions
from agent.play.stats import EXIT_OK, exit_code
from agent.vision.grid import cell_at, cell_centers
from agent.vision.profile import find_profile, load_profile

runner = CliRunner()


def brute_min_presses(puzzle: Puzzle, state: int) -> int:
    """Fewest presses to turn `state` off, by trying every press set (small boards only)."""
    eff = np.zeros(1, dtype=np.uint64)
    for a in puzzle.actions:
        eff = np.concatenate([eff, eff ^ np.uint64(a)])
    hits = np.flatnonzero(eff == np.uint64(state)).astype(np.uint64)
    return int(np.bitwise_count(hits).min())


class Spy:
    """Passes everything to the phone; remembers the true lights at each tap."""

    def __init__(
        self, phone: LightsOutPhone, ignore_taps: bool = False, cover: bool = False, cover_after: int | None = None
    ) -> None:
        self.phone, self.ignore_taps, self.cover, self.cover_after = phone, ignore_taps, cover, cover_after
        self.serial, self.model = phone.serial, phone.model
        self.states_at_tap: list[int] = []

    def screen_size(self):
        return self.phone.screen_size()

    def screencap(self):
        frame = self.phone.screencap()
        if self.cover:  # a dialog over the middle of the board
            x0, y0, x1, y1 = self.phone.layout.board_bbox
            cv2.rectangle(frame, (x0 + (x1 - x0) // 4, y0 + (y1 - y0) // 3), (x1 - (x1 - x0) // 4, y1 - (y1 - y0) // 3),
                          (235, 235, 235), -1)  # fmt: skip
        return frame

    def tap(self, x, y):
        self.states_at_tap.append(self.phone.state)
        if self.cover_after is not None and len(self.states_at_tap) >= self.cover_after:
            self.cover = True  # a dialog pops up over the board after this tap
        if not self.ignore_taps:
            self.phone.tap(x, y)

    def swipe(self, *a, **k):  # pragma: no cover - Lights Out never swipes
        raise AssertionError("no swipes in Lights Out")


def play(phone: LightsOutPhone, device=None, journal=None, **options) -> tuple:
    """The unified loop on the phone with the game's own player; (summary, player)."""
    profile = sim_game_profile(phone)
    player = GAME.screen.player(profile, {"variant": "plain"}, 0)
    loop = PlayLoop(device or phone, GAME, profile, player, phone.clock, options=PlayOptions(**options), journal=journal)
    return loop.run(), player


def cli_app():
    """The `agent` command, or a skip while the command line is being rewritten."""
    import typer

    try:
        from agent.cli import app
    except Exception as exc:  # noqa: BLE001  # pragma: no cover - while agent.cli is being rewritten
        pytest.skip(f"the agent command line does not import: {type(exc).__name__}: {exc}")
    if not isinstance(app, typer.Typer):  # pragma: no cover
        pytest.skip("agent.cli has no Typer app yet")
    return app


# -- the phone ---------------------------------------------------------------------------------


def test_lights_on_and_off_look_clearly_different():
    phone = LightsOutPhone(lights_out(4), start=0b1010_0101_1010_0101, clock=ManualClock())
    lab = cv2.cvtColor(phone.screencap().astype(np.float32) / 255, cv2.COLOR_BGR2Lab)
    means = []
    for r in range(4):
        for c in range(4):
            x0, y0, x1, y1 = phone.layout.cell_box(r, c)
            q = (x1 - x0) // 4
            means.append(lab[y0 + q : y1 - q, x0 + q : x1 - q].reshape(-1, 3).mean(axis=0))  # the middle of the light
    means = np.array(means)
    lit = np.array([(phone.state >> i) & 1 for i in range(16)], bool)
    on, off = means[lit], means[~lit]
    assert np.linalg.norm(on.mean(axis=0) - off.mean(axis=0)) > 40  # tens of Lab units apart
    assert on[:, 0].min() > off[:, 0].max() + 25  # every lit cell far brighter than every unlit one


def test_a_tap_toggles_the_pressed_cells_action_and_fades():
    clock = ManualClock()
    phone = LightsOutPhone(lights_out(5), start=0, clock=clock, fade_ms=100)
    centers = cell_centers(phone.layout.board_bbox, 5, 5)
    profile = sim_game_profile(phone)
    before = phone.screencap()
    x, y = (int(v) for v in centers[2, 3])
    phone.tap(x, y)
    assert phone.state == phone.puzzle.actions[2 * 5 + 3] and bits(phone.state) == [8, 12, 13, 14, 18]
    assert phone.presses[-1].cell == (2, 3)
    clock.advance(0.05)
    mid = phone.screencap()
    assert phone.animating and not read_lights(mid, profile).confident  # half-lit cells are neither on nor off
    clock.advance(0.06)
    after = phone.screencap()
    assert not phone.animating and read_lights(after, profile).state == phone.state
    assert np.abs(mid.astype(int) - before).max() > 30 and np.abs(after.astype(int) - mid).max() > 30
    # outside the board nothing happens
    phone.tap(5, 5)
    assert phone.gestures[-1].effect is None and phone.state == phone.puzzle.actions[13]


@pytest.mark.parametrize("size", [(1080, 2400), (720, 1280), (1600, 2560)])
@pytest.mark.parametrize("shape", [(5, 5), (3, 7), (8, 6)])
def test_the_profile_reads_every_board_exactly(size, shape):
    rng = np.random.default_rng(sum(size) + shape[0])
    puzzle = lights_out(*shape)
    phone = LightsOutPhone(puzzle, size=size, clock=ManualClock())
    profile = sim_game_profile(phone)
    for _ in range(4):
        phone = LightsOutPhone(puzzle, size=size, clock=ManualClock(), start=int(rng.integers(0, 1 << puzzle.n_lights)))
        frame = phone.screencap()
        _, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 70])  # as a phone's capture may be
        for f in (frame, cv2.imdecode(buf, cv2.IMREAD_COLOR)):
            read = read_lights(f, profile)
            assert read.confident and read.state == phone.state


def test_sim_profile_is_saved_beside_other_games(tmp_path):
    from agent.games.match3.sim import SimPhone
    from agent.games.match3.sim_profile import save_sim_profile as save_match3

    save_match3(SimPhone(clock=ManualClock()), tmp_path)
    phone = LightsOutPhone(clock=ManualClock())
    path = save_sim_profile(phone, tmp_path)
    assert set(load_profile(path).games) == {"match3", "lightsout"}
    match = find_profile(phone.model, *phone.screen_size(), "lightsout", [tmp_path])
    assert match.profile == sim_game_profile(phone)



# -- the game: notation, reading, gestures, the player on its own ------------------------------


@pytest.mark.parametrize("text", ["10000\n11000\n10000\n00000\n00000", "101\n0?1", "0", "111\n111"])
def test_board_text_round_trips(text):
    board = GAME.parse_board(text)
    assert GAME.format_board(board) == text
    assert GAME.parse_board(text.replace("\n", "/")) == board


def test_board_text_is_rows_of_lights_light_0_first():
    board = GAME.parse_board("10000/11000/10000/00000/00000")
    assert (board.rows, board.cols) == (5, 5) and bits(board.state) == [0, 5, 6, 10] and board.known
    assert GAME.parse_board("1?/#.") == Lights(2, 2, 0b0101, unknown=0b0010)
    with pytest.raises(PuzzleError, match="different lengths"):
        GAME.parse_board("101/01")
    with pytest.raises(PuzzleError, match="'z' at row 1, column 0"):
        GAME.parse_board("10/z1")


def test_the_screen_reads_the_board_as_its_notation_and_taps_the_pressed_cell():
    phone = LightsOutPhone(seed=3, clock=ManualClock())
    profile = sim_game_profile(phone)
    GAME.screen.check_profile(profile)
    read = GAME.screen.read(phone.screencap(), profile)
    assert read.confident and read.board == GAME.sim.true_board(phone) == Lights(5, 5, phone.start)
    assert read.text == GAME.format_board(read.board) == read_lights(phone.screencap(), profile).text
    for press in (Press(0, 0), Press(2, 3), Press(4, 4)):
        (tap,) = GAME.screen.gestures(press, profile)
        assert cell_at(profile.board_bbox, 5, 5, tap.x, tap.y) == press.cell


def test_the_player_gives_up_after_tapping_too_often():
    player = LightsOutPlayer(3, 3, max_taps_per_button=1)
    board = Lights(3, 3, lights_out(3).actions[4])  # pressing the middle clears it
    for _ in range(9):  # the screen never shows the taps; the player keeps deciding on the same board
        d = player.decide(board)
        assert isinstance(d, Decision) and d.move == Press(1, 1) and d.text == "(1, 1)"
    gave_up = player.decide(board)
    assert gave_up == NoMove("gave up after 9 taps without reaching the goal", finished=False)


def test_the_player_refuses_a_rule_that_does_not_fit_the_board():
    with pytest.raises(ValueError, match="does not fit the profile's 4x4 board"):
        LightsOutPlayer(4, 4, puzzle=lights_out(5))


# -- the loop ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape", [(3, 3), (4, 4), (3, 5)])
def test_play_solves_small_boards_with_the_fewest_presses(seed, shape):
    puzzle = lights_out(*shape)
    phone = LightsOutPhone(puzzle, seed=seed, clock=ManualClock())
    fewest = brute_min_presses(puzzle, phone.start)
    spy = Spy(phone)
    summary, _ = play(phone, spy)
    assert summary.finished and phone.solved and summary.stop_reason.startswith("solved")
    assert summary.stop_kind == "finished" and exit_code(summary) == EXIT_OK
    assert summary.moves == len(phone.presses) == summary.counts["planned_presses"] == fewest
    assert summary.checks == {"as_predicted": fewest}
    assert len({p.button for p in phone.presses}) == fewest  # no button pressed twice


def test_play_5x5_reads_exactly_taps_what_it_decided_and_checks_every_tap(tmp_path):
    phone = LightsOutPhone(seed=7, clock=ManualClock())
    spy = Spy(phone)
    profile = sim_game_profile(phone)
    with Journal(tmp_path / "j.jsonl") as journal:
        summary, _ = play(phone, spy, journal=journal)
    assert summary.finished and phone.solved
    assert summary.moves == solver_for(lights_out(5)).solve(phone.start, 0).min_presses
    records = read_journal(tmp_path / "j.jsonl")
    decisions = [r for r in records if r["type"] == "decision"]
    checks = [r for r in records if r["type"] == "check"]
    assert len(decisions) == len(checks) == summary.moves
    assert [r["index"] for r in decisions] == [r["index"] for r in checks] == list(range(1, summary.moves + 1))
    for rec, truth, press in zip(decisions, spy.states_at_tap, phone.presses):
        read_state = sum(1 << i for i, ch in enumerate(rec["board"].replace("\n", "")) if ch == "1")
        assert read_state == truth  # decided on the board as it really was
        assert rec["min_confidence"] >= profile.min_confidence
        assert list(press.cell) == rec["press"] and rec["move"] == str(Press(*press.cell))  # pressed what was decided
        [[kind, x, y]] = rec["gestures"]
        assert kind == "tap" and cell_at(profile.board_bbox, 5, 5, x, y) == press.cell
    assert all(c["verdict"] == "as_predicted" for c in checks)
    assert records[-1]["type"] == "stop" and records[-1]["finished"] is True
    assert {r["type"] for r in records} <= {"decision", "check", "unreadable", "moving", "stop"}


def test_play_never_taps_a_board_it_cannot_read():
    phone = LightsOutPhone(seed=1, clock=ManualClock())
    summary, _ = play(phone, Spy(phone, cover=True), unreadable_timeout_s=1.0)
    assert summary.moves == 0 and not phone.presses and not summary.finished
    assert summary.stop_reason.startswith("board not readable") and "cells unknown" in summary.stop_reason
    assert summary.stop_kind == "unreadable"


def test_a_tap_whose_result_is_never_seen_is_counted_unverified():
    phone = LightsOutPhone(seed=6, clock=ManualClock())
    summary, _ = play(phone, Spy(phone, cover_after=2), unreadable_timeout_s=1.0)
    assert summary.moves == 2 and len(phone.presses) == 2
    assert summary.checks == {"as_predicted": 1, "unverified": 1}
    assert summary.stop_reason.startswith("board not readable")


def test_play_stops_when_taps_do_nothing():
    phone = LightsOutPhone(seed=2, clock=ManualClock())
    summary, _ = play(phone, Spy(phone, ignore_taps=True), change_timeout_s=0.2)
    assert not summary.finished and summary.checks == {"not_applied": 3} and summary.moves == 3
    assert summary.stop_kind == "failed_checks" and "did not do what the rules predicted" in summary.stop_reason
    assert "the tap changed nothing" in summary.stop_reason


def test_play_learns_the_torus_rule_from_what_a_tap_does(tmp_path):
    plain, ring = lights_out(5), torus(5)
    # a torus board plain Lights Out can also solve, whose plain plan taps an edge cell
    # (where the two rules differ) first
    for seed in range(100):
        phone = LightsOutPhone(ring, seed=seed, clock=ManualClock())
        plan = solver_for(plain).solve(phone.start, 0)
        if plan.solvable and plain.actions[plan.presses[0]] != ring.actions[plan.presses[0]]:
            break
    else:  # pragma: no cover
        pytest.fail("no suitable seed")
    with Journal(tmp_path / "j.jsonl") as journal:
        summary, player = play(phone, journal=journal)  # the player assumes plain Lights Out
    assert summary.finished and phone.solved
    assert player.puzzle == ring and summary.checks["rules_changed"] == 1
    assert player.rule_changes == ["lightsout 5x5 -> torus 5x5 (after tap 1)"]
    assert summary.counts["rule_changes"] == 1
    checks = [r for r in read_journal(tmp_path / "j.jsonl") if r["type"] == "check"]
    assert checks[0]["verdict"] == "rules_changed" and checks[0]["rules"] == player.rule_changes[0]
    assert "the rules predicted" in checks[0]["detail"]
    assert all(c["verdict"] == "as_predicted" for c in checks[1:])


def test_play_tries_the_torus_when_plain_rules_cannot_solve_the_board(tmp_path):
    plain, ring = lights_out(5), torus(5)
    seed = next(s for s in range(100) if not solver_for(plain).solvable(LightsOutPhone(ring, seed=s).start, 0))
    phone = LightsOutPhone(ring, seed=seed, clock=ManualClock())
    with Journal(tmp_path / "j.jsonl") as journal:
        summary, player = play(phone, journal=journal)
    assert summary.finished and phone.solved and player.puzzle == ring
    assert player.rule_changes[0].startswith("lightsout 5x5 -> torus 5x5 (the board is unsolvable")
    fewest = solver_for(ring).solve(phone.start, 0).min_presses
    assert summary.moves == summary.counts["planned_presses"] == fewest
    assert summary.counts["solutions"] == solver_for(ring).solve(phone.start, 0).solutions
    assert summary.checks == {"as_predicted": summary.moves}
    first = next(r for r in read_journal(tmp_path / "j.jsonl") if r["type"] == "decision")
    assert first["rules"] == player.rule_changes[0] and first["rules_detail"]


def test_play_stops_on_an_unsolvable_board_with_the_reason():
    phone = LightsOutPhone(start=1, clock=ManualClock())  # one corner lit: no press set clears it
    summary, _ = play(phone)
    assert summary.moves == 0 and not summary.finished and summary.stop_kind == "stuck"
    assert "cannot be solved" in summary.stop_reason and "(0, 0)" in summary.stop_reason
    assert summary.counts["solutions"] == 0 and "planned_presses" not in summary.counts


def test_play_honours_the_tap_limit():
    phone = LightsOutPhone(seed=4, clock=ManualClock())
    summary, _ = play(phone, moves=2)
    assert summary.moves == 2 == len(phone.presses) and summary.stop_reason == "move limit reached (2)"
    assert summary.checks == {"as_predicted": 2} and summary.stop_kind == "limit"


# -- the command ------------------------------------------------------------------------------


def test_play_run_lightsout_sim(tmp_path):
    """What `agent play --game lightsout --sim --seed 5` sets up and writes, through the shared
    run setup (`agent.play.run`) the command and the farm use."""
    from agent.games.registry import get_game, settings
    from agent.play.run import play as play_run
    from agent.play.run import sim_run

    game = get_game("lightsout")
    run = sim_run(game, settings(game, {}, sim=True), 5, (1080, 2400), False, tmp_path / "profiles")
    summary = play_run(run, PlayOptions(), tmp_path / "runs" / "j.jsonl", summary_path=tmp_path / "runs" / "s.json")
    assert exit_code(summary) == EXIT_OK
    out = json.loads((tmp_path / "runs" / "s.json").read_text())
    assert out["finished"] is True and out["sim"] == {"solved": True, "presses": out["moves"]}
    expected = LightsOutPhone(seed=5, clock=ManualClock())  # the same seed shows the same board
    assert out["moves"] == out["planned_presses"] == solver_for(lights_out(5)).solve(expected.start, 0).min_presses
    assert out["checks"] == {"as_predicted": out["moves"]}
    assert out["journal"] == "j.jsonl"  # the summary names its journal relative to its own folder
    records = read_journal(tmp_path / "runs" / out["journal"])
    assert records[0]["type"] == "start" and records[0]["game"] == "lightsout"
    assert sum(r["type"] == "decision" for r in records) == out["moves"]


def test_the_simulated_phone_plays_the_torus_on_request():
    from agent.games.registry import settings

    s = settings(GAME, {"variant": "torus"}, sim=True)
    phone = GAME.sim.phone(s, 3, (1080, 2400), ManualClock(), "sim-x")
    assert phone.puzzle == torus(5) and phone.serial == "sim-x"
    assert GAME.sim.truth(phone) == {"solved": False, "presses": 0}
    assert GAME.sim.status_line(phone) == "not solved after 0 presses"


def test_agent_play_lightsout_sim(tmp_path):
    r = runner.invoke(
        cli_app(), ["play", "--game", "lightsout", "--sim", "--seed", "5", "--json",
                    "--profiles", str(tmp_path / "profiles"), "--runs", str(tmp_path / "runs")],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["finished"] is True and out["sim"] == {"solved": True, "presses": out["moves"]}
    expected = LightsOutPhone(seed=5, clock=ManualClock())  # the same seed shows the same board
    assert out["moves"] == out["planned_presses"] == solver_for(lights_out(5)).solve(expected.start, 0).min_presses
    assert out["checks"] == {"as_predicted": out["moves"]}
    records = read_journal(out["journal"])
    assert records[0]["type"] == "start" and records[0]["game"] == "lightsout"
    assert sum(r["type"] == "decision" for r in records) == out["moves"]


def test_agent_play_lightsout_rejects_sim_and_serial(tmp_path):
    r = runner.invoke(cli_app(), ["play", "--game", "lightsout", "--sim", "--serial", "X", "--runs", str(tmp_path)])
    assert r.exit_code == 2 and "either --sim or --serial" in r.output


def test_the_phone_keeps_its_count_not_every_press():
    from agent.games.lightsout.sim import KEEP_PRESSES

    phone = LightsOutPhone(lights_out(3), start=0, clock=ManualClock(), fade_ms=0)
    x0, y0, x1, y1 = phone.layout.cell_box(1, 1)
    for _ in range(KEEP_PRESSES + 7):
        phone.tap((x0 + x1) // 2, (y0 + y1) // 2)
    assert phone.press_count == KEEP_PRESSES + 7
    assert len(phone.presses) == KEEP_PRESSES
    assert phone.state != 0  # an odd number of presses of the centre leaves its cross lit
