"""The game's own header: moves left and score, read with OCR.

`header_reader` reads the regions a profile names (`hud["moves"]`, `hud["score"]`, as
screen fractions); `find_header` finds them on a frame for `agent calibrate` to store:
the words MOVES / MOVES LEFT / STEPS / SCORE and the number beside or below each. A
number that cannot be read is None (unknown), never a guess.
"""

from __future__ import annotations

import re
from typing import Callable

import numpy as np

from agent.vision.grid import Frac, bbox_to_frac
from agent.vision.ocr import Ocr, Region, Word, flat_regions
from agent.vision.profile import GameProfile

LABELS = {"moves": ("moves", "move", "steps", "moves left"), "score": ("score", "points")}
# How far from its label a number may sit: label heights right of it, or below it.
BESIDE = 8.0
BELOW = 3.0
BADGE_AREA = 0.05  # of the screen: a shape this small around a number is its badge

HeaderRead = Callable[[np.ndarray], tuple[int | None, int | None]]


def header_reader(profile: GameProfile, ocr: Ocr) -> HeaderRead | None:
    """A function reading (moves_left, score) from a full-screen frame, or None when the
    profile names neither region."""
    names = [n for n in ("moves", "score") if n in profile.hud]
    if not names:
        return None

    def read(frame: np.ndarray) -> tuple[int | None, int | None]:
        h, w = frame.shape[:2]
        out: dict[str, int | None] = {"moves": None, "score": None}
        for n in names:
            x0, y0, x1, y1 = profile.hud_bbox(n, w, h)
            crop = frame[y0:y1, x0:x1]
            out[n] = ocr.number(crop) if crop.size else None
        return out["moves"], out["score"]

    return read


def _number_word(text: str) -> bool:
    return re.fullmatch(r"[0-9][0-9,.' ]*", text.strip()) is not None and any(c.isdigit() for c in text)


def find_header(frame: np.ndarray, ocr: Ocr) -> dict[str, Frac]:
    """Where the moves-left and score numbers are, as screen fractions (a key is missing
    when its label or number is not found)."""
    h, w = frame.shape[:2]
    words = ocr.words(frame)
    regions = flat_regions(frame)
    numbers = [wd for wd in words if _number_word(wd.text)]
    out: dict[str, Frac] = {}
    for name, labels in LABELS.items():
        found = [wd for wd in words if re.sub(r"[^a-z]", "", wd.text.lower()) in labels]
        best: tuple[float, Word, Word, bool] | None = None
        for label in found:
            lh = max(1, label.box[3] - label.box[1])
            lcx = (label.box[0] + label.box[2]) / 2
            for num in numbers:
                ncx, ncy = num.centre
                # (a label's box may run into the number's: one reading merged them)
                lw = label.box[2] - label.box[0]
                beside = lcx + 0.3 * lw < ncx <= label.box[2] + BESIDE * lh and abs(
                    ncy - (label.box[1] + label.box[3]) / 2
                ) < lh
                below = 0 <= num.box[1] - label.box[3] <= BELOW * lh and abs(ncx - lcx) < max(
                    lh * 2, (label.box[2] - label.box[0])
                )
                if not (beside or below):
                    continue
                d = float(np.hypot(ncx - lcx, ncy - (label.box[1] + label.box[3]) / 2))
                if best is None or d < best[0]:
                    best = (d, num, label, beside)
        if best is not None:
            x0, y0, x1, y1 = best[1].box
            # room for the number to grow by digits, within the badge it is on (if any)
            mx, my = (y1 - y0) * 1.5, (y1 - y0) * 0.3
            lo_x, lo_y, hi_x, hi_y = 0, 0, w, h
            ncx, ncy = best[1].centre
            holders = [r for r in regions if r.contains(ncx, ncy) and r.area < BADGE_AREA * w * h]
            if holders:
                lo_x, lo_y, hi_x, hi_y = min(holders, key=lambda r: r.area).box
            # and never over the label: its letters would be read as digits
            label, beside = best[2], best[3]
            gap = max(1, (label.box[3] - label.box[1]) // 4)
            # (cut letters at the crop's edge are dropped by the reader; the number is never cut)
            if beside:
                lo_x = max(lo_x, min(x0 - 1, label.box[2] + gap))
            else:
                lo_y = max(lo_y, min(y0 - 1, label.box[3] + gap))
            box = (max(lo_x, int(x0 - mx)), max(lo_y, int(y0 - my)), min(hi_x, int(x1 + mx)), min(hi_y, int(y1 + my)))
            out[name] = bbox_to_frac(box, w, h)
        else:
            # the number was not read as a word (a 0 read as "O"): the place beside or
            # below the label that reads as a number
            for label in found:
                near = _read_near(frame, ocr, label, regions, words)
                if near is not None:
                    out[name] = bbox_to_frac(near, w, h)
                    break
    return out


def _read_near(
    frame: np.ndarray, ocr: Ocr, label: Word, regions: list[Region], words: list[Word]
) -> tuple[int, int, int, int] | None:
    """The box beside (then below) the label, within its badge, that reads as a number."""
    h, w = frame.shape[:2]
    x0, y0, x1, y1 = label.box
    lh = max(1, y1 - y0)
    gap = max(1, lh // 4)
    lo_x, lo_y, hi_x, hi_y = 0, 0, w, h
    holders = [r for r in regions if r.contains(*label.centre) and r.area < BADGE_AREA * w * h]
    if holders:
        lo_x, lo_y, hi_x, hi_y = min(holders, key=lambda r: r.area).box
    # up to the next word on the label's line
    right = min([wd.box[0] - gap for wd in words if wd.box[0] > x1 and abs(wd.centre[1] - label.centre[1]) < lh]
                + [int(x1 + BESIDE * lh)])  # fmt: skip
    for box in (
        (x1 + gap, y0 - lh // 3, min(hi_x, right), y1 + lh // 3),
        (x0 - lh, y1 + gap, x1 + lh, min(hi_y, int(y1 + 1.8 * lh))),
    ):
        bx0, by0 = max(lo_x, box[0]), max(lo_y, box[1])
        bx1, by1 = min(hi_x, w, box[2]), min(hi_y, h, box[3])
        if bx1 - bx0 >= lh // 2 and by1 - by0 >= lh // 2 and ocr.number(frame[by0:by1, bx0:bx1]) is not None:
            return (bx0, by0, bx1, by1)
    return None
