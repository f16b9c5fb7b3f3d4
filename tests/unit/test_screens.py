"""Screen classification and dismissal on drawn screens, with the real Tesseract: offers,
level-complete and out-of-moves cards, a tip over a board, in several sizes and colours;
taught screens; another app in front; the header's numbers; `agent screens`."""

from __future__ import annotations

import os
import subprocess
import sys

import cv2
import numpy as np
import pytest

from agent.vision.classify import Exemplar
from agent.vision.features import DEFAULT_PATCH, feature_length
from agent.vision.ocr import TesseractOcr, ocr_unavailable_reason
from agent.vision.profile import DeviceProfile, GameProfile, TaughtScreen, load_profile, save_profile
from agent.vision.screens import (
    classify_screen, forbidden, hash_distance, is_cross, match_taught, safe_rank, screen_hash, teach_screen,
)  # fmt: skip

needs_tesseract = pytest.mark.skipif(ocr_unavailable_reason() is not None, reason=str(ocr_unavailable_reason()))


FONT = cv2.FONT_HERSHEY_DUPLEX

def text_centre(img, text, box, colour, scale_h=0.5, thick=None):
    x0, y0, x1, y1 = box
    h = y1 - y0
    fs = h * scale_h / 22.0
    t = thick or max(1, int(fs * 2))
    (tw, th), _ = cv2.getTextSize(text, FONT, fs, t)
    if tw > (x1 - x0) * 0.9:
        fs *= (x1 - x0) * 0.9 / tw
        t = max(1, int(fs * 2))
        (tw, th), _ = cv2.getTextSize(text, FONT, fs, t)
    org = ((x0 + x1 - tw) // 2, (y0 + y1 + th) // 2)
    cv2.putText(img, text, org, FONT, fs, colour, t, cv2.LINE_AA)

def rrect(img, box, colour, r):
    x0, y0, x1, y1 = box
    r = int(min(r, (x1 - x0) // 2, (y1 - y0) // 2))
    cv2.rectangle(img, (x0 + r, y0), (x1 - r, y1), colour, -1)
    cv2.rectangle(img, (x0, y0 + r), (x1, y1 - r), colour, -1)
    for cx, cy in ((x0 + r, y0 + r), (x1 - r, y0 + r), (x0 + r, y1 - r), (x1 - r, y1 - r)):
        cv2.circle(img, (cx, cy), r, colour, -1, cv2.LINE_AA)

def button(img, box, face, text, ink=(255, 255, 255)):
    rrect(img, box, face, (box[3] - box[1]) // 2)
    text_centre(img, text, box, ink)

def close_x(img, centre, r, face=(60, 60, 200), ink=(255, 255, 255)):
    cx, cy = centre
    cv2.circle(img, (cx, cy), r, face, -1, cv2.LINE_AA)
    d = int(r * 0.45)
    t = max(2, r // 4)
    cv2.line(img, (cx - d, cy - d), (cx + d, cy + d), ink, t, cv2.LINE_AA)
    cv2.line(img, (cx - d, cy + d), (cx + d, cy - d), ink, t, cv2.LINE_AA)

def offer(w=1080, h=2400, bg=(90, 40, 30), panel=(235, 225, 250), buy=(40, 180, 60)):
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = bg
    px0, py0, px1, py1 = int(w * .1), int(h * .3), int(w * .9), int(h * .65)
    rrect(img, (px0, py0, px1, py1), panel, w // 20)
    text_centre(img, "Special Offer", (px0, py0 + int(h * .03), px1, py0 + int(h * .09)), (60, 30, 30))
    bb = (int(w * .3), int(h * .52), int(w * .7), int(h * .59))
    button(img, bb, buy, "$4.99 Buy")
    r = int(w * 0.045)
    xc = (px1 - r // 2, py0 + r // 2)
    close_x(img, xc, r)
    return img, {"buy": bb, "close": (xc[0] - r, xc[1] - r, xc[0] + r, xc[1] + r)}

def card_complete(w=1080, h=2400, bg=(120, 60, 140), panel=(60, 200, 250), next_face=(200, 120, 30), share_face=(60, 160, 60)):
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = bg
    px0, py0, px1, py1 = int(w * .08), int(h * .25), int(w * .92), int(h * .7)
    rrect(img, (px0, py0, px1, py1), panel, w // 25)
    text_centre(img, "Level 3 complete", (px0, py0 + int(h * .04), px1, py0 + int(h * .1)), (40, 40, 90))
    sb = (int(w * .15), int(h * .58), int(w * .47), int(h * .64))
    nb = (int(w * .53), int(h * .58), int(w * .85), int(h * .64))
    button(img, sb, share_face, "Share")
    button(img, nb, next_face, "Next")
    return img, {"share": sb, "next": nb}

def out_of_moves(w=1080, h=2400, bg=(40, 40, 40), panel=(250, 250, 250)):
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = bg
    px0, py0, px1, py1 = int(w * .1), int(h * .3), int(w * .9), int(h * .68)
    rrect(img, (px0, py0, px1, py1), panel, w // 25)
    text_centre(img, "Out of moves", (px0, py0 + int(h * .03), px1, py0 + int(h * .09)), (30, 30, 30))
    bb = (int(w * .18), int(h * .45), int(w * .82), int(h * .52))
    rb = (int(w * .3), int(h * .57), int(w * .7), int(h * .63))
    button(img, bb, (0, 150, 255), "+5 Moves $0.99")
    button(img, rb, (200, 100, 0), "Retry")
    return img, {"buy": bb, "retry": rb}

def board_tip(w=1080, h=2400, seed=0):
    rng = np.random.default_rng(seed)
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = (70, 50, 30)
    cols = rows = 8
    cell = int(w * 0.11)
    x0, y0 = (w - cols * cell) // 2, int(h * 0.3)
    colours = [(40, 40, 220), (40, 200, 40), (220, 80, 40), (30, 200, 230), (200, 60, 200), (230, 230, 230)]
    for r in range(rows):
        for c in range(cols):
            k = colours[int(rng.integers(len(colours)))]
            cx, cy = x0 + c * cell + cell // 2, y0 + r * cell + cell // 2
            cv2.rectangle(img, (x0 + c * cell, y0 + r * cell), (x0 + (c + 1) * cell - 1, y0 + (r + 1) * cell - 1), (110, 80, 60), -1)
            cv2.circle(img, (cx, cy), int(cell * 0.38), k, -1, cv2.LINE_AA)
    bbox = (x0, y0, x0 + cols * cell, y0 + rows * cell)
    dx0, dy0, dx1, dy1 = x0 + cell, y0 + 2 * cell + cell // 3, x0 + 7 * cell, y0 + 5 * cell
    rrect(img, (dx0, dy0, dx1, dy1), (245, 240, 235), cell // 3)
    text_centre(img, "Match 3 to clear", (dx0, dy0 + cell // 4, dx1, dy0 + cell), (60, 40, 40))
    ob = (dx0 + 2 * cell, dy1 - cell - cell // 5, dx1 - 2 * cell, dy1 - cell // 5)
    button(img, ob, (50, 170, 50), "OK")
    return img, {"ok": ob, "board": bbox}


def header(w=1080, h=2400, bg=(120, 40, 40), ink=(255, 255, 255), moves="25", score="1280", below=False):
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = bg
    lh = int(h * 0.03)
    if below:
        text_centre(img, "MOVES", (int(w * .05), int(h * .03), int(w * .35), int(h * .03) + lh), ink)
        text_centre(img, moves, (int(w * .05), int(h * .03) + lh + lh // 3, int(w * .35), int(h * .03) + 2 * lh + lh // 3), ink)
    else:
        text_centre(img, "MOVES", (int(w * .03), int(h * .03), int(w * .28), int(h * .03) + lh), ink)
        text_centre(img, moves, (int(w * .29), int(h * .03), int(w * .42), int(h * .03) + lh), ink)
    text_centre(img, "SCORE", (int(w * .55), int(h * .03), int(w * .78), int(h * .03) + lh), ink)
    text_centre(img, score, (int(w * .79), int(h * .03), int(w * .98), int(h * .03) + lh), ink)
    return img


def profile(w, h, bbox=None, package=None, screens=()):
    ex = [Exemplar("A", np.zeros(feature_length(DEFAULT_PATCH)))]
    bb = bbox or (int(w * .05), int(h * .3), int(w * .95), int(h * .3) + int(w * .9))
    return GameProfile.from_bbox("match3", 8, 8, bb, w, h, ex, package=package, screens=tuple(screens))


def inside(point, box):
    return point is not None and box[0] <= point[0] < box[2] and box[1] <= point[1] < box[3]


@pytest.fixture(scope="module")
def ocr():
    return TesseractOcr()


def verdict(img, ocr, **kw):
    h, w = img.shape[:2]
    return classify_screen(img, profile(w, h, kw.pop("bbox", None)), board_readable=kw.pop("readable", False),
                           foreground=None, ocr=ocr)


OFFERS = [
    dict(),
    dict(w=720, h=1600, bg=(200, 200, 200), panel=(40, 40, 120), buy=(0, 200, 255)),
    dict(w=1440, h=3200, bg=(30, 90, 30), panel=(200, 240, 255), buy=(200, 60, 160)),
]


@needs_tesseract
@pytest.mark.parametrize("kw", OFFERS)
def test_an_offer_is_closed_by_its_x_and_the_price_is_refused(ocr, kw):
    img, boxes = offer(**kw)
    v = verdict(img, ocr)
    assert v.kind in ("covered", "card")
    assert v.action is not None and v.action.kind == "tap"
    assert inside(v.action.point, boxes["close"]), (v.action, boxes)
    assert not inside(v.action.point, boxes["buy"])
    assert any("4.99" in r or "buy" in r.lower() for r in v.refused), v.refused


@needs_tesseract
@pytest.mark.parametrize("kw", [dict(), dict(w=720, h=1280), dict(w=1080, h=1920, bg=(30, 30, 30), panel=(240, 240, 240))])
def test_level_complete_taps_next_never_share(ocr, kw):
    img, boxes = card_complete(**kw)
    v = verdict(img, ocr)
    assert v.action is not None and v.action.kind == "tap"
    assert inside(v.action.point, boxes["next"]), (v.action, boxes)
    assert any("share" in r.lower() for r in v.refused)


@needs_tesseract
@pytest.mark.parametrize("kw", [dict(), dict(w=1440, h=3200, bg=(200, 150, 90), panel=(90, 30, 30)), dict(w=720, h=1600)])
def test_out_of_moves_retries_and_refuses_the_paid_moves(ocr, kw):
    img, boxes = out_of_moves(**kw)
    v = verdict(img, ocr)
    assert v.action is not None and v.action.kind == "tap"
    assert inside(v.action.point, boxes["retry"]), (v.action, boxes)
    assert any("0.99" in r for r in v.refused), v.refused


@needs_tesseract
@pytest.mark.parametrize("size", [(1080, 2400), (800, 1280)])
def test_a_tip_over_the_board_is_dismissed_with_ok(ocr, size):
    img, boxes = board_tip(*size)
    v = verdict(img, ocr, bbox=boxes["board"], readable=True)
    assert v.kind == "covered"
    assert v.action is not None and inside(v.action.point, boxes["ok"]), (v.action, boxes)


@needs_tesseract
def test_without_a_safe_button_it_tries_back(ocr):
    img, boxes = out_of_moves()
    x0, y0, x1, y1 = boxes["retry"]
    img[y0 - 4 : y1 + 4, x0 - 4 : x1 + 4] = (250, 250, 250)  # no Retry: only the paid button
    v = verdict(img, ocr)
    assert v.action is not None and v.action.kind == "back" and "no safe button" in v.action.why
    assert any("0.99" in r for r in v.refused)


@needs_tesseract
def test_a_blank_screen_is_unknown_and_not_acted_on(ocr):
    img = np.full((2400, 1080, 3), (90, 60, 30), np.uint8)
    v = verdict(img, ocr)
    assert v.kind == "unknown" and v.action is None and v.reason


def test_a_readable_board_with_nothing_over_it_is_the_board():
    _, boxes = board_tip()
    board = np.zeros((2400, 1080, 3), np.uint8)
    board[:] = (70, 50, 30)
    x0, y0, x1, y1 = boxes["board"]
    cell = (x1 - x0) // 8
    rng = np.random.default_rng(1)
    for r in range(8):
        for c in range(8):
            colour = tuple(int(v) for v in rng.integers(40, 230, 3))
            cv2.circle(board, (x0 + c * cell + cell // 2, y0 + r * cell + cell // 2), int(cell * .38), colour, -1)
    v = classify_screen(board, profile(1080, 2400, boxes["board"]), board_readable=True, foreground=None, ocr=None)
    assert v.kind == "board" and v.action is None


@needs_tesseract
def test_a_safe_button_with_a_price_under_it_is_refused(ocr):
    img = np.full((2400, 1080, 3), (40, 40, 40), np.uint8)
    rrect(img, (108, 700, 972, 1700), (245, 245, 245), 40)
    text_centre(img, "Keep going?", (108, 760, 972, 880), (30, 30, 30))
    cont = (300, 1100, 780, 1240)
    button(img, cont, (40, 170, 60), "Continue")
    text_centre(img, "$1.99", (300, 1250, 780, 1330), (30, 30, 30))
    later = (380, 1450, 700, 1560)
    button(img, later, (150, 150, 150), "No thanks")
    v = verdict(img, ocr)
    assert v.action is not None and inside(v.action.point, later), v
    assert any("continue" in r.lower() for r in v.refused), v.refused


def test_another_app_in_front_is_launched_back():
    img, _ = offer()
    p = profile(1080, 2400, package="com.example.match")
    v = classify_screen(img, p, board_readable=False, foreground="com.android.chrome", ocr=None)
    assert v.kind == "other_app" and v.action is not None
    assert v.action.kind == "launch" and v.action.label == "com.example.match" and v.action.point is None
    same = classify_screen(img, p, board_readable=False, foreground="com.example.match", ocr=None)
    assert same.kind != "other_app"
    # without a package in the profile the screen itself is judged
    assert classify_screen(img, profile(1080, 2400), board_readable=False, foreground="x.y", ocr=None).kind != "other_app"


def test_without_ocr_a_dialog_is_unknown_and_says_how_to_get_ocr():
    img, _ = out_of_moves()
    v = verdict(img, None)
    assert v.kind == "unknown" and v.action is None


def test_a_taught_screen_matches_a_noisy_copy_but_not_another_screen():
    img, _ = out_of_moves()
    taught = TaughtScreen("oom", screen_hash(img), (1080, 2400), "tap", (540, 1460))
    rng = np.random.default_rng(3)
    noisy = np.clip(img.astype(np.int16) + rng.integers(-12, 13, img.shape), 0, 255).astype(np.uint8)
    assert match_taught(noisy, (taught,)) == taught
    other, _ = card_complete()
    assert match_taught(other, (taught,)) is None
    # the same screen on a phone of another size with the same aspect ratio
    small = cv2.resize(img, (720, 1600), interpolation=cv2.INTER_AREA)
    assert match_taught(small, (taught,)) == taught
    v = classify_screen(small, profile(720, 1600, screens=[taught]), board_readable=False, foreground=None, ocr=None)
    assert v.taught == "oom" and v.action is not None and v.action.point == (360, 973)
    back = TaughtScreen("oom", screen_hash(img), (1080, 2400), "back")
    v = classify_screen(noisy, profile(1080, 2400, screens=[back]), board_readable=False, foreground=None, ocr=None)
    assert v.action is not None and v.action.kind == "back" and v.taught == "oom"


def test_a_taught_dialog_is_known_again_over_another_board():
    """What is hashed is the dialog: the board under it changes from one time to the next."""
    img, boxes = board_tip(seed=0)
    taught = teach_screen(img, "tip", (540, 1237))
    assert taught.box is not None and taught.action == "tap"
    x0, y0, x1, y1 = taught.box
    assert x0 * 1080 >= boxes["board"][0] and x1 * 1080 <= boxes["board"][2]  # the dialog, not the screen
    for seed in range(1, 5):
        assert match_taught(board_tip(seed=seed)[0], (taught,)) == taught
    for other in (offer()[0], out_of_moves()[0], card_complete()[0]):
        assert match_taught(other, (taught,)) is None
    back = teach_screen(out_of_moves()[0], "oom", None)
    assert back.action == "back" and back.tap is None and back.box is not None
    assert match_taught(out_of_moves(720, 1600)[0], (back,)) == back
    assert match_taught(offer()[0], (back,)) is None
    blank = np.full((1600, 720, 3), 90, np.uint8)
    assert teach_screen(blank, "plain", (10, 10)).box is None  # no panel: the whole screen


def test_hash_distance():
    a = screen_hash(offer()[0])
    assert hash_distance(a, a) == 0
    assert hash_distance(a, screen_hash(card_complete()[0])) > 20
    with pytest.raises(ValueError):
        hash_distance(a, a[:-2])


@pytest.mark.parametrize("text", ["Buy", "$4.99", "4,99 €", "¥120", "+5 Moves $0.99", "Share", "Install now",
                                  "Watch ad", "Start free trial", "120 USD", "Download"])
def test_forbidden_buttons(text):
    assert forbidden(text)
    assert not forbidden("Next") and not forbidden("Level 3 complete")


def test_safe_ranks():
    assert safe_rank("X") == 0 and safe_rank("Close") == 0
    assert safe_rank("Next") == safe_rank("Continue") == safe_rank("Tap to continue") == safe_rank("OK!") == 1
    assert safe_rank("No thanks") == 1
    assert safe_rank("Retry") == 2
    assert safe_rank("Play on for 900 coins") is None  # safe words with others: not a plain dismissal
    assert safe_rank("Level 3 complete") is None and safe_rank("") is None


def test_the_close_glyph():
    img = np.full((120, 120, 3), 255, np.uint8)
    close_x(img, (60, 60), 50)
    crop = np.where(np.linalg.norm(img.astype(float) - (60, 60, 200), axis=2) > 40, 0, 255).astype(np.uint8)
    # inside the circle only: the ink is the white cross
    mask = np.zeros((120, 120), np.uint8)
    cv2.circle(mask, (60, 60), 44, 1, -1)
    crop = np.where(mask > 0, crop, 255).astype(np.uint8)
    assert is_cross(crop)
    plus = np.full((100, 100), 255, np.uint8)
    cv2.line(plus, (50, 15), (50, 85), 0, 10)
    cv2.line(plus, (15, 50), (85, 50), 0, 10)
    assert not is_cross(plus)
    disc = np.full((100, 100), 255, np.uint8)
    cv2.circle(disc, (50, 50), 35, 0, -1)
    assert not is_cross(disc)


# -- the header -------------------------------------------------------------------------------


@needs_tesseract
@pytest.mark.parametrize("kw", [dict(), dict(w=720, h=1600, bg=(240, 200, 90), ink=(40, 20, 20), moves="7", score="98310"),
                                dict(w=1440, h=3200, below=True, moves="12", score="450"),
                                dict(moves="0", score="75"), dict(w=1080, h=1920, bg=(30, 30, 30), moves="3", score="0")])
def test_header_numbers_are_found_and_read(ocr, kw):
    from agent.vision.header import find_header, header_reader

    img = header(**kw)
    hud = find_header(img, ocr)
    # (and the score's line when it stands beside its label: see header.LINE)
    assert set(hud) - {"score_line"} == {"moves", "score"}, hud
    h, w = img.shape[:2]
    p = GameProfile.from_bbox("match3", 8, 8, (0, 0, w, w), w, h,
                              [Exemplar("A", np.zeros(feature_length(DEFAULT_PATCH)))], hud=hud)  # fmt: skip
    read = header_reader(p, ocr)
    assert read is not None
    assert read(img) == (int(kw.get("moves", "25")), int(kw.get("score", "1280")))


def test_no_header_reader_without_regions():
    from agent.vision.header import header_reader

    assert header_reader(profile(1080, 2400), TesseractOcr()) is None


# -- agent screens ----------------------------------------------------------------------------


def agent(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "agent.cli", *args], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ), cwd=cwd)  # fmt: skip


def _device_file(tmp_path, model="Pixel 7", w=1080, h=2400):
    dev = DeviceProfile(model, w, h, None, {"match3": profile(w, h)})
    return save_profile(dev, tmp_path)


def test_cli_add_list_check(tmp_path):
    path = _device_file(tmp_path)
    img, boxes = out_of_moves()
    shot = tmp_path / "oom.png"
    cv2.imwrite(str(shot), img)
    r = agent("screens", "add", "--image", str(shot), "--tap", "540,1460", "--name", "out of moves",
              "--profiles", str(tmp_path))  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = load_profile(path).games["match3"].screens
    assert [(s.name, s.action, s.tap, s.size) for s in got] == [("out of moves", "tap", (540, 1460), (1080, 2400))]
    r = agent("screens", "list", "--profiles", str(tmp_path))
    assert r.returncode == 0 and "out of moves" in r.stdout and "540,1460" in r.stdout
    r = agent("screens", "check", "--image", str(shot), "--profiles", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "taught: out of moves" in r.stdout and "tap at 540,1460" in r.stdout
    # the same card on a phone of the same shape, another size: the profile is scaled
    small = tmp_path / "small.png"
    cv2.imwrite(str(small), cv2.resize(img, (720, 1600), interpolation=cv2.INTER_AREA))
    r = agent("screens", "check", "--image", str(small), "--profiles", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr
    import json

    got_json = json.loads(r.stdout)
    assert got_json["taught"] == "out of moves" and got_json["action"]["point"] == [360, 973]
    # teaching the name again replaces it
    r = agent("screens", "add", "--image", str(shot), "--back", "--name", "out of moves", "--profiles", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert [(s.name, s.action) for s in load_profile(path).games["match3"].screens] == [("out of moves", "back")]


def test_cli_errors(tmp_path):
    _device_file(tmp_path)
    img, _ = out_of_moves()
    shot = tmp_path / "oom.png"
    cv2.imwrite(str(shot), img)
    base = ("screens", "add", "--image", str(shot), "--name", "n", "--profiles", str(tmp_path))
    for extra, code, words in [
        (("--tap", "5000,10"), 2, "outside"),
        (("--tap", "a,b"), 2, "X,Y"),
        ((), 2, "--tap X,Y or --back"),
        (("--tap", "1,1", "--back"), 2, "--tap X,Y or --back"),
        (("--tap", "1,1", "--model", "Galaxy S9"), 1, "Pixel 7"),
    ]:
        r = agent(*base, *extra)
        assert r.returncode == code, (extra, r.stderr)
        assert words in r.stderr and "Traceback" not in r.stderr, (extra, r.stderr)
    _device_file(tmp_path, model="Galaxy S23")
    r = agent(*base, "--tap", "1,1")
    assert r.returncode == 1 and "several" in r.stderr and "--model" in r.stderr and "Traceback" not in r.stderr
    r = agent(*base, "--tap", "1,1", "--model", "Galaxy S23")
    assert r.returncode == 0, r.stderr
    small = tmp_path / "small.png"
    cv2.imwrite(str(small), cv2.resize(img, (100, 200)))
    r = agent("screens", "add", "--image", str(small), "--tap", "1,1", "--name", "n", "--profiles", str(tmp_path))
    assert r.returncode == 1 and "100x200" in r.stderr and "Traceback" not in r.stderr
    r = agent("screens", "add", "--image", str(tmp_path / "missing.png"), "--tap", "1,1", "--name", "n",
              "--profiles", str(tmp_path))  # fmt: skip
    assert r.returncode != 0 and "missing.png" in r.stderr and "Traceback" not in r.stderr


class NoWords:
    """An OCR that reads nothing: the close X must be found by its glyph alone."""

    def words(self, image):
        return []

    def number(self, image):
        return None


@pytest.mark.parametrize("kw", OFFERS)
def test_the_close_x_is_found_by_its_glyph_without_text(kw):
    img, boxes = offer(**kw)
    v = verdict(img, NoWords())
    assert v.action is not None and v.action.kind == "tap" and inside(v.action.point, boxes["close"]), v


@needs_tesseract
def test_lookalike_dialogs_are_dismissed_by_their_button_or_back(ocr):
    """The look-alike popups (a title, a line of text, one button) over boards of every
    kind: the agent taps inside the button or presses Back, never anywhere else."""
    from agent.games.match3.lookalike.cases import make_case

    hits = 0
    cases = [("dialog", s) for s in range(6)] + [("dim", s) for s in range(6)]
    for family, seed in cases:
        c = make_case(family, seed)
        t = c.truth
        w, h = t.screen
        x0, y0, x1, y1 = c.scene.dialog
        dw, dh = x1 - x0, y1 - y0
        button = (x0 + dw // 4, y0 + int(dh * 0.62), x1 - dw // 4, y0 + int(dh * 0.86))  # as backdrop.popup draws it
        p = GameProfile.from_bbox("match3", t.rows, t.cols, t.bbox, w, h,
                                  [Exemplar("A", np.zeros(feature_length(DEFAULT_PATCH)))])  # fmt: skip
        v = classify_screen(c.frame, p, board_readable=False, foreground=None, ocr=ocr)
        assert v.kind == "covered", (family, seed, v.reason)
        assert v.action is not None and v.action.kind in ("tap", "back"), (family, seed, v)
        if v.action.kind == "tap":
            assert inside(v.action.point, button), (family, seed, v.action, button)
            hits += 1
    assert hits >= len(cases) - 2, hits


@needs_tesseract
@pytest.mark.parametrize("seed, expected", [(1, (6, None)), (5, (None, 6732)), (7, (None, 26)), (8, (13, None))])
def test_header_on_lookalike_hud_badges(ocr, seed, expected):
    """The look-alike HUD: a word over a number on a translucent badge, over a textured
    background (values read off the rendered screens by eye)."""
    from agent.games.match3.lookalike.cases import make_case
    from agent.vision.header import find_header, header_reader

    c = make_case("clean", seed)
    t = c.truth
    w, h = t.screen
    hud = find_header(c.frame, ocr)
    p = GameProfile.from_bbox("match3", t.rows, t.cols, t.bbox, w, h,
                              [Exemplar("A", np.zeros(feature_length(DEFAULT_PATCH)))], hud=hud)  # fmt: skip
    read = header_reader(p, ocr)
    assert read is not None and read(c.frame) == expected
