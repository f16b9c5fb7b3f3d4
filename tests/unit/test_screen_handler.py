"""What the play loop does with a screen that is no board (agent.play.screens): a button that
led nowhere twice is not tapped a third time, a change is judged on the dialog and not on
an animated background, an ad's countdown is waited for, and a screen whose only ways on
are forbidden stops the run saying so."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pytest

import agent.vision.screens as vision_screens
from agent.device.clock import ManualClock
from agent.play.guards import Guards
from agent.play.levels import LevelTracker
from agent.play.pacing import CaptureMeter, Timeouts
from agent.play.screens import NEW_BOARD_HOLD_S, NOWHERE_LIMIT, ScreenHandler
from agent.play.stats import PlaySummary
from agent.vision.profile import GameProfile
from agent.vision.screens import Action, ScreenVerdict

W, H = 400, 800
PANEL = (80, 250, 320, 550)


class Phone:
    """A screen with a dialog whose buttons do what `effects` says; the sky behind moves."""

    def __init__(self, clock: ManualClock, effects: dict[tuple[int, int], str]) -> None:
        self.clock, self.effects, self.taps, self.backs = clock, effects, [], 0
        self.dialog = True
        self.serial, self.model = "fake", "fake"

    def screen_size(self) -> tuple[int, int]:
        return W, H

    def screencap(self) -> np.ndarray:
        img = np.zeros((H, W, 3), np.uint8)
        # an animated sky: every frame differs over most of the screen
        img[:] = (int(self.clock.now() * 37) % 200, 80, 120)
        if self.dialog:
            x0, y0, x1, y1 = PANEL
            img[y0:y1, x0:x1] = 230
        return img

    def tap(self, x: int, y: int) -> None:
        self.taps.append((x, y))
        if self.effects.get((x, y)) == "close":
            self.dialog = False

    def swipe(self, *a: Any) -> None:
        raise AssertionError("no swipe on a dialog")

    def back(self) -> None:
        self.backs += 1

    def foreground(self) -> str | None:
        return None

    def launch(self, package: str) -> None:
        pass


@dataclass
class Options:
    launch: bool = False
    learn: bool = False
    stuck_timeout_s: float = 60.0
    level_life: bool = True


@dataclass
class Loop:
    device: Phone
    clock: ManualClock
    profile: GameProfile
    options: Options = field(default_factory=Options)
    summary: PlaySummary = field(default_factory=lambda: PlaySummary(game="match3"))
    guards: Guards = field(default_factory=Guards)
    pending: Any = None
    levels: LevelTracker = field(default_factory=LevelTracker)
    _level_stop: PlaySummary | None = None
    player: Any = None
    screen: Any = None
    lines: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    stopped: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        self.capture = CaptureMeter(self.device.screencap, self.clock)

    @property
    def timeouts(self) -> Timeouts:
        return Timeouts(change_s=1.0, settle_s=2.0, unreadable_s=5.0, poll_s=0.1)

    def read(self, frame: np.ndarray) -> Any:
        return None

    def adopt(self, profile: GameProfile, why: str, **fields: object) -> None:
        pass

    def _log(self, event: str, **fields: object) -> None:
        self.lines.append((event, dict(fields)))

    def _stop(self, reason: str, kind: str, finished: bool = False, signum: int | None = None) -> PlaySummary:
        self.stopped = (reason, kind)
        self.summary.stop_reason = reason
        return self.summary

    def level_ended(self, records: Any) -> PlaySummary | None:
        return None


def _profile() -> GameProfile:
    return GameProfile(game="match3", rows=8, cols=8, board_bbox=(40, 240, 360, 560), board_frac=(0.1, 0.3, 0.9, 0.7),
                       exemplars=[])


def _verdict(actions: list[Action], kind: str = "card", **extra: Any) -> ScreenVerdict:
    fields: dict[str, Any] = {}
    words = extra.pop("words", ())
    for name, value in (("ranked", tuple(actions)), ("panel", PANEL), *extra.items()):
        if name in ScreenVerdict.__dataclass_fields__:
            fields[name] = value
    return ScreenVerdict(kind, actions[0] if actions else None, "a test screen", words, **fields)  # type: ignore[arg-type]


@pytest.fixture
def handler(monkeypatch):
    def make(effects: dict[tuple[int, int], str], verdict: ScreenVerdict) -> tuple[ScreenHandler, Loop]:
        clock = ManualClock()
        loop = Loop(Phone(clock, effects), clock, _profile())
        monkeypatch.setattr(vision_screens, "classify_screen", lambda *a, **k: verdict)
        h = ScreenHandler(loop)  # type: ignore[arg-type]
        h._ocr_checked = True  # no OCR engine needed: the verdict is given
        return h, loop

    return make


def _needs(field_name: str) -> None:
    if field_name not in ScreenVerdict.__dataclass_fields__:
        pytest.skip(f"ScreenVerdict has no {field_name!r} yet")


def test_a_button_that_led_nowhere_twice_is_not_tapped_a_third_time(handler):
    _needs("ranked")
    dead = Action("tap", (200, 120), "Collect", "a label behind the dimming")  # outside the dialog
    good = Action("tap", (200, 500), "Continue", "the dialog's button")
    h, loop = handler({(200, 500): "close"}, _verdict([dead, good]))
    for _ in range(NOWHERE_LIMIT):
        assert h.handle(loop.device.screencap(), None) is True
    assert loop.device.taps == [(200, 120)] * NOWHERE_LIMIT
    dismissed = [f for e, f in loop.lines if e == "dismissed"]
    # the animated sky changed the whole frame each time: the dialog did not change
    assert [d["changed"] for d in dismissed] == [False] * NOWHERE_LIMIT
    assert h.handle(loop.device.screencap(), None) is True
    assert loop.device.taps[-1] == (200, 500) and not loop.device.dialog
    assert [f for e, f in loop.lines if e == "dismissed"][-1]["changed"] is True
    assert loop.stopped is None


def test_an_ads_countdown_is_waited_for_then_back_is_the_fallback(handler):
    wait = Action("wait", None, "wait", "the ad's close control comes after its countdown")
    h, loop = handler({}, _verdict([wait], kind="ad"))
    assert h.handle(loop.device.screencap(), None, moving=True) is False
    assert loop.device.taps == [] and loop.device.backs == 0
    loop.clock.advance(40.0)
    assert h.handle(loop.device.screencap(), None, moving=True) is True
    assert loop.device.backs == 1 and loop.device.taps == []
    screens = [f for e, f in loop.lines if e == "screen"]
    assert screens and screens[0]["kind"] == "ad" and screens[0]["moving"] is True


def test_a_screen_whose_only_ways_on_are_forbidden_stops_saying_so(handler):
    _needs("buttons")
    from agent.vision.screens import SeenButton  # type: ignore[attr-defined]

    verdict = ScreenVerdict("card", None, "only forbidden buttons", (), refused=("+5 moves 900",),
                            buttons=(SeenButton("+5 moves 900", (100, 400, 300, 460), "forbidden", "a price"),))  # type: ignore[call-arg]
    h, loop = handler({}, verdict)
    assert h.handle(loop.device.screencap(), None) is False
    loop.clock.advance(6.0)
    out = h.handle(loop.device.screencap(), None)
    assert isinstance(out, PlaySummary) and loop.stopped is not None
    assert "forbidden" in loop.stopped[0] and loop.stopped[1] == "unrecognised"
    assert loop.device.taps == []


def test_the_same_screen_for_the_stuck_timeout_stops_though_its_background_moves(handler):
    dead = Action("back", None, "Back", "no safe button")
    h, loop = handler({}, _verdict([dead]))
    loop.options.stuck_timeout_s = 10.0
    out: Any = None
    for _ in range(30):
        out = h.handle(loop.device.screencap(), None)
        if isinstance(out, PlaySummary):
            break
        loop.clock.advance(1.0)
    assert isinstance(out, PlaySummary) and loop.stopped is not None
    assert loop.stopped[1] == "stuck"
    assert Counter(e for e, _ in loop.lines)["screen"] >= 1


def _adopting(profile: GameProfile) -> tuple[ScreenHandler, list[GameProfile], ManualClock, Any]:
    """A screen handler over a loop playing `profile`, the profiles it adopts, its clock
    and its loop."""
    from agent.games.registry import get_game

    adopted: list[GameProfile] = []

    class Playing(Loop):
        def adopt(self, profile: GameProfile, why: str, **fields: object) -> None:
            adopted.append(profile)

        def unverified(self, reason: str) -> None:
            pass

    c = ManualClock()
    loop = Playing(Phone(c, {}), c, profile, options=Options(learn=True), screen=get_game("match3").screen)
    return ScreenHandler(loop), adopted, c, loop  # type: ignore[arg-type]


def _new_board_is_taken(frame: np.ndarray, profile: GameProfile, ph: Any) -> None:
    """The screen handler, on `frame` with the old board's `profile`, takes the new level's
    board (one adoption, the level's grid, at its box) and neither taps nor goes back."""
    from agent.vision.scoring import iou

    h, adopted, c, loop = _adopting(profile)
    # seen first: looked at again, not yet taken (a board caught mid-animation is not)
    assert h.handle(frame, None) is True
    assert adopted == []
    c.advance(NEW_BOARD_HOLD_S)
    assert h.handle(frame, None) is True
    assert loop.device.backs == 0 and loop.device.taps == []
    assert [(p.rows, p.cols) for p in adopted] == [(ph.level.rows, ph.level.cols)]
    assert iou(adopted[0].board_bbox, ph.board_bbox) >= 0.9


def test_a_new_levels_board_with_a_hole_where_tiles_were_is_found_not_backed_out_of():
    """The next level's board lies elsewhere and has a 2x2 hole where the last board had
    tiles: the hole looks like a wordless panel over the old board ("covered", nothing to
    tap). Back would ask to quit the level; the new board, which holds the hole, is taken."""
    from test_saga_family import clock, move, phone, settle, to_board, way_on

    from agent.vision.frames import calibrate_frames
    from agent.vision.scoring import iou

    ph = phone(4, seed=1, levels=3)
    to_board(ph)
    settle(ph)
    first = ph.level
    profile = calibrate_frames([ph.screencap()], "match3").profile
    while ph.level is first:  # level 1 played to its end, then on through whatever comes
        for _ in range(40):
            if ph.screen_kind == "board":
                break
            if any(not b.forbidden and b.action in ("ok", "close", "next", "close_ad", "play_level", "play")
                   for b in ph.buttons):  # fmt: skip
                way_on(ph)
            else:
                clock(ph).advance(1.0)  # an ad's countdown
        settle(ph)
        if ph.level is first:
            move(ph)
    assert any("." in row for row in ph.level.holes), "this world's next level has a hole"
    frame = ph.screencap()
    assert iou(profile.board_bbox, ph.board_bbox) < 0.9, "the next board lies elsewhere"
    assert vision_screens.cover_boxes(frame, profile), "its hole lies over the old board like a panel"

    _new_board_is_taken(frame, profile, ph)


def test_a_new_levels_board_far_below_a_header_badge_the_old_board_spanned_is_taken():
    """The next level's board is shorter and lies lower, and the old board's box reached up
    to the header: a header badge shows inside it, a wordless "panel" with nothing to tap,
    well away from the new board. It covers no part of the new board: the new board is
    taken, not Back."""
    frame, profile, ph = _a_shorter_board_below()
    covers = vision_screens.cover_boxes(frame, profile)
    assert covers and all(b[3] < ph.board_bbox[1] for b in covers), "a header badge shows in the old board's box"

    _new_board_is_taken(frame, profile, ph)


def test_a_board_of_another_shape_gone_before_the_hold_is_no_new_level():
    """A board of another shape found once, then the profile's board back (a board cleared
    at once shows its crates over empty slots for half a second, found as a board of
    their own): it is not taken, and seen again later it is new again, held for the whole
    wait before it is taken (before: taken at once, it ended the level in its middle)."""
    frame, profile, ph = _a_shorter_board_below()
    h, adopted, c, loop = _adopting(profile)
    assert h.handle(frame, None) is True and adopted == []
    c.advance(NEW_BOARD_HOLD_S / 2)
    h.on_board()  # the profile's board came back: what was seen was passing
    c.advance(NEW_BOARD_HOLD_S)
    assert h.handle(frame, None) is True and adopted == [], "seen anew: held again"
    c.advance(NEW_BOARD_HOLD_S / 2)
    assert h.handle(frame, None) is True and adopted == [], "held for less than the wait"
    c.advance(NEW_BOARD_HOLD_S / 2)
    assert h.handle(frame, None) is True and [(p.rows, p.cols) for p in adopted] == [(ph.level.rows, ph.level.cols)]
    assert loop.device.backs == 0 and loop.device.taps == []


def _a_shorter_board_below() -> tuple[np.ndarray, GameProfile, Any]:
    """A family phone's next level, shorter and lower than the last, the old board's box
    (the profile) reaching up over the header: its frame, the profile, the phone."""
    from test_saga_family import settle

    from agent.device.clock import ManualClock as Clock
    from agent.games.match3.saga import SagaPhone
    from agent.games.match3.saga.family import world_of
    from agent.vision.frames import calibrate_frames
    from agent.vision.grid import bbox_to_frac
    from agent.vision.scoring import iou

    ph = SagaPhone(seed=8, size=world_of(8).size, clock=Clock(), world=8)
    ph.launch(ph.package)
    for _ in range(10):  # the screens before the board, by their safe buttons
        ph.clock.advance(1.0)  # type: ignore[attr-defined]
        if ph.screen_kind == "board":
            break
        b = next(b for b in ph.buttons if not b.forbidden and b.action != "none")
        ph.tap((b.box[0] + b.box[2]) // 2, (b.box[1] + b.box[3]) // 2)
    settle(ph)
    first = ph.screencap().copy()
    first[: ph.board_bbox[1] - 20] = first[ph.board_bbox[3] + 40]  # (the header is not this test's business)
    profile = calibrate_frames([first], "match3").profile
    assert iou(profile.board_bbox, ph.board_bbox) >= 0.9
    x0, y0, x1, y1 = profile.board_bbox
    up = int(0.15 * ph.screen_size()[1])  # the old box reaching up over the header's badges
    box = (x0, y0 - up, x1, y1 - up)
    w, h = ph.screen_size()
    profile = replace(profile, board_bbox=box, board_frac=bbox_to_frac(box, w, h))
    ph._start_level(2, ph.clock.now(), fresh=True)  # the next level, as the game would show it
    settle(ph)
    ph.clock.advance(2.0)  # type: ignore[attr-defined]
    assert ph.screen_kind == "board"
    return ph.screencap(), profile, ph


class AdPhone(Phone):
    """A full-screen ad whose art moves everywhere, and a round close badge in a corner."""

    BADGE = (320, 20, 380, 80)

    def screencap(self) -> np.ndarray:
        import cv2

        img = np.zeros((H, W, 3), np.uint8)
        img[:] = (int(self.clock.now() * 370) % 200, 80, 120)  # the art changes a lot in a quarter second
        x0, y0, x1, y1 = self.BADGE
        cv2.circle(img, ((x0 + x1) // 2, (y0 + y1) // 2), (x1 - x0) // 2, (90, 90, 90), -1)
        return img


def test_an_ads_round_close_badge_on_moving_art_is_tapped_at_once(monkeypatch):
    """The ad's art moves under the corners of its close badge's box: the badge itself is
    still, and is tapped at once (judged on the badge's middle, not its box)."""
    from agent.vision.screens import SeenButton  # type: ignore[attr-defined]

    x0, y0, x1, y1 = AdPhone.BADGE
    tap = Action("tap", ((x0 + x1) // 2, (y0 + y1) // 2), "X", "the ad's close x glyph in a corner")
    verdict = ScreenVerdict("ad", tap, "an ad", (), ranked=(tap,), panel=None,
                            buttons=(SeenButton("X", AdPhone.BADGE, "safe", "a close glyph"),))  # fmt: skip
    clock = ManualClock()
    loop = Loop(AdPhone(clock, {}), clock, _profile())
    monkeypatch.setattr(vision_screens, "classify_screen", lambda *a, **k: verdict)
    h = ScreenHandler(loop)  # type: ignore[arg-type]
    h._ocr_checked = True
    assert h.handle(loop.device.screencap(), None, moving=True) is True
    assert loop.device.taps == [tap.point]
    assert not any(e == "note" and "still moving" in f.get("detail", "") for e, f in loop.lines)


class SlidingPhone(Phone):
    """A dialog that keeps sliding: its panel is somewhere else on every look."""

    def screencap(self) -> np.ndarray:
        img = np.zeros((H, W, 3), np.uint8)
        img[:] = (int(self.clock.now() * 37) % 200, 80, 120)
        x0, y0, x1, y1 = PANEL
        dy = int(self.clock.now() * 400) % 60
        img[y0 + dy : y1 + dy, x0:x1] = 230
        img[y0 + dy + 100 : y0 + dy + 140, x0 + 40 : x1 - 40] = 40  # its button
        return img


def test_a_way_on_awaited_while_its_dialog_moves_extends_the_wait(monkeypatch):
    """A dialog still sliding is looked at again before its button is tapped: the screen is
    being waited on, and the loop gives it the longer wait (a slow phone spends seconds
    on each look, and the board's own wait would run out first)."""
    tap = Action("tap", (200, 370), "OK", "safe word 'ok'")
    verdict = _verdict([tap])
    clock = ManualClock()
    loop = Loop(SlidingPhone(clock, {}), clock, _profile())
    monkeypatch.setattr(vision_screens, "classify_screen", lambda *a, **k: verdict)
    h = ScreenHandler(loop)  # type: ignore[arg-type]
    h._ocr_checked = True
    assert h.waiting_s == 0.0
    assert h.handle(loop.device.screencap(), None, moving=True) is False
    assert loop.device.taps == [] and h.waiting_s > 0.0


@pytest.mark.parametrize("kind, panel, text, read", [
    ("intro", PANEL, "Collect 12", True),  # a level's intro card states its goal
    ("covered", PANEL, "Get 5 extra moves", False),  # an offer says other things in a goal's words
    ("card", PANEL, "Collect 12", False),
    ("intro", (80, 250, 320, 300), "Collect 12", False),  # words outside the intro's panel (a map's counter)
])  # fmt: skip
def test_a_goal_is_read_on_a_levels_intro_card_only(handler, kind, panel, text, read):
    from agent.vision.ocr import Word

    words = tuple(Word(t, (100 + 70 * i, 400, 160 + 70 * i, 430), 0.95) for i, t in enumerate(text.split()))
    tap = Action("tap", (200, 500), "Play", "safe word 'play'")
    h, loop = handler({(200, 500): "close"}, _verdict([tap], kind=kind, panel=panel, words=words))
    h.handle(loop.device.screencap(), None)
    goals = [f for e, f in loop.lines if e == "goal"]
    assert bool(goals) == read, goals


def test_a_still_screen_is_classified_once_but_again_after_its_reading_failed(monkeypatch):
    clock = ManualClock()
    loop = Loop(Phone(clock, {}), clock, _profile())
    wait = Action("wait", None, "wait", "the ad's close control comes after its countdown")

    class Ocr:
        failures = 0

    ocr, asked = Ocr(), []

    def classify(*a: Any, **k: Any) -> ScreenVerdict:
        asked.append(k["ocr"])
        if len(asked) == 1:
            ocr.failures += 1  # the first reading timed out (a busy machine): no words
        return _verdict([wait], kind="ad")

    monkeypatch.setattr(vision_screens, "classify_screen", classify)
    h = ScreenHandler(loop)  # type: ignore[arg-type]
    h._ocr_checked, h._ocr = True, ocr
    frame = loop.device.screencap()
    for _ in range(4):
        h.handle(frame.copy(), None)
    assert len(asked) == 2  # read again once after the failed reading, then kept
    h.handle(frame + 1, None)  # another picture: read
    assert len(asked) == 3


def test_a_reading_that_failed_is_never_acted_on_but_read_again(monkeypatch):
    """A reading whose OCR failed (Tesseract timed out on a busy machine) lacks words: its
    verdict taps what the missing words would have ruled out (a Start behind the dialog).
    It is read again, a few times, before anything is tapped."""
    from agent.play.screens import MISREAD_LOOKS

    clock = ManualClock()
    loop = Loop(Phone(clock, {(200, 500): "close"}), clock, _profile())
    behind = Action("tap", (200, 120), "Start", "the map's Start, read while the dialog's words were lost")
    good = Action("tap", (200, 500), "Claim", "the dialog's button")

    class Ocr:
        failures = 0

    ocr, fails = Ocr(), [MISREAD_LOOKS - 1]

    def classify(*a: Any, **k: Any) -> ScreenVerdict:
        if fails[0] > 0:
            fails[0] -= 1
            ocr.failures += 1
            return _verdict([behind])
        return _verdict([good])

    monkeypatch.setattr(vision_screens, "classify_screen", classify)
    h = ScreenHandler(loop)  # type: ignore[arg-type]
    h._ocr_checked, h._ocr = True, ocr
    for _ in range(MISREAD_LOOKS - 1):
        assert h.handle(loop.device.screencap(), None) is False
    assert loop.device.taps == []
    assert h.handle(loop.device.screencap(), None) is True
    assert loop.device.taps == [(200, 500)] and not loop.device.dialog
    notes = [f["detail"] for e, f in loop.lines if e == "note"]
    assert len(notes) == MISREAD_LOOKS - 1 and all("reading failed" in n for n in notes)


def test_a_reading_that_fails_again_and_again_is_acted_on_in_the_end(monkeypatch):
    from agent.play.screens import MISREAD_LOOKS

    clock = ManualClock()
    loop = Loop(Phone(clock, {(200, 500): "close"}), clock, _profile())
    good = Action("tap", (200, 500), "Claim", "the dialog's button")

    class Ocr:
        failures = 0

    ocr = Ocr()

    def classify(*a: Any, **k: Any) -> ScreenVerdict:
        ocr.failures += 1
        return _verdict([good])

    monkeypatch.setattr(vision_screens, "classify_screen", classify)
    h = ScreenHandler(loop)  # type: ignore[arg-type]
    h._ocr_checked, h._ocr = True, ocr
    results = [h.handle(loop.device.screencap(), None) for _ in range(MISREAD_LOOKS + 1)]
    assert results == [False] * MISREAD_LOOKS + [True] and loop.device.taps == [(200, 500)]
