"""The way to a board before calibration (`agent.vision.way_in`), on games of the saga
family: a daily bonus over an undimmed map is left by its own button (the map's Start
behind it is not the way on while the dialog is up), and the board is reached through a
map, an intro card and a coin-priced offer, never taking a map's pictures for a board."""

from __future__ import annotations

import pytest
import numpy as np

from agent.device.clock import ManualClock
from agent.errors import AgentError
from agent.games.match3.saga import SagaPhone
from agent.games.match3.saga.family import world_of
from agent.vision.ocr import default_ocr, ocr_unavailable_reason

pytestmark = pytest.mark.skipif(ocr_unavailable_reason() is not None, reason=str(ocr_unavailable_reason()))


def _phone(world: int) -> SagaPhone:
    ph = SagaPhone(seed=world, size=world_of(world).size, clock=ManualClock(), world=world)
    ph.launch(ph.package)
    ph.clock.advance(1.0)  # type: ignore[attr-defined]
    return ph


@pytest.mark.parametrize("world", [1, 11, 14])
def test_a_daily_bonus_over_an_undimmed_map_is_left_by_its_own_button(world):
    from agent.vision.screens import classify_screen
    from agent.vision.way_in import _provisional

    ph = _phone(world)
    assert ph.screen_detail == "daily" and world_of(world).map
    frame = ph.screencap()
    v = classify_screen(frame, _provisional(frame, "match3"), board_readable=False, foreground=None,
                        ocr=default_ocr())  # fmt: skip
    assert v.action is not None and v.action.kind == "tap" and v.action.point is not None, v.reason
    hit = [b for b in ph.buttons if b.hit(*v.action.point)]
    # the dialog's own buttons (Claim, its close), not the map's Start behind it
    assert [b.action for b in hit] in (["collect"], ["close"]), (v.reason, v.panel, [b.action for b in hit])


@pytest.mark.parametrize("world", [11, 14, 17])
def test_calibration_reaches_the_board_through_daily_bonus_map_intro_and_offer(world):
    """World 11: a daily bonus over an undimmed map, the map's Start, the intro's Start, an
    offer closed by its corner arrow. World 14: a map of padlocked badges among big round
    decorations, whose current node carries no readable number. World 17: a board of light
    slots (a flat face, a tile at its corner shaped like an arrow) under a sparkling hint."""
    from agent.games.registry import role_hints
    from agent.vision.frames import calibrate_frames
    from agent.vision.way_in import reach_board

    ph = _phone(world)
    hints = role_hints("match3")
    way = reach_board(ph, ph.clock, ph.serial,
                      lambda f: calibrate_frames([f], "match3", hints=hints).profile.board_bbox, "match3", default_ocr())  # fmt: skip
    assert ph.screen_kind == "board", way.steps
    assert ph.truth()["forbidden_taps"] == 0
    x0, y0, x1, y1 = ph.board_bbox
    bx0, by0, bx1, by1 = way.bbox
    inter = max(0, min(x1, bx1) - max(x0, bx0)) * max(0, min(y1, by1) - max(y0, by0))
    union = (x1 - x0) * (y1 - y0) + (bx1 - bx0) * (by1 - by0) - inter
    assert inter / union >= 0.9, (way.bbox, ph.board_bbox, way.steps)
    assert len(way.steps) >= 2, way.steps  # the daily bonus, the map (and the intro card, the offer)
    assert not any("Back" in step for step in way.steps), way.steps  # every screen left by its own way on


@pytest.mark.parametrize("world", [8, 14])
def test_a_map_under_the_last_boards_box_with_only_a_shop_to_press_is_left_by_its_current_node(world):
    """Between levels, the map shows where the last board was (so shapes of it "cover" the
    board's box), its levels on round badges whose numbers OCR does not read, and a Shop
    button. The Shop's words make no dialog of the map's backdrop: the map's prominent node
    is tapped, never Back (before: "a dialog covers the board; no safe button", Back again
    and again, and the run stopped)."""
    from agent.vision.classify import Exemplar
    from agent.vision.features import DEFAULT_PATCH, feature_length
    from agent.vision.profile import GameProfile
    from agent.vision.screens import classify_screen

    import numpy as np

    ph = _phone(world)
    ph._enter_level(3, ph.clock.now())  # the map before level 3: two levels won below it
    for _ in range(6):  # a daily bonus over it, by a person's choice
        if ph.screen_kind == "map":
            break
        b = next(b for b in ph.buttons if not b.forbidden and b.action in ("collect", "close", "continue", "ok"))
        ph.tap((b.box[0] + b.box[2]) // 2, (b.box[1] + b.box[3]) // 2)
        ph.clock.advance(1.5)  # type: ignore[attr-defined]
    assert ph.screen_kind == "map", ph.screen_detail
    w, h = ph.screen_size()
    box = (int(0.1 * w), int(0.41 * h), int(0.94 * w), int(0.79 * h))  # the last board's box
    profile = GameProfile.from_bbox("match3", 7, 7, box, w, h, [Exemplar("A", np.zeros(feature_length(DEFAULT_PATCH)))],
                                    package=ph.package)  # fmt: skip
    v = classify_screen(ph.screencap(), profile, board_readable=False, foreground=ph.package, ocr=default_ocr())
    assert v.kind == "map" and v.action is not None and v.action.point is not None, v.reason
    hit = [b.action for b in ph.buttons if b.hit(*v.action.point)]
    assert hit and not any(b.forbidden for b in ph.buttons if b.hit(*v.action.point)), (v.reason, hit)


class _Stuck:
    """A phone showing a dialog whose buttons all do nothing (a game frozen under it, or a
    dialog drawn over another that takes every tap); Back brings the board."""

    def __init__(self, dialog, board) -> None:
        self.frame, self.board = dialog, board
        self.taps: list[tuple[int, int]] = []
        self.backs = 0
        self.serial, self.model = "stuck", "stuck"

    def screen_size(self):
        return self.frame.shape[1], self.frame.shape[0]

    def screencap(self):
        return self.frame

    def tap(self, x: int, y: int) -> None:
        self.taps.append((x, y))

    def swipe(self, *args, **kwargs) -> None:
        raise AssertionError("no swipe on the way in")

    def back(self) -> None:
        self.backs += 1
        self.frame = self.board

    def foreground(self):
        return "com.stuck"

    def launch(self, package: str) -> None:
        pass


def test_a_button_that_led_nowhere_twice_on_the_way_in_is_not_tapped_a_third_time():
    """The way to the board met a dialog none of whose buttons does anything: each way on
    is tapped twice at most, then Back (before: its Claim was tapped until the steps ran
    out, and calibration failed with no board)."""
    from collections import Counter

    from test_saga_family import settle, to_board

    from agent.games.registry import role_hints
    from agent.vision.frames import calibrate_frames
    from agent.vision.way_in import TAP_LIMIT, reach_board

    ph = _phone(11)
    assert ph.screen_detail == "daily"
    dialog = ph.screencap().copy()
    to_board(ph)
    settle(ph)
    ph.clock.advance(2.0)  # type: ignore[attr-defined]
    phone = _Stuck(dialog, ph.screencap().copy())
    hints = role_hints("match3")
    way = reach_board(phone, ManualClock(), phone.serial,
                      lambda f: calibrate_frames([f], "match3", hints=hints).profile.board_bbox, "match3", default_ocr())  # fmt: skip
    assert way.bbox is not None and phone.backs == 1, way.steps
    places = Counter((x // 24, y // 24) for x, y in phone.taps)
    assert phone.taps and max(places.values()) <= TAP_LIMIT, way.steps


class _FailingFirst:
    """An OCR whose first readings fail part way, as Tesseract timing out on a busy machine
    does: the dialog's words are missing, the map's Start below it is read."""

    def __init__(self, fails: int) -> None:
        self.real, self.fails, self.failures = default_ocr(), fails, 0

    def words(self, image):
        words = self.real.words(image)
        if self.fails > 0:
            self.fails -= 1
            self.failures += 1
            h = image.shape[0]
            words = [w for w in words if w.centre[1] > 0.8 * h]
        return words

    def read_crops(self, image, boxes):
        return self.real.read_crops(image, boxes)


def test_a_reading_that_failed_is_read_again_before_anything_is_tapped_on_the_way_in():
    """Under load the gift card's words were lost and the map's Start behind it was tapped
    twice (taken by the card), then spent for the map itself, and calibration failed
    pressing Back on the map. A failed reading is now read again before it is acted on."""
    from agent.games.registry import role_hints
    from agent.vision.frames import calibrate_frames
    from agent.vision.way_in import reach_board

    ph = _phone(11)
    assert ph.screen_detail == "daily"
    hints = role_hints("match3")
    way = reach_board(ph, ph.clock, ph.serial,
                      lambda f: calibrate_frames([f], "match3", hints=hints).profile.board_bbox, "match3", _FailingFirst(2))  # fmt: skip
    assert ph.screen_kind == "board", way.steps
    t = ph.truth()
    assert (t["taps_ignored"], t["back_presses"], t["forbidden_taps"]) == (0, 0, 0), way.steps


class _SlidingPhone(SagaPhone):
    """A phone whose every new screen slides in for a few frames and takes no tap until it
    rests, as many games' maps and cards do."""

    SLIDE = (48, 24, 12)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sliding = 0
        self.taps_while_sliding = 0

    def screencap(self):
        frame = super().screencap()
        if self.sliding:
            shift = self.SLIDE[len(self.SLIDE) - self.sliding]
            self.sliding -= 1
            return np.roll(frame, shift, axis=0)
        return frame

    def on_tap(self, x, y):
        if self.sliding:
            self.taps_while_sliding += 1
            return None
        done = super().on_tap(x, y)
        if done is not None:
            self.sliding = len(self.SLIDE)
        return done


def test_a_screen_still_sliding_in_is_not_tapped_on_the_way_to_the_board():
    """Each screen after a tap slides in for three frames and ignores taps meanwhile: the
    way in looks again until the button rests, and every tap it makes is taken."""
    from agent.games.registry import role_hints
    from agent.vision.frames import calibrate_frames
    from agent.vision.way_in import reach_board

    ph = _SlidingPhone(seed=11, size=world_of(11).size, clock=ManualClock(), world=11)
    ph.launch(ph.package)
    ph.clock.advance(1.0)
    ph.sliding = len(ph.SLIDE)  # the first screen slides in too
    hints = role_hints("match3")
    way = reach_board(ph, ph.clock, ph.serial,
                      lambda f: calibrate_frames([f], "match3", hints=hints).profile.board_bbox, "match3", default_ocr())  # fmt: skip
    assert ph.screen_kind == "board", way.steps
    assert ph.taps_while_sliding == 0, way.steps
    assert ph.truth()["forbidden_taps"] == 0


def test_a_board_of_drawn_gems_is_no_map_of_round_badges(monkeypatch, tmp_path):
    """With no shared shots the tiles are drawn: flat faceted gems and crates, round badges
    of one size. World 2 (seed 2) read its level-1 board as a map whose prominent node was
    one of its crates, tapped it until the steps ran out, and stopped with "no board". A
    node read from shapes alone that is one of the found board's cells is the board's own."""
    from agent.games.registry import role_hints
    from agent.vision.frames import calibrate_frames
    from agent.vision.way_in import reach_board

    monkeypatch.setenv("PUZZLE_AGENT_SHOTS", str(tmp_path))  # no shots there: drawn art
    ph = SagaPhone(seed=2, size=(1080, 2340), clock=ManualClock(), world=2)
    ph.launch(ph.package)
    hints = role_hints("match3")
    way = reach_board(ph, ph.clock, ph.serial,
                      lambda f: calibrate_frames([f], "match3", hints=hints).profile.board_bbox, "match3", default_ocr())  # fmt: skip
    assert ph.screen_kind == "board", way.steps
    assert ph.truth()["forbidden_taps"] == 0
    assert not any("level node" in step for step in way.steps[-1:]), way.steps
    x0, y0, x1, y1 = ph.board_bbox
    bx0, by0, bx1, by1 = way.bbox
    assert abs(bx0 - x0) + abs(by0 - y0) + abs(bx1 - x1) + abs(by1 - y1) <= 0.1 * (x1 - x0), (way.bbox, ph.board_bbox)


def test_a_way_in_that_finds_no_board_keeps_the_screens_that_explain_it(tmp_path):
    """A dialog whose every button, and Back, does nothing: the way in stops with a clear
    reason, and the screens it looked at (with what was made of each) are saved where the
    error names them, so a user can see what the agent saw."""
    import cv2

    from agent.vision.way_in import KEEP_SEEN, WayInError, keep_seen, reach_board

    ph = _phone(11)
    assert ph.screen_detail == "daily"
    dialog = ph.screencap().copy()
    phone = _Stuck(dialog, dialog)  # Back leaves the dialog up too

    def no_board(frame):
        raise AgentError("no board found", hint="open the game on a board")

    with pytest.raises(WayInError) as caught:
        reach_board(phone, ManualClock(), phone.serial, no_board, "match3", default_ocr())
    exc = caught.value
    assert 1 <= len(exc.seen) <= KEEP_SEEN and phone.backs >= 1
    kept = keep_seen(exc, tmp_path / "seen")
    assert str(tmp_path / "seen") in str(kept) and kept.hint == exc.hint
    pngs = sorted((tmp_path / "seen").glob("*.png"))
    assert len(pngs) == len(exc.seen)
    assert cv2.imread(str(pngs[0])).shape == dialog.shape
    steps = (tmp_path / "seen" / "steps.txt").read_text().splitlines()
    assert [line.split(":")[0] for line in steps] == [p.name for p in pngs]
    assert any("card" in line or "covered" in line for line in steps), steps
