"""The OCR wrapper with the real Tesseract: words on coloured buttons, numbers, the
cache, and a clear reason when Tesseract is missing."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from agent.vision import ocr as ocr_mod
from agent.vision.ocr import TesseractOcr, Word, default_ocr, flat_regions, ocr_unavailable_reason

needs_tesseract = pytest.mark.skipif(ocr_unavailable_reason() is not None, reason=str(ocr_unavailable_reason()))


def button_screen(w, h, face, ink, text):
    img = np.full((h, w, 3), (60, 40, 30), np.uint8)
    box = (int(w * .25), int(h * .45), int(w * .75), int(h * .52))
    cv2.rectangle(img, box[:2], box[2:], face, -1)
    fs = (box[3] - box[1]) / 60
    (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_DUPLEX, fs, max(1, int(fs * 2)))
    cv2.putText(img, text, ((box[0] + box[2] - tw) // 2, (box[1] + box[3] + th) // 2), cv2.FONT_HERSHEY_DUPLEX, fs,
                ink, max(1, int(fs * 2)), cv2.LINE_AA)  # fmt: skip
    return img, box


@needs_tesseract
@pytest.mark.parametrize("w, h, face, ink, text", [
    (1080, 2400, (40, 180, 60), (255, 255, 255), "Continue"),
    (720, 1600, (0, 220, 255), (255, 255, 255), "Next"),  # white on yellow: one grey
    (1440, 3200, (250, 250, 250), (30, 30, 200), "Retry"),
])  # fmt: skip
def test_words_on_coloured_buttons(w, h, face, ink, text):
    img, box = button_screen(w, h, face, ink, text)
    words = TesseractOcr().words(img)
    hit = [wd for wd in words if wd.text.strip(".,!|") == text]
    assert hit, words
    cx, cy = hit[0].centre
    assert box[0] <= cx < box[2] and box[1] <= cy < box[3]
    assert 0 < hit[0].conf <= 1


@needs_tesseract
@pytest.mark.parametrize("digits, bg, fg, height", [
    ("12", (200, 50, 50), (255, 255, 255), 40), ("3400", (30, 30, 30), (0, 220, 255), 24),
    ("987654", (240, 240, 240), (20, 20, 20), 80), ("1280", (90, 20, 120), (255, 255, 255), 18),
])  # fmt: skip
def test_numbers(digits, bg, fg, height):
    img = np.zeros((height, height * len(digits), 3), np.uint8)
    img[:] = bg
    cv2.putText(img, digits, (height // 5, int(height * .8)), cv2.FONT_HERSHEY_SIMPLEX, height / 40, fg,
                max(1, height // 15), cv2.LINE_AA)  # fmt: skip
    assert TesseractOcr().number(img) == int(digits)


@needs_tesseract
def test_no_number_on_a_blank_crop():
    assert TesseractOcr().number(np.full((40, 120, 3), 128, np.uint8)) is None
    assert TesseractOcr().number(np.zeros((2, 2, 3), np.uint8)) is None


@needs_tesseract
def test_results_are_cached(monkeypatch):
    o = TesseractOcr()
    img, _ = button_screen(720, 1600, (40, 180, 60), (255, 255, 255), "OK")
    first = o.words(img)
    calls = []
    monkeypatch.setattr(o, "_data", lambda *a, **k: calls.append(1) or {})
    assert o.words(img) == first and not calls
    o.words(img[:-2])  # another image is read again
    assert calls


def test_missing_tesseract_is_a_reason_not_a_crash(monkeypatch):
    monkeypatch.setattr(ocr_mod.shutil, "which", lambda name: None)
    assert ocr_unavailable_reason() == "OCR unavailable: install tesseract-ocr (apt-get install tesseract-ocr)"
    assert default_ocr() is None


def test_flat_regions_scale_with_the_screen():
    small, _ = button_screen(720, 1600, (40, 180, 60), (255, 255, 255), "OK")
    big = cv2.resize(small, (1440, 3200), interpolation=cv2.INTER_NEAREST)
    a = [r.box for r in flat_regions(small) if r.area < 0.5 * 720 * 1600]
    b = [r.box for r in flat_regions(big) if r.area < 0.5 * 1440 * 3200]
    assert a and len(a) == len(b)
    for p, q in zip(a, b):
        assert all(abs(2 * u - v) <= 6 for u, v in zip(p, q))


@needs_tesseract
def test_a_failing_tesseract_reads_nothing_and_is_not_cached(monkeypatch):
    import pytesseract

    o = TesseractOcr()
    img, _ = button_screen(720, 1600, (40, 180, 60), (255, 255, 255), "OK")

    def boom(*a, **k):
        raise RuntimeError("Tesseract process timeout")

    monkeypatch.setattr(pytesseract, "image_to_data", boom)
    assert o.words(img) == [] and o.number(img) is None and o.failures >= 2
    monkeypatch.undo()
    assert any(w.text == "OK" for w in o.words(img))


@needs_tesseract
def test_a_reading_that_timed_out_on_a_busy_machine_is_given_longer_once(monkeypatch):
    import pytesseract

    o = TesseractOcr(timeout_s=2.0)
    img, _ = button_screen(720, 1600, (40, 180, 60), (255, 255, 255), "OK")
    real = pytesseract.image_to_data
    given: list[float] = []

    def slow_once(*a, **k):
        given.append(k["timeout"])
        if k["timeout"] <= 2.0:
            raise RuntimeError("Tesseract process timeout")
        return real(*a, **k)

    monkeypatch.setattr(pytesseract, "image_to_data", slow_once)
    assert any(w.text == "OK" for w in o.words(img))
    assert o.failures == 0 and o.slow >= 1 and max(given) > 2.0
    # a Tesseract that fails otherwise is not run again
    given.clear()

    def broken(*a, **k):
        given.append(k["timeout"])
        raise RuntimeError("Tesseract failed: bad language")

    monkeypatch.setattr(pytesseract, "image_to_data", broken)
    other, _ = button_screen(720, 1600, (180, 40, 60), (255, 255, 255), "Next")
    assert o.words(other) == [] and o.failures >= 1 and all(t == 2.0 for t in given)


@needs_tesseract
@pytest.mark.parametrize("digits", ["0", "1080", "808"])
def test_slashed_zeros_are_read_as_zeros_and_eights_stay_eights(digits):
    """Digital-style fonts slash their zeros; Tesseract alone reads this lone 0 as a 4."""
    h, ink, thick = 60, (255, 255, 255), 5
    img = np.zeros((h, h * len(digits), 3), np.uint8)
    x = h // 5
    for ch in digits:
        (tw, th), _ = cv2.getTextSize("8", cv2.FONT_HERSHEY_SIMPLEX, h / 40, thick)
        if ch == "0":  # drawn, not put: fonts differ in their zeros
            cx, cy = x + tw // 2, int(h * .8) - th // 2
            cv2.ellipse(img, (cx, cy), (int(tw * .45), th // 2), 0, 0, 360, ink, thick, cv2.LINE_AA)
            cv2.line(img, (cx - tw // 6, cy + th // 4), (cx + tw // 6, cy - th // 4), ink, 6, cv2.LINE_AA)
        else:
            cv2.putText(img, ch, (x, int(h * .8)), cv2.FONT_HERSHEY_SIMPLEX, h / 40, ink, thick, cv2.LINE_AA)
        x += tw + h // 8
    assert TesseractOcr().number(img) == int(digits)


def test_a_label_glued_to_its_number_is_cut_in_two():
    from agent.vision.header import _unglued

    out = _unglued([Word("LEVEL7", (0, 0, 60, 10), 0.9), Word("Moves:25", (100, 0, 180, 10), 0.8), Word("Play", (0, 20, 40, 30), 0.9)])
    assert [(w.text, w.box) for w in out] == [("LEVEL", (0, 0, 50, 10)), ("7", (50, 0, 60, 10)), ("Moves:", (100, 0, 160, 10)),
                                              ("25", (160, 0, 180, 10)), ("Play", (0, 20, 40, 30))]  # fmt: skip


def test_a_one_glued_to_its_label_and_read_as_a_letter_is_a_one():
    """A bold "1" on a badge, glued to its label, reads as a letter of one stroke
    ("Stagei"); a label that itself ends in such a letter ("Lvl") stays whole."""
    from agent.vision.header import _unglued

    out = _unglued([Word("Stagei", (0, 0, 60, 10), 0.5), Word("Levelll", (0, 20, 70, 30), 0.5),
                    Word("Lvl", (0, 40, 30, 50), 0.9), Word("Tail", (0, 60, 40, 70), 0.9)])  # fmt: skip
    assert [(w.text, w.box) for w in out] == [("Stage", (0, 0, 50, 10)), ("1", (50, 0, 60, 10)),
                                              ("Level", (0, 20, 50, 30)), ("11", (50, 20, 70, 30)),
                                              ("Lvl", (0, 40, 30, 50)), ("Tail", (0, 60, 40, 70))]  # fmt: skip


def test_rules_around_text_are_no_characters():
    """A badge's outline (two long vertical strokes) and its shadow (a wide thin curve)
    around a few characters: the rules go, the characters stay, and the text's height is
    the characters' (before: the rules set it, and were read as letters)."""
    binary = np.full((140, 320), 255, np.uint8)
    for x in (20, 100):
        binary[25:95, x] = 0  # the outline's sides, more than twice the text's height
    cv2.ellipse(binary, (150, 70), (115, 40), 0, 0, 180, 0, 1)  # the shadow's curve
    cv2.putText(binary, "0/14", (120, 70), cv2.FONT_HERSHEY_DUPLEX, 1.0, 0, 3)
    out = ocr_mod.text_ink(binary)
    assert out is not None
    kept, th = out
    assert (kept[25:95, 20] == 255).all() and (kept[25:95, 100] == 255).all()  # the outline gone
    assert (kept[105:112, :] == 255).all()  # the shadow's curve gone (under the text)
    text = (slice(40, 75), slice(115, 240))
    assert (kept[text] == 0).sum() >= 0.98 * (binary[text] == 0).sum()  # the characters kept (not a speck or two)
    assert 18 <= th <= 26, th  # the characters' height (20), not the rules' (40 to 70)


@needs_tesseract
def test_a_count_on_a_badge_with_its_outline_and_shadow_is_read():
    """A goal's count "0/14" in a bold font with a slashed 0, on a badge with a dark
    outline and shadow, beside the goal's icon (a saga family phone's header, kept as it
    was). Before, the outline's pieces were kept as characters and it read "essa"."""
    from pathlib import Path

    img = cv2.imread(str(Path(__file__).parents[1] / "data" / "frames" / "goal_count_on_a_badge_with_its_outline_and_shadow.png"))
    assert img is not None
    assert "0/14" in [wd.text for wd in TesseractOcr().words(img)]
