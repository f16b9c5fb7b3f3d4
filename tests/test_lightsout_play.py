"""The simulated Lights Out phone, reading it, and the play loop end to end."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.device.clock import ManualClock
from agent.games.lightsout.gf2 import bits
from agent.games.lightsout.play import LightsOutLoop, LightsPlayOptions
from agent.games.lightsout.puzzle import Puzzle, lights_out, torus
from agent.games.lightsout.reader import read_lights
from agent.games.lightsout.sim import LightsOutPhone
from agent.games.lightsout.sim_profile import save_sim_profile, sim_game_profile
from agent.games.lightsout.solver import solver_for
from agent.journal import Journal, read_journal
from agent.vision.grid import cell_centers
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
    profile = sim_game_profile(phone)
    loop = LightsOutLoop(device or phone, profile, phone.clock, options=LightsPlayOptions(**options), journal=journal)
    return loop.run(), loop


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
        ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 70])  # as a phone's capture may be
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


# -- the loop ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape", [(3, 3), (4, 4), (3, 5)])
def test_play_solves_small_boards_with_the_fewest_presses(seed, shape):
    puzzle = lights_out(*shape)
    phone = LightsOutPhone(puzzle, seed=seed, clock=ManualClock())
    fewest = brute_min_presses(puzzle, phone.start)
    spy = Spy(phone)
    summary, _ = play(phone, spy)
    assert summary.solved and phone.solved and summary.stop_reason.startswith("solved")
    assert summary.taps == len(phone.presses) == summary.planned_presses == fewest
    assert summary.checks == {"ok": fewest}
    assert len(set(p.button for p in phone.presses)) == fewest  # no button pressed twice


def test_play_5x5_reads_exactly_taps_what_it_decided_and_checks_every_tap(tmp_path):
    phone = LightsOutPhone(seed=7, clock=ManualClock())
    spy = Spy(phone)
    with Journal(tmp_path / "j.jsonl") as journal:
        summary, loop = play(phone, spy, journal=journal)
    assert summary.solved and phone.solved
    assert summary.taps == solver_for(lights_out(5)).solve(phone.start, 0).min_presses
    records = read_journal(tmp_path / "j.jsonl")
    decisions = [r for r in records if r["type"] == "decision"]
    checks = [r for r in records if r["type"] == "check"]
    assert len(decisions) == len(checks) == summary.taps
    for rec, truth, press in zip(decisions, spy.states_at_tap, phone.presses):
        read_state = sum(1 << i for i, ch in enumerate(rec["board"].replace("\n", "")) if ch == "1")
        assert read_state == truth  # decided on the board as it really was
        assert rec["min_confidence"] >= loop.profile.min_confidence
        assert list(press.cell) == rec["press"]  # and the phone pressed what was decided
    assert all(c["verdict"] == "ok" for c in checks)
    assert records[-1]["type"] == "stop" and records[-1]["solved"] is True


def test_play_never_taps_a_board_it_cannot_read():
    phone = LightsOutPhone(seed=1, clock=ManualClock())
    summary, _ = play(phone, Spy(phone, cover=True), unreadable_timeout_s=1.0)
    assert summary.taps == 0 and phone.presses == [] and not summary.solved
    assert summary.stop_reason.startswith("board not readable") and "cells unknown" in summary.stop_reason


def test_a_tap_whose_result_is_never_seen_is_counted_unverified():
    phone = LightsOutPhone(seed=6, clock=ManualClock())
    summary, _ = play(phone, Spy(phone, cover_after=2), unreadable_timeout_s=1.0)
    assert summary.taps == 2 and len(phone.presses) == 2
    assert summary.checks == {"ok": 1, "unverified": 1}
    assert summary.stop_reason.startswith("board not readable")


def test_play_stops_when_taps_do_nothing():
    phone = LightsOutPhone(seed=2, clock=ManualClock())
    summary, _ = play(phone, Spy(phone, ignore_taps=True), change_timeout_s=0.2)
    assert not summary.solved and summary.checks == {"no_effect": 3} and summary.taps == 3
    assert "did not toggle the lights the rules predict" in summary.stop_reason


def test_play_learns_the_torus_rule_from_what_a_tap_does():
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
    summary, loop = play(phone)  # the loop assumes plain Lights Out
    assert summary.solved and phone.solved
    assert loop.puzzle == ring and summary.checks["rules_changed"] == 1
    assert summary.rule_changes == ["lightsout 5x5 -> torus 5x5 (after tap 1)"]


def test_play_tries_the_torus_when_plain_rules_cannot_solve_the_board():
    plain, ring = lights_out(5), torus(5)
    seed = next(s for s in range(100) if not solver_for(plain).solvable(LightsOutPhone(ring, seed=s).start, 0))
    phone = LightsOutPhone(ring, seed=seed, clock=ManualClock())
    summary, loop = play(phone)
    assert summary.solved and phone.solved and loop.puzzle == ring
    assert summary.rule_changes[0].startswith("lightsout 5x5 -> torus 5x5 (the board is unsolvable")
    assert summary.taps == summary.planned_presses == solver_for(ring).solve(phone.start, 0).min_presses
    assert summary.checks == {"ok": summary.taps}


def test_play_stops_on_an_unsolvable_board_with_the_reason():
    phone = LightsOutPhone(start=1, clock=ManualClock())  # one corner lit: no press set clears it
    summary, _ = play(phone)
    assert summary.taps == 0 and not summary.solved
    assert "cannot be solved" in summary.stop_reason and "(0, 0)" in summary.stop_reason


def test_play_honours_the_tap_limit():
    phone = LightsOutPhone(seed=4, clock=ManualClock())
    summary, _ = play(phone, moves=2)
    assert summary.taps == 2 == len(phone.presses) and summary.stop_reason == "tap limit reached (2)"
    assert summary.checks == {"ok": 2}


# -- the command ------------------------------------------------------------------------------


def test_agent_play_lightsout_sim(tmp_path):
    r = runner.invoke(
        app, ["play", "--game", "lightsout", "--sim", "--seed", "5", "--json",
              "--profiles", str(tmp_path / "profiles"), "--runs", str(tmp_path / "runs")],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["solved"] is True and out["game"] == {"solved": True, "presses": out["taps"]}
    expected = LightsOutPhone(seed=5, clock=ManualClock())  # the same seed shows the same board
    assert out["taps"] == out["planned_presses"] == solver_for(lights_out(5)).solve(expected.start, 0).min_presses
    assert out["checks"] == {"ok": out["taps"]}
    records = read_journal(out["journal"])
    assert records[0]["type"] == "start" and records[0]["game"] == "lightsout"
    assert sum(r["type"] == "decision" for r in records) == out["taps"]


def test_agent_play_lightsout_rejects_sim_and_serial(tmp_path):
    r = runner.invoke(app, ["play", "--game", "lightsout", "--sim", "--serial", "X", "--runs", str(tmp_path)])
    assert r.exit_code == 2 and "either --sim or --serial" in r.output
