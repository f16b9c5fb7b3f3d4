"""Screens never seen: the family of non-board screens `saga/cards.py` paints (cards of every
kind, the level map, ads before and after their countdown), classified by what they show.
The words, icons, overlay and glyph rules are tested without OCR; the corpus with Tesseract."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from agent.games.match3.saga import cards as C
from agent.games.match3.saga.cards_bench import KINDS, draw_screen, run_corpus
from agent.vision import words as W
from agent.vision.dim import dimmed_outside
from agent.vision.glyphs import find_glyphs, is_arrow, is_cross
from agent.vision.ocr import ocr_unavailable_reason
from agent.vision.prices import icon_beside

needs_tesseract = pytest.mark.skipif(ocr_unavailable_reason() is not None, reason=str(ocr_unavailable_reason()))


@pytest.mark.parametrize("text", ["Next", "Continue", "Tap to continue", "Play", "Start", "Collect", "Claim",
                                  "OK", "Retry", "Try again", "Later", "Not now", "No thanks", "Skip", "Close",
                                  "Resume", "Keep playing", "X", "Got it",
                                  # as OCR reads bold buttons: spaces and apostrophes dropped
                                  "Letsgo", "Let s go", "Nothanks", "Tryagain", "Notnow", "Tapto continue",
                                  # a level's number after a way on that starts it, glued or not
                                  "Play 12", "Play12", "Let's go 3", "Let's go3", "Letsgo 1204"])  # fmt: skip
def test_safe_words_in_their_forms(text):
    assert W.safe_meaning(text) is not None, text
    assert W.forbidden_why(text, on_button=True) is None, text


@pytest.mark.parametrize("text", ["Buy", "$4.99", "4,99 EUR", "Get", "Install now", "Watch ad x2", "Share",
                                  "Invite friends", "Rate us", "Quit", "Give up", "Exit", "Leave", "Play now",
                                  "Play on for 900 coins", "Giveup", "Playnow"])  # fmt: skip
def test_forbidden_by_meaning(text):
    assert W.forbidden_why(text) is not None, text
    assert W.safe_meaning(text) is None or W.forbidden_why(text) is not None


def test_a_number_after_words_on_a_button_is_a_price_but_a_level_is_not():
    assert W.forbidden_why("+5 moves 900", on_button=True) is not None
    assert W.forbidden_why("+5 moves 900") is None  # a line of text is no button
    assert W.forbidden_why("Level 12", on_button=True) is None
    assert W.forbidden_why("Booster500", on_button=True) is not None  # (a number glued to its word)
    assert W.safe_meaning("Continue 900") is None and W.safe_meaning("Play on 900") is None
    assert [W.started_level(t) for t in ("Play 12", "Let's go3", "Letsgo 1204", "Play", "Next 3", "Play on 900")] == [
        12, 3, 1204, None, None, None]  # fmt: skip
    assert W.forbidden_why("Score 2422 of 6953", on_button=True) is None


def test_countdowns_levels_and_outcomes():
    assert [W.countdown(t) for t in ("5", "Close in 5", "Skip in 5s", "3s", "Install", "Level 5")] == [5, 5, 5, 3, None,
                                                                                                     None]  # fmt: skip
    assert W.explicit_countdown("Skip in 4s") and not W.explicit_countdown("4")
    assert W.level_of(["Score 10", "Level 7"]) == 7 and W.level_of(["Lv. 12"]) == 12 and W.level_of(["Next"]) is None
    assert W.outcome_of(["Level Complete!", "Next"]) == "won" and W.outcome_of(["Well done!"]) == "won"
    assert W.outcome_of(["Out of moves!"]) == "lost" and W.outcome_of(["Level 3 failed", "Retry"]) == "lost"
    assert W.outcome_of(["Daily reward", "Collect"]) is None


def _number_with(icon_kind: str | None) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    img = np.full((200, 600, 3), (60, 150, 230), np.uint8)
    cv2.putText(img, "900", (260, 125), cv2.FONT_HERSHEY_DUPLEX, 2.0, (255, 255, 255), 5, cv2.LINE_AA)
    (tw, th), _ = cv2.getTextSize("900", cv2.FONT_HERSHEY_DUPLEX, 2.0, 5)
    if icon_kind is not None:
        C.icon(img, icon_kind, (260 - int(th * 1.2), 125 - th // 2), int(th * 0.55))
    else:  # letters beside it, not an icon
        cv2.putText(img, "Box", (80, 125), cv2.FONT_HERSHEY_DUPLEX, 2.0, (255, 255, 255), 5, cv2.LINE_AA)
    return img, (260, 125 - th, 260 + tw, 125)


@pytest.mark.parametrize("kind", C.ICONS)
def test_a_currency_icon_beside_a_number_is_found(kind):
    img, box = _number_with(kind)
    assert icon_beside(img, box) is not None


def test_letters_beside_a_number_are_no_icon():
    img, box = _number_with(None)
    assert icon_beside(img, box) is None


def test_the_overlay_behind_a_card_is_seen_as_dimmed():
    rng = np.random.default_rng(4)
    style = C.card_style(rng)
    behind = C.backdrop(style, (1080, 2400), rng)
    cv2.putText(behind, "Collect", (60, 400), cv2.FONT_HERSHEY_DUPLEX, 3, (255, 255, 255), 6)
    dimmed = C.CardStyle(**{**style.__dict__, "dim": 0.5})
    clear = C.CardStyle(**{**style.__dict__, "dim": 1.0, "panel": (240, 240, 240)})
    for st, expected in ((dimmed, True), (clear, False)):
        frame, taps = C.draw_card(st, C.CardContent("tip", 3), behind, np.random.default_rng(1))
        xs = [t.box[0] for t in taps] + [t.box[2] for t in taps]
        ys = [t.box[1] for t in taps] + [t.box[3] for t in taps]
        panel = (int(1080 * (1 - st.panel_w) / 2), min(ys) - 300, int(1080 * (1 + st.panel_w) / 2), max(ys) + 40)
        assert min(xs) >= panel[0] - 60
        assert dimmed_outside(frame, panel) is expected


def _circles(centres: list[tuple[int, int]], r: int) -> np.ndarray:
    img = np.full((1600, 720, 3), (140, 90, 160), np.uint8)
    for x, y in centres:
        cv2.circle(img, (x, y), r, (170, 170, 170), -1)
        cv2.rectangle(img, (x - r // 3, y - r // 4), (x + r // 3, y + r // 3), (90, 90, 90), -1)  # a padlock
    return img


def test_a_path_of_locked_level_badges_is_a_map_and_a_board_of_round_tiles_is_not():
    from agent.vision.ocr import flat_regions
    from agent.vision.screens import badge_path

    path = [(150, 300), (260, 470), (420, 620), (560, 800), (420, 980), (250, 1150)]
    assert badge_path(flat_regions(_circles(path, 40)), 720, 1600)
    lattice = [(100 + 80 * c, 500 + 80 * r) for r in range(7) for c in range(7)]
    assert not badge_path(flat_regions(_circles(lattice, 34)), 720, 1600)
    assert not badge_path(flat_regions(_circles(path[:2], 40)), 720, 1600)  # two badges: no path


def test_close_glyphs():
    img = np.full((300, 600, 3), (90, 40, 120), np.uint8)
    C.close_glyph(img, "x", (40, 40, 140, 140), (50, 50, 200))
    C.close_glyph(img, "arrow", (300, 40, 400, 140), (50, 50, 200))
    cv2.putText(img, "L", (460, 140), cv2.FONT_HERSHEY_DUPLEX, 3, (255, 255, 255), 6)
    found = find_glyphs(img, [(0, 0, 600, 300)])
    kinds = sorted(k for _, k in found)
    assert kinds == ["arrow", "x"], found
    blank = np.zeros((40, 40), bool)
    assert not is_cross(blank) and not is_arrow(blank)


def test_every_screen_kind_is_drawn_with_its_tappables():
    for i, kind in enumerate(KINDS):
        s = draw_screen(kind, 500 + i, over_board=False)
        assert s.frame.ndim == 3 and s.taps, kind
        if kind != "ad_before":
            assert any(not t.forbidden for t in s.taps), kind
        h, w = s.frame.shape[:2]
        assert all(0 <= t.box[0] < t.box[2] <= w + w // 10 and 0 <= t.box[1] < t.box[3] <= h for t in s.taps), kind


@needs_tesseract
def test_a_sample_of_unseen_screens_is_left_the_right_way_and_never_by_a_forbidden_tap():
    res = run_corpus(24, seed=7)
    table = res.table()
    assert res.total("forbidden_taps") == 0, table
    assert res.total("right_action") >= 21, table + "\n" + "\n".join(f for r in res.rows for f in r.failures)
    assert res.total("right_kind") >= 21, table
    assert res.total("right_outcome") >= 21, table
    assert res.total("level_read") >= res.total("level_shown") - 1, table


def _classify(frame, ocr):
    from agent.games.match3.saga.cards_bench import Screen, _profile
    from agent.vision.screens import classify_screen

    s = Screen("x", frame, (), 0, None, 0)
    return classify_screen(frame, _profile(s), board_readable=False, foreground=None, ocr=ocr)


@pytest.fixture(scope="module")
def ocr():
    from agent.vision.ocr import TesseractOcr

    return TesseractOcr()


def _hit(v, taps):
    assert v.action is not None and v.action.kind == "tap" and v.action.point is not None, v.reason
    return [t for t in taps if t.hit(*v.action.point)]


@needs_tesseract
def test_a_gradient_continue_is_read_and_the_dimmed_collect_behind_is_not_tapped(ocr):
    import dataclasses

    rng = np.random.default_rng(11)
    style = dataclasses.replace(C.card_style(rng), button_look="gradient", dim=0.5, gradient_to=0.5,
                                words=tuple((m, "Continue" if m == "next" else f) for m, f in C.card_style(rng).words))  # fmt: skip
    behind = C.backdrop(style, (1080, 2400), rng)
    C.text(behind, "Collect", (60, 300, 1020, 420), (255, 255, 255), style, None, 0.6)
    frame, taps = C.draw_card(style, C.CardContent("complete", 4, score=1200), behind, np.random.default_rng(3))
    v = _classify(frame, ocr)
    hit = _hit(v, taps)
    assert [t.action for t in hit] == ["next"], (v.reason, v.buttons)
    assert v.outcome == "won" and v.panel is not None
    assert all(b.verdict != "safe" for b in v.buttons if "collect" in b.text.lower())


@needs_tesseract
def test_numbers_behind_a_dimmed_card_make_no_map_and_the_cards_close_is_tapped(ocr):
    # Level badges (or tiles read as digits) under a dimmed out-of-moves card belong to
    # what is behind: the card, whose only free way on is its close X, is the screen.
    import dataclasses

    style = dataclasses.replace(C.card_style(np.random.default_rng(2)), dim=0.55)
    behind, _ = C.draw_map(style, (1080, 2400), 12, np.random.default_rng(102), 0.0)
    frame, taps = C.draw_card(style, C.CardContent("out_of_moves", 12, coins=900), behind, np.random.default_rng(202))
    v = _classify(frame, ocr)
    assert v.kind != "map", (v.reason, v.buttons)
    assert [t.action for t in _hit(v, taps)] == ["close"], (v.reason, v.buttons)


@needs_tesseract
def test_an_ad_is_waited_for_then_closed(ocr):
    style = C.card_style(np.random.default_rng(5))
    before, _ = C.draw_ad(style, (1080, 2400), np.random.default_rng(2), 1.0, 0.0, 5.0)
    v = _classify(before, ocr)
    assert v.kind == "ad" and v.action is not None and v.action.kind == "wait", v.reason
    assert v.ranked[-1].kind == "back"
    after, taps = C.draw_ad(style, (1080, 2400), np.random.default_rng(2), 6.0, 0.0, 5.0)
    v = _classify(after, ocr)
    assert v.kind == "ad" and [t.action for t in _hit(v, taps)] == ["close_ad"], (v.reason, v.buttons)


@needs_tesseract
def test_an_ad_whose_picture_passes_for_a_dialog_is_told_by_its_countdown_and_waited_for(ocr):
    # The ad's gradient gives a band of the screen that passes for a dialog, its install
    # button on it, and its tagline "Play with friends" on a round shape: "Play" was tapped.
    # Its countdown, small on a pill in a corner, is what says it is an ad.
    s = draw_screen("ad_before", 82, over_board=False)
    v = _classify(s.frame, ocr)
    assert v.kind == "ad" and v.action is not None and v.action.kind == "wait", (v.reason, v.buttons)
    assert v.countdown is not None and v.countdown > 0


@needs_tesseract
def test_an_ad_whose_picture_passes_for_a_dialog_is_closed_by_its_corner_glyph_once_shown(ocr):
    # The same, after the countdown: the band of the gradient holds "Install" and a
    # tagline; the close arrow in the bottom corner is the way out, not Back.
    s = draw_screen("ad_after", 100038, over_board=False)
    v = _classify(s.frame, ocr)
    assert v.kind == "ad" and [t.action for t in _hit(v, s.taps)] == ["close_ad"], (v.reason, v.buttons)


@needs_tesseract
@pytest.mark.parametrize(("kind", "seed", "way"), [("failed", 85, "retry"), ("tip", 89, "ok")])
def test_a_get_read_off_a_header_behind_a_card_makes_no_ad_of_the_card(ocr, kind, seed, way):
    # The header's "TARGET" reads "GET" beside the card, over a backdrop too dark for its
    # dimming to show: an ad's install button by its word, outside the dialog. A dialog
    # with its own way on is no ad for a word that also names other things than installs.
    s = draw_screen(kind, seed, over_board=True)
    v = _classify(s.frame, ocr)
    assert v.kind != "ad", (v.reason, v.buttons)
    assert [t.action for t in _hit(v, s.taps)] == [way], (v.reason, v.buttons)


@needs_tesseract
def test_an_offer_over_a_boards_boosters_is_no_map(ocr):
    # A starter pack over a board: the boosters' counts below read "4" and "6", a tile of
    # the row behind "4" again. A level's number is on one node: no map, and no tap
    # behind the offer (its X read or not, Back leaves it).
    from agent.games.match3.saga.cards_bench import _profile
    from agent.vision.screens import classify_screen

    s = draw_screen("offer", 100066, over_board=True)  # (`agent bench screens --seed 1`'s 67th)
    assert s.board is not None
    # (the board's box known, as in play: the offer covers it)
    v = classify_screen(s.frame, _profile(s), board_readable=False, foreground=None, ocr=ocr)
    assert v.kind != "map", (v.reason, v.buttons)
    assert v.action is not None and (v.action.kind == "back" or [t.action for t in _hit(v, s.taps)] == ["close"]), \
        (v.reason, v.buttons)  # fmt: skip


@needs_tesseract
def test_the_map_taps_the_current_level(ocr):
    style = C.card_style(np.random.default_rng(8))
    frame, taps = C.draw_map(style, (1080, 2400), 12, np.random.default_rng(4), 0.0)
    v = _classify(frame, ocr)
    assert v.kind == "map" and v.level == 12, (v.reason, v.buttons)
    assert [t.action for t in _hit(v, taps)] == ["play_level"]


def test_ranked_always_starts_with_the_action():
    from agent.vision.screens import Action, ScreenVerdict

    back = Action("back", None, "Back", "no safe button")
    assert ScreenVerdict("card", back, "r").ranked == (back,)
    tap = Action("tap", (10, 20), "OK", "safe word 'ok'")
    assert ScreenVerdict("card", tap, "r", ranked=(back, tap)).ranked == (tap, back)
    assert ScreenVerdict("unknown", None, "r").ranked == ()


@needs_tesseract
@pytest.mark.parametrize("seed", range(3))
def test_an_ad_over_a_busy_picture_is_closed_once_its_x_shows(ocr, seed):
    """A busy ad picture reads as specks of digits (one cut by the screen's edge, or the X
    itself read as a 4): none of them is a countdown to wait on once the close X shows."""
    from agent.games.match3.saga import screens as S

    w, h = ((1080, 2400), (720, 1280), (1080, 1920))[seed % 3]
    img, _, close = S.ad_screen(w, h, np.random.default_rng(seed))
    frame = img.copy()
    S.button(frame, close)
    v = _classify(frame, ocr)
    assert v.kind == "ad" and v.action is not None and v.action.kind == "tap", (v.reason, v.buttons)
    assert close.hit(*v.action.point), (v.action, close.box)
    v = _classify(img, ocr)  # before the close shows: waited on, never tapped
    assert v.kind == "ad" and v.action is not None and v.action.kind == "wait", v.reason


@needs_tesseract
def test_a_hole_showing_a_flat_patch_of_sky_is_no_dialog(ocr):
    """A 7x8 board with a 2x2 hole in its middle, the sky behind it a flat purple just then
    (a saga family phone's frame, kept as it was): the flat shape over the board holds no
    word, so on a board read with confidence it is the board's own, not a dialog (before:
    "a dialog covers the board; no safe button", and Back, for five minutes). The same
    shape on a board that could not be read is still looked at as a dialog."""
    from pathlib import Path

    from agent.vision.features import DEFAULT_PATCH, feature_length
    from agent.vision.profile import Exemplar, GameProfile
    from agent.vision.screens import classify_screen, cover_boxes
    from agent.vision.images import read_image

    frame = read_image(Path(__file__).parents[1] / "data" / "frames" / "board_with_a_hole_over_a_flat_patch_of_sky.webp")
    h, w = frame.shape[:2]
    p = GameProfile.from_bbox("match3", 7, 8, (64, 570, 1024, 1410), w, h,
                              [Exemplar("A", np.zeros(feature_length(DEFAULT_PATCH)))])  # fmt: skip
    assert cover_boxes(frame, p), "the case: the hole's flat patch is a shape over the board"
    v = classify_screen(frame, p, board_readable=True, foreground=None, ocr=ocr)
    assert v.kind == "board" and v.action is None, v.reason
    v = classify_screen(frame, p, board_readable=False, foreground=None, ocr=ocr)
    assert v.kind == "covered", v.reason
