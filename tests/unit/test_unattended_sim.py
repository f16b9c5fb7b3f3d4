"""The commercial-style game on the in-process simulated phone, played unattended: its
profile calibrated from the screen (as a real game's), a 250 ms screenshot on a
simulated clock, levels of other shapes, dialogs, cards, ads and another app."""

from __future__ import annotations

import pytest

from agent.games.match3.game import GAME
from agent.games.match3.saga.phone import draw_scripts
from agent.play.journal import read_journal
from agent.play.loop import PlayOptions
from agent.play.run import play, sim_run
from agent.vision.ocr import default_ocr

pytestmark = pytest.mark.skipif(default_ocr() is None, reason="needs Tesseract (apt-get install tesseract-ocr)")


def _seed_with_everything() -> int:
    for seed in range(200):
        s = draw_scripts(seed, 2)
        if not (s[0].daily or s[0].offer) and s[0].ad_after and any(x.switch_after is not None for x in s):
            return seed
    raise AssertionError("no seed has it all")


def test_two_levels_in_a_row_with_every_interruption(tmp_path):
    seed = _seed_with_everything()
    settings = {"variant": "auto", "solver": "plan", "steps": 30, "scene": "saga"}
    run = sim_run(GAME, settings, seed, (1080, 2400), False, tmp_path / "profiles", latency_ms=250)
    phone = run.phone
    assert run.match.profile.package == phone.package  # calibration recorded the game's package
    # stopped once two levels are complete and the next one's board is up (its dialogs closed)
    summary = play(run, PlayOptions(moves=60, launch=True), tmp_path / "j.jsonl",
                   should_stop=lambda: phone.truth()["levels_completed"] >= 2 and phone.screen_kind == "board")  # fmt: skip
    truth = phone.truth()
    assert truth["levels_completed"] >= 2, (summary.stop_reason, truth)
    assert summary.stop_kind == "requested"
    assert truth["swipes_while_moving"] == 0 and truth["forbidden_taps"] == 0
    assert truth["dialogs_closed"] == truth["dialogs_shown"] >= 1 and truth["ads_closed"] == truth["ads_shown"] >= 1
    assert truth["app_switches"] >= 1 and truth["launches"] >= 1  # another app came in front; brought back
    taken = truth["swipes_accepted"] / max(1, truth["swipes_accepted"] + truth["swipes_undone"] + truth["swipes_ignored"])
    assert taken >= 0.9
    # a new level of another shape was found again (a level of the same shape and place needs no search)
    assert summary.boards_found >= 1 and summary.dialogs_closed >= truth["dialogs_closed"]
    records = read_journal(tmp_path / "j.jsonl")
    assert any(r["type"] == "launch" for r in records)
    refused = [b for r in records if r["type"] == "screen" for b in r["refused"]]
    assert refused  # a Buy, Share or Install button was seen and left alone
    # the waits were fitted to the phone: captures cost what the phone charged
    assert summary.capture_ms == pytest.approx(250, rel=0.05)


def _world_with_an_ad_over_a_moving_sky() -> int:
    from agent.games.match3.saga import SagaPhone
    from agent.games.match3.saga.family import world_of
    from agent.device.clock import ManualClock

    for n in range(1, 80):
        w = world_of(n)
        if w.backdrop == "still" or not w.score_to_end:
            continue
        phone = SagaPhone(seed=n, size=w.size, clock=ManualClock(), world=n)
        if phone.script(1).ad_after and phone.planned_level(1).goal.kind == "score":
            return n
    raise AssertionError("no world of the family shows an ad after a score level over a moving sky")


def test_an_ad_on_a_phone_slow_to_capture_is_closed_within_its_wait(tmp_path):
    """A phone that takes 2 s a screenshot: every wait scales with it, and an ad's art that
    never rests is looked at often enough that its close control is tapped before the run
    gives up on the screen (a full settle wait per look spent the whole wait on three looks)."""
    world = _world_with_an_ad_over_a_moving_sky()
    from agent.games.match3.saga.family import world_of

    settings = {"variant": "auto", "solver": "plan", "steps": 30, "scene": "saga", "world": world}
    run = sim_run(GAME, settings, world, world_of(world).size, False, tmp_path / "profiles", latency_ms=2000)
    phone = run.phone
    summary = play(run, run.options(moves=60, launch=True), tmp_path / "j.jsonl",
                   should_stop=lambda: phone.truth()["ads_closed"] >= 1)  # fmt: skip
    truth = phone.truth()
    assert truth["ads_shown"] >= 1 and truth["ads_closed"] >= 1, (summary.stop_reason, truth)
    assert summary.stop_kind == "requested" and truth["forbidden_taps"] == 0
    ads = [r for r in read_journal(tmp_path / "j.jsonl") if r["type"] == "screen" and r["kind"] == "ad"]
    assert ads and ads[-1]["action"]["kind"] == "tap"
