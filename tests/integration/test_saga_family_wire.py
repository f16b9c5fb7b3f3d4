"""Level after level on games of the saga family, through the real adb server: each game
served on the wire (`agent sim serve --scene saga --world N`), `agent calibrate` on it,
then `agent play --launch --levels K`, each its own process, as a user runs them.

Two games are played (chosen from the family by what their first levels bring), and each
flow the issue names is checked on them: a score level that runs to 0 moves and is won,
a map between levels, an intro card, an ad whose close control comes after a countdown, a
coin-priced offer refused, a failed level retried, and the Quit dialog a Back brings
answered with Continue. What is checked comes from both sides: the game's own count and
the agent's journal."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent.cli.bench.wire_game import WirePlay, cli, play_on_the_wire
from agent.device.clock import ManualClock
from agent.play.journal import read_journal
from agent.vision.ocr import default_ocr

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(default_ocr() is None, reason="needs Tesseract (apt-get install tesseract-ocr)")]

LATENCY_MS = 150
SEARCH = range(1, 80)


def _phone(world: int) -> Any:
    from agent.games.match3.saga import SagaPhone
    from agent.games.match3.saga.family import world_of

    return SagaPhone(seed=world, size=world_of(world).size, clock=ManualClock(), world=world)


def _pick(want: str) -> int:
    """The first world of the family whose first levels bring what a test needs."""
    from agent.games.match3.saga.family import world_of

    for n in SEARCH:
        w = world_of(n)
        if not (w.map and w.intro and w.quit_dialog):
            continue
        phone = _phone(n)
        first, second = phone.planned_level(1), phone.planned_level(2)
        s1, s2 = phone.script(1), phone.script(2)
        if want == "journey" and first.goal.kind == "score" and w.score_to_end and s1.ad_after \
                and (s1.offer or s2.offer) and w.backdrop != "still":
            return n
        if want == "retry" and first.goal.kind != "score" and second.goal.kind != "score":
            return n
    raise AssertionError(f"no world of the family in {SEARCH} brings {want!r}")


@pytest.fixture(scope="module")
def journey(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, WirePlay]:
    world = _pick("journey")
    phone_args = _phone_args(world)
    play = play_on_the_wire(phone_args, ["--launch", "--levels", "2", "--moves", "120"],
                            tmp_path_factory.mktemp("journey"), timeout_s=600, before_play=_press_back)  # fmt: skip
    return world, play


@pytest.fixture(scope="module")
def retry(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, WirePlay]:
    world = _pick("retry")
    # a player that plays badly: it fails levels, and must retry them (never buy moves)
    play = play_on_the_wire(_phone_args(world), ["--launch", "--moves", "80", "--solver", "random", "--goal", "off"],
                            tmp_path_factory.mktemp("retry"), timeout_s=600,
                            done=lambda truth: int(truth.get("retries", 0)) >= 1 and truth.get("screen") == "board")  # fmt: skip
    return world, play


def _phone_args(world: int) -> list[str]:
    from agent.games.match3.saga.family import world_of

    w, h = world_of(world).size
    return ["--scene", "saga", "--world", str(world), "--seed", str(world), "--size", f"{w}x{h}",
            "--latency-ms", str(LATENCY_MS)]  # fmt: skip


def _press_back(address: str, env: dict[str, str]) -> None:
    import adbutils

    client = adbutils.AdbClient(host="127.0.0.1", port=int(env["ANDROID_ADB_SERVER_PORT"]))
    client.device(address).keyevent(4)


def _lines(play: WirePlay, kind: str) -> list[dict[str, Any]]:
    return [r for r in read_journal(play.journal) if r["type"] == kind]


def _common(play: WirePlay) -> None:
    t = play.truth
    assert t["forbidden_taps"] == 0, t
    assert t["swipes_while_moving"] == 0, t
    records = read_journal(play.journal)
    assert records[0]["type"] == "start" and records[-1]["type"] == "stop"


def test_the_journey_wins_its_levels_and_leaves_every_screen(journey):
    world, play = journey
    _common(play)
    t, s = play.truth, play.summary
    assert t["levels_won"] >= 2, (world, s["stop_reason"], t)
    assert s["stop_kind"] == "limit" and "levels won" in s["stop_reason"] and play.exit_code == 0
    taken = t["swipes_accepted"] / max(1, t["swipes_accepted"] + t["swipes_undone"] + t["swipes_ignored"])
    assert taken >= 0.9
    # per level, in the summary: its number as read, its goal, the moves used, won or lost
    # (a level lost is played again, never bought: the next row is the same level, and the
    # run goes on to the next level only once it is won)
    rows = s["levels"]
    assert sum(r["won"] for r in rows) >= 2 and rows[-1]["won"], rows
    assert all(r["moves"] > 0 for r in rows)
    for a, b in zip(rows, rows[1:]):
        assert b["level"] == (a["level"] + 1 if a["won"] else a["level"]), rows


def test_a_score_level_that_runs_to_0_moves_is_a_level_won_not_a_game_over(journey):
    _, play = journey
    first = play.truth["levels"][0]
    assert first["goal"] == "score" and first["won"] is True
    assert first["moves_used"] >= play.summary["levels"][0]["moves"] > 0
    budget_spent = [r for r in _lines(play, "level_over") if "0" in r["reason"] or "card" in r["reason"]]
    assert budget_spent or play.summary["levels"][0]["how"], play.summary["levels"]
    assert "game over" not in play.summary["stop_reason"]


def test_a_map_between_levels_and_an_intro_card_are_left_by_their_buttons(journey):
    _, play = journey
    t = play.truth
    for kind in ("map", "intro"):
        assert t["screens_shown"].get(kind, 0) >= 1, (kind, t["screens_shown"])
        assert t["screens_left"].get(kind, 0) >= 1, (kind, t["screens_left"])
    kinds = {r["kind"] for r in _lines(play, "screen")}
    assert "map" in kinds or "card" in kinds


def test_an_ad_is_waited_on_until_its_close_control_comes_then_closed(journey):
    _, play = journey
    t = play.truth
    assert t["screens_shown"].get("ad", 0) >= 1 and t["screens_left"].get("ad", 0) >= 1, t["screens_shown"]
    assert t["ads_closed"] >= 1
    ads = [r for r in _lines(play, "screen") if r["kind"] == "ad"]
    # while its countdown runs it is waited on (a loaded machine may first look once the
    # control is there); it is left by its close control, never by Install or Back
    assert ads and all(r["action"] is None or r["action"]["kind"] in ("wait", "tap") for r in ads), ads
    assert any(r["action"] and r["action"]["kind"] == "tap" for r in ads), ads


def test_a_coin_priced_offer_is_refused(journey):
    _, play = journey
    t = play.truth
    assert t["screens_shown"].get("offer", 0) >= 1
    assert t["forbidden_taps"] == 0
    seen = [b for r in _lines(play, "screen") for b in r.get("buttons", []) if b["verdict"] == "forbidden"]
    assert seen, "a priced button was seen and refused"


def test_the_quit_dialog_after_back_is_answered_with_continue(journey):
    _, play = journey
    t = play.truth
    assert t["screens_shown"].get("quit", 0) >= 1 and t["screens_left"].get("quit", 0) >= 1, t["screens_shown"]
    taps = [r for r in _lines(play, "dismissed") if r["kind"] == "tap"]
    assert not any(r["label"].lower().startswith("quit") for r in taps)
    assert t["levels"] and t["levels"][0]["won"] is True  # nothing lost: the level went on


def test_a_failed_level_is_retried_never_bought(retry):
    _, play = retry
    _common(play)
    t = play.truth
    assert t["levels_lost"] >= 1 and t["retries"] >= 1, t
    assert t["screens_shown"].get("failed", 0) >= 1 or t["screens_shown"].get("out_of_moves", 0) >= 1
    lost = [r for r in _lines(play, "level") if r["won"] is False]
    assert lost, [r for r in _lines(play, "level")]
    # (what it chose to tap: the run is stopped as soon as the game has retried, which can be
    # before the tap's own "dismissed" line is written)
    taps = [r["action"]["label"].lower() for r in _lines(play, "screen")
            if r.get("action") and r["action"]["kind"] == "tap"]  # fmt: skip
    assert any("retry" in x or "try" in x or "again" in x for x in taps), taps


def test_the_cli_names_the_world_it_serves(tmp_path: Path):
    out = subprocess.run(cli("sim", "screenshot", str(tmp_path / "shot.png"), "--scene", "saga", "--world", "3",
                             "--size", "720x1280"), capture_output=True, text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "shot.png").stat().st_size > 1000
