"""The game's own header: moves left, score, the level's number and its goal, read with OCR.

`header_reader` reads the regions a profile names (`hud["moves"]`, `hud["score"]`, as
screen fractions); `find_header` finds them on a frame for `agent calibrate` to store:
the words MOVES / MOVES LEFT / STEPS / SCORE / LEVEL and the number beside or below
each, and the goal's place (`hud["goal"]`: a target word and its number, or a count
beside a piece's icon, `hud["goal_icon"]`). `header_reading` reads all of them into a
`HeaderReading`. A number that cannot be read is None (unknown), never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable

import cv2
import numpy as np

from agent.vision.goal import Goal
from agent.vision.goal_read import (
    PIECE_FILLS, GoalWords, Line, find_icon, goal_with_icon, icon_boxes, lines_of, match_icon, words_goal,
)  # fmt: skip
from agent.vision.grid import Frac, bbox_to_frac
from agent.vision.ocr import Ocr, Region, Word, flat_regions, ink_height
from agent.vision.profile import GameProfile

LABELS = {"moves": ("moves", "move", "steps", "moves left"), "score": ("score", "points"),
          "level": ("level", "lv", "lvl", "stage")}  # fmt: skip
TARGET_LABELS = ("target", "goal")  # a score goal's word, beside or above its number
ALL_LABELS = frozenset(lb for group in LABELS.values() for lb in group) | frozenset(TARGET_LABELS)
# How far from its label a number may sit: label heights right of it, or below it.
BESIDE = 8.0
BELOW = 3.0
BADGE_AREA = 0.05  # of the screen: a shape this small around a number is its badge
# A score beside its label ("Points 12480") grows by digits from 0, and a game centres
# the two in their badge (or shrinks the text to fit): the number's first place, found
# while it was "0", then cuts it ("Points 3790" read as 70). Its line, label and number in
# their badge, is stored as `score` + LINE and read by its words. (Moves and the level's
# number keep a digit or two, which the place's room holds, and are read by digits alone,
# a Tesseract run where the line takes two.)
LINE = "_line"
GROWING = ("score",)

HeaderRead = Callable[[np.ndarray], tuple[int | None, int | None]]


def header_reader(profile: GameProfile, ocr: Ocr) -> HeaderRead | None:
    """A function reading (moves_left, score) from a full-screen frame, or None when the
    profile names neither region."""
    names = [n for n in ("moves", "score") if n in profile.hud]
    if not names:
        return None

    def read(frame: np.ndarray) -> tuple[int | None, int | None]:
        out: dict[str, int | None] = {"moves": None, "score": None}
        for n in names:
            out[n] = _read_number(frame, profile, n, ocr)
        return out["moves"], out["score"]

    return read


@dataclass(frozen=True)
class HeaderReading:
    """What the header shows on one frame; None: not shown, or not read."""

    moves: int | None
    score: int | None
    level: int | None
    goal: Goal | None  # the goal as the header shows it: a score target, or what is left of a count


def header_reading(profile: GameProfile, ocr: Ocr) -> Callable[[np.ndarray], HeaderReading] | None:
    """A function reading the whole header (moves, score, level, goal) from a full-screen
    frame, or None when the profile names none of its places. The goal's icon is matched
    to the profile's classes on every read: each level may ask for another colour."""
    names = [n for n in ("moves", "score", "level") if n in profile.hud]
    if not names and "goal" not in profile.hud:
        return None

    def read(frame: np.ndarray) -> HeaderReading:
        out: dict[str, int | None] = {"moves": None, "score": None, "level": None}
        for n in names:
            out[n] = _read_number(frame, profile, n, ocr)
        goal = read_goal_place(frame, profile, ocr) if "goal" in profile.hud else None
        return HeaderReading(out["moves"], out["score"], out["level"], goal)

    return read


def _read_number(frame: np.ndarray, profile: GameProfile, name: str, ocr: Ocr) -> int | None:
    """The header's number `name` on a frame: by its line's words where the profile has
    its line (see LINE), else by the digits in its place."""
    h, w = frame.shape[:2]
    if f"{name}{LINE}" in profile.hud:
        return read_number_on_line(frame, profile.hud_bbox(f"{name}{LINE}", w, h), LABELS[name], ocr)
    x0, y0, x1, y1 = profile.hud_bbox(name, w, h)
    crop = frame[y0:y1, x0:x1]
    return ocr.number(crop) if crop.size else None


def read_number_on_line(frame: np.ndarray, line: tuple[int, int, int, int], labels: tuple[str, ...],
                        ocr: Ocr) -> int | None:  # fmt: skip
    """The number beside its label on the line `line` (a badge holding both): the line's
    words, the number word(s) on the side of the label the number stands, then the digits
    reader on their box. None when no label or no number is read there."""
    x0, y0, x1, y1 = line
    crop = frame[y0:y1, x0:x1]
    if crop.size == 0:
        return None
    words = _unglued(ocr.words(crop))
    label = max((wd for wd in words if _label(wd.text) in labels), key=lambda wd: wd.conf, default=None)
    if label is None:
        return None
    lh = max(1, label.box[3] - label.box[1])
    after = [wd for wd in words if _number_word(wd.text) and wd.box[0] >= label.box[2] - lh // 4
             and abs(wd.centre[1] - label.centre[1]) < lh]  # fmt: skip
    before = [wd for wd in words if _number_word(wd.text) and wd.box[2] <= label.box[0] + lh // 4
              and abs(wd.centre[1] - label.centre[1]) < lh]  # fmt: skip
    gap = max(1, lh // 4)
    lx0, ly0, lx1, ly1 = label.box
    y_lo, y_hi = max(0, ly0 - lh // 3), ly1 + lh // 3
    number = after or before
    if number:  # its words' box, with the room the digits reader wants, short of the label
        bx0, by0, bx1, by1 = _union(*(wd.box for wd in number))
        pad = max(2, (by1 - by0) // 2)
        x_lo, x_hi = (max(bx0 - pad, lx1 + gap), bx1 + pad) if after else (bx0 - pad, min(bx1 + pad, lx0 - gap))
        value = ocr.number(crop[min(y_lo, max(0, by0 - pad // 2)) : max(y_hi, by1 + pad // 2), max(0, x_lo) : x_hi])
        if value is not None:
            return value
    # no number word (a slashed 0 read as a letter), or none read there: the digits
    # reader on the line's wider side of the label, from the label on
    side = crop[y_lo:y_hi, lx1 + gap :] if crop.shape[1] - lx1 >= lx0 else crop[y_lo:y_hi, : max(0, lx0 - gap)]
    return ocr.number(side) if side.size else None


def read_goal_place(frame: np.ndarray, profile: GameProfile, ocr: Ocr) -> Goal | None:
    """The goal in the header's goal place: "Target 3000" (a score goal), or a count
    ("12", "3/12") beside the goal piece's icon (collect its colour, or break blockers)."""
    h, w = frame.shape[:2]
    x0, y0, x1, y1 = profile.hud_bbox("goal", w, h)
    crop = frame[y0:y1, x0:x1]
    if crop.size == 0:
        return None
    icon_box = profile.hud_bbox("goal_icon", w, h) if "goal_icon" in profile.hud else None
    words = [Word(wd.text, (wd.box[0] + x0, wd.box[1] + y0, wd.box[2] + x0, wd.box[3] + y0), wd.conf)
             for wd in ocr.words(crop)]  # fmt: skip
    words = _legible(words, icon_box)
    # one place, one goal: its words in reading order (a label over its number too)
    lines = sorted(lines_of(words), key=lambda ln: ln.box[1])
    said = words_goal(Line(tuple(wd for ln in lines for wd in ln.words))) if words else None
    if said is None:
        said = next((g for ln in lines if (g := words_goal(ln)) is not None), None)
    if said is not None and said.left is not None and said.target is None:
        # a bare count: the digits reader reads it surer than the words reader does
        bx0, by0, bx1, by1 = said.number
        pad = max(1, (by1 - by0) // 4)
        number = ocr.number(frame[max(0, by0 - pad) : by1 + pad, max(0, bx0 - pad) : bx1 + pad])
        said = None if number is None else replace(said, left=number)
    if said is None and icon_box is not None:
        said = _count_beside(frame, (x0, y0, x1, y1), icon_box, ocr)
    if said is None:
        return None
    icon = None
    if said.kind != "score" or said.score_or_icon:
        icon = match_icon(frame, icon_box, profile) if icon_box is not None else None
        if icon is None:
            th = max(1, said.number[3] - said.number[1])
            icon = find_icon(frame, said.number, th, words, profile)
    return goal_with_icon(said, icon)


def _count_beside(frame: np.ndarray, place: tuple[int, int, int, int], icon: tuple[int, int, int, int],
                  ocr: Ocr) -> GoalWords | None:  # fmt: skip
    """The count beside the icon when the words reader saw none (a lone digit): the part
    of the place beyond the icon, read by the digits reader; a count up ("3/12") only
    where the words reader sees its stroke (the digits reader would run it together)."""
    x0, y0, x1, y1 = place
    ix0, iy0, ix1, iy1 = icon
    # right and left of it, in its rows (the badge it shares with the count); below, above
    sides = [(ix1, iy0, x1, iy1), (x0, iy0, ix0, iy1), (x0, iy1, x1, y1), (x0, y0, x1, iy0)]
    for bx0, by0, bx1, by1 in sorted(sides, key=lambda b: -_area(b)):
        if bx1 - bx0 < 4 or by1 - by0 < 4:
            continue
        region = frame[by0:by1, bx0:bx1]
        if any("/" in wd.text for wd in ocr.words(region)):
            return None
        # a lone digit reads better with room around it, as it has on its badge
        m = max(1, (by1 - by0) // 2)
        n = ocr.number(region)
        if n is None:
            n = ocr.number(cv2.copyMakeBorder(region, m, m, m, m, cv2.BORDER_REPLICATE))
        if n is not None:
            return GoalWords(None, None, n, None, False, (bx0, by0, bx1, by1), Line((Word(str(n), (bx0, by0, bx1, by1), 1.0),)))
        break  # the widest side holds the count, or none does
    return None


def _legible(words: list[Word], icon: tuple[int, int, int, int] | None) -> list[Word]:
    """The words of a goal's place without what OCR made of its picture: words over the
    icon, lone signs, and words far taller or smaller than its digits."""
    if icon is not None:
        words = [wd for wd in words if _overlap(wd.box, icon) < 0.3 * max(1, min(_area(wd.box), _area(icon)))]
    words = [wd for wd in words if len(wd.text.strip()) > 1 or wd.text.strip().isdigit()]
    digits = [wd.box[3] - wd.box[1] for wd in words if re.fullmatch(r"\d[\d,.]*(/\d+)?", wd.text.strip())]
    if digits:
        # (and specks of the screen around the badge, far smaller than its count)
        mid = float(np.median(digits))
        words = [wd for wd in words if 0.6 * mid <= wd.box[3] - wd.box[1] <= 2.0 * mid]
    return words


def _area(b: tuple[int, int, int, int]) -> int:
    return max(0, b[2] - b[0]) * max(0, b[3] - b[1])


def _overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> int:
    return max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))


def _number_word(text: str) -> bool:
    return re.fullmatch(r"[0-9][0-9,.' ]*", text.strip()) is not None and any(c.isdigit() for c in text)


def _unglued(words: list[Word]) -> list[Word]:
    """Words with a label glued to its number ("LEVEL7", "Moves:25", as Tesseract reads a
    narrow space) cut in two, each with its share of the box by characters."""
    out: list[Word] = []
    for wd in words:
        text = wd.text.strip()
        m = re.fullmatch(r"([A-Za-z][A-Za-z.:]*)([0-9][0-9,.]*)", text)
        if m is None or _label(m.group(1)) not in ALL_LABELS:
            # the label's letters, then a number whose first glyph Tesseract took for a
            # letter: a (slashed) 0 read as O, Q, @ or Ø ("PointsO", "Points@"), or the
            # gap read as an i or l ("Stagei1")
            m = re.fullmatch(r"([A-Za-z][A-Za-z.:]*?)([il|:]?)([0-9OQ@Øø][0-9OQ@Øø,.]*)", text)
            if m is None or _label(m.group(1)) not in ALL_LABELS or not (
                    any(ch.isdigit() for ch in m.group(3)) or len(m.group(3)) == 1):
                # or a number of ones, each read as a letter of a stroke ("Stagei": a bold
                # 1 on a badge, glued to its label)
                m = re.fullmatch(r"([A-Za-z][A-Za-z.:]*?)([il|I!]{1,2})", text)
                if m is None or _label(m.group(1)) not in ALL_LABELS or _label(text) in ALL_LABELS:
                    out.append(wd)
                    continue
        x0, y0, x1, y1 = wd.box
        label, number = m.group(1), m.groups()[-1]
        cut = x0 + round((x1 - x0) * len(label) / len(text))
        digits = re.sub(r"[il|I!]", "1", re.sub(r"[OQ@Øø]", "0", number))
        out += [Word(label, (x0, y0, cut, y1), wd.conf), Word(digits, (cut, y0, x1, y1), wd.conf)]
    return out


def _zero_as_letters(text: str) -> bool:
    """A word that may be a (slashed) 0 Tesseract read as letters: "O", "Q", "@", "Ø"."""
    return re.fullmatch(r"[OQ@Øøo0]+", text.strip()) is not None


def _letters(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.lower())


def _label(text: str) -> str:
    """A label's letters, with a first "L" that Tesseract read as "i", "1", "|" or "!"
    ("iv." for "Lv.", "1evel" for "Level") put back when that makes a label."""
    t = text.strip().lower()
    if t[:1] in ("i", "1", "|", "!") and "l" + _letters(t[1:]) in ALL_LABELS:
        return "l" + _letters(t[1:])
    return _letters(t)


def _nearest_number(found: list[Word], numbers: list[Word], below_too: bool = True) -> tuple[float, Word, Word, bool] | None:
    """The number nearest one of the labels `found`, beside it on its line (first) or
    below it: (distance, number, label, beside)."""
    best: tuple[tuple[bool, float], Word, Word, bool] | None = None
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
            below = below_too and 0 <= num.box[1] - label.box[3] <= BELOW * lh and abs(ncx - lcx) < max(
                lh * 2, (label.box[2] - label.box[0])
            )
            if not (beside or below):
                continue
            d = float(np.hypot(ncx - lcx, ncy - (label.box[1] + label.box[3]) / 2))
            # a number on the label's own line is its number before one under it
            key = (not beside, d)
            if best is None or key < best[0]:
                best = (key, num, label, beside)
    return None if best is None else (best[0][1], best[1], best[2], best[3])


def _badge(regions: list[Region], x: float, y: float, w: int, h: int) -> tuple[int, int, int, int] | None:
    holders = [r for r in regions if r.contains(x, y) and r.area < BADGE_AREA * w * h]
    return min(holders, key=lambda r: r.area).box if holders else None


def _number_place(best: tuple[float, Word, Word, bool], regions: list[Region], w: int, h: int) -> tuple[int, int, int, int]:
    """The box to read a label's number in: the number with room to grow by digits,
    within the badge it is on (if any), never over the label."""
    x0, y0, x1, y1 = best[1].box
    mx, my = (y1 - y0) * 1.5, (y1 - y0) * 0.3
    lo_x, lo_y, hi_x, hi_y = _badge(regions, *best[1].centre, w, h) or (0, 0, w, h)
    # and never over the label: its letters would be read as digits
    label, beside = best[2], best[3]
    gap = max(1, (label.box[3] - label.box[1]) // 4)
    # the number keeps a margin: Tesseract's word box may end inside its first digit's
    # ink, and ink at the crop's edge is dropped by the reader (as cut letters are)
    room = max(2, (y1 - y0) // 4)
    if beside:
        lo_x = max(lo_x, min(x0 - room, label.box[2] + gap))
    else:
        lo_y = max(lo_y, min(y0 - room, label.box[3] + gap))
    return (max(lo_x, int(x0 - mx)), max(lo_y, int(y0 - my)), min(hi_x, int(x1 + mx)), min(hi_y, int(y1 + my)))


def _line_place(number: tuple[int, int, int, int], label: Word, regions: list[Region], w: int,
                h: int) -> tuple[int, int, int, int]:  # fmt: skip
    """The box a label and the number beside it may take as the number grows: their
    badge, or the two with room for the number to grow both ways (a centred line)."""
    both = _union(number, label.box)
    badge = _holding_badge(both, regions, ((number[0] + number[2]) // 2, (number[1] + number[3]) // 2), w, h)
    if badge is not None:
        return badge
    lh = max(1, label.box[3] - label.box[1])
    grow = 3 * lh  # a few digits' width each way
    return (max(0, both[0] - grow), max(0, both[1] - lh // 2), min(w, both[2] + grow), min(h, both[3] + lh // 2))


def _holding_badge(box: tuple[int, int, int, int], regions: list[Region], at: tuple[int, int], w: int,
                   h: int) -> tuple[int, int, int, int] | None:  # fmt: skip
    """The badge at `at` when it holds all of `box`, else None."""
    badge = _badge(regions, at[0], at[1], w, h)
    if badge is not None and badge[0] <= box[0] and badge[1] <= box[1] and badge[2] >= box[2] and badge[3] >= box[3]:
        return badge
    return None


def _union(*boxes: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def _grown(box: tuple[int, int, int, int], regions: list[Region], at: tuple[int, int], pad: int, w: int,
           h: int) -> tuple[int, int, int, int]:  # fmt: skip
    """`box` with a margin, or the badge it lies on when that holds it all."""
    badge = _holding_badge(box, regions, at, w, h)
    if badge is not None:
        return badge
    return (max(0, box[0] - pad), max(0, box[1] - pad), min(w, box[2] + pad), min(h, box[3] + pad))


def find_header(frame: np.ndarray, ocr: Ocr, profile: GameProfile | None = None) -> dict[str, Frac]:
    """Where the moves-left, score and level numbers are, and the goal's place, as
    screen fractions (a key is missing when its label or number is not found). The
    goal's icon is matched to the profile's classes when one is given; without one, a
    compact picture beside a count that no label claims is taken for it."""
    h, w = frame.shape[:2]
    words = _unglued(header_words(frame, ocr, profile))
    regions = flat_regions(frame)
    numbers = [wd for wd in words if _number_word(wd.text)]
    out: dict[str, Frac] = {}
    used: list[Word] = []
    heights = sorted(wd.box[3] - wd.box[1] for wd in words if wd.conf >= 0.6) or [h]
    tall = 2.5 * heights[len(heights) // 2]
    for name, labels in LABELS.items():
        # surest first; a label box far taller than the text around it is two lines read as one
        found = sorted((wd for wd in words if _label(wd.text) in labels and wd.box[3] - wd.box[1] <= tall),
                       key=lambda wd: -wd.conf)  # fmt: skip
        # (a level's number stands beside its word: "Level 12", "Lv. 3")
        best = _nearest_number(found, [n for n in numbers if all(n is not u for u in used)], name != "level")
        if best is not None:
            used.append(best[1])
            out[name] = bbox_to_frac(_number_place(best, regions, w, h), w, h)
            if best[3] and name in GROWING:
                out[f"{name}{LINE}"] = bbox_to_frac(_line_place(best[1].box, best[2], regions, w, h), w, h)
        else:
            # the number was not read as a word (a 0 read as "O"): the place beside or
            # below the label that reads as a number
            for label in found:
                near = _read_near(frame, ocr, label, regions, words)
                if near is not None:
                    out[name] = bbox_to_frac(near, w, h)
                    beside = abs((near[1] + near[3]) / 2 - label.centre[1]) < label.box[3] - label.box[1]
                    if beside and name in GROWING:
                        out[f"{name}{LINE}"] = bbox_to_frac(_line_place(near, label, regions, w, h), w, h)
                    break
    free = [wd for wd in numbers if all(wd is not u for u in used)]
    target = _nearest_number([wd for wd in words if _label(wd.text) in TARGET_LABELS], free)
    if target is not None:
        # a score goal: its word and its number, and the badges they are on
        num, label = target[1], target[2]
        lh = max(1, label.box[3] - label.box[1])
        box = _union(_grown(num.box, regions, num.centre, lh // 2, w, h), _grown(label.box, regions, label.centre, lh // 3, w, h))
        out["goal"] = bbox_to_frac(box, w, h)
        return out
    place = _goal_place(frame, words, used, regions, profile, _band(used, h))
    if place is not None:
        out["goal"] = bbox_to_frac(place[0], w, h)
        out["goal_icon"] = bbox_to_frac(place[1], w, h)
    return out


def header_again(profile: GameProfile, frame: np.ndarray, ocr: Ocr, names: list[str]) -> dict[str, Frac]:
    """The places of the header's `names` (and of what goes with them: a goal's icon, a
    number's line) found on `frame`, for a profile whose calibration missed them; the
    places it holds are kept."""
    found = find_header(frame, ocr, profile)
    return {k: v for k, v in found.items()
            if k not in profile.hud and (k in names or any(k.startswith(f"{n}_") for n in names))}  # fmt: skip


def header_words(frame: np.ndarray, ocr: Ocr, profile: GameProfile | None = None) -> list[Word]:
    """The words of the whole frame and, read again on their own, of the bands where a
    header lies: above and below the board (the screen's top and bottom fifth when no
    board is known). Tesseract reads a header's bold words on a band alone that it
    garbles beside a busy board ("MOVES" as "M VE s")."""
    h, w = frame.shape[:2]
    if profile is not None and profile.rows:
        x0, y0, x1, y1 = profile.board_bbox
        bands = [(0, y0), (y1, h)]
    else:
        bands = [(0, h // 5), (h - h // 5, h)]
    banded: list[Word] = []
    read: list[tuple[int, int]] = []
    for top, bottom in bands:
        if bottom - top < max(8, h // 40):
            continue
        read.append((top, bottom))
        banded += [Word(wd.text, (wd.box[0], wd.box[1] + top, wd.box[2], wd.box[3] + top), wd.conf)
                   for wd in ocr.words(frame[top:bottom])]  # fmt: skip
    # within a band its own reading stands; the whole frame's adds what lies elsewhere
    # (a header's number that runs into the board's box) and what the band missed
    rest = [wd for wd in ocr.words(frame)
            if not any(top <= wd.centre[1] < bottom for top, bottom in read)
            or not any(_overlap(wd.box, b.box) for b in banded)]  # fmt: skip
    return sorted(banded + rest, key=lambda wd: (wd.box[1], wd.box[0]))


def _band(found: list[Word], h: int) -> tuple[int, int]:
    """The rows of the screen the header spans: around the numbers its labels claimed,
    or, with none, its top and bottom fifth (where games put headers)."""
    if not found:
        return (0, h)
    top = min(wd.box[1] - 3 * (wd.box[3] - wd.box[1]) for wd in found)
    bottom = max(wd.box[3] + 3 * (wd.box[3] - wd.box[1]) for wd in found)
    return (max(0, top), min(h, bottom))


def _goal_place(frame: np.ndarray, words: list[Word], used: list[Word], regions: list[Region],
                profile: GameProfile | None, band: tuple[int, int]) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]] | None:  # fmt: skip
    """(the goal's place, its icon's square): a count ("12", "3/12") no label claims,
    within the header's band, with a piece's picture beside it."""
    h, w = frame.shape[:2]
    edge = h // 5

    def in_band(wd: Word) -> bool:
        y = wd.centre[1]
        return band[0] <= y < band[1] if band != (0, h) else y < edge or y >= h - edge

    counts = [wd for wd in words if re.fullmatch(r"\d+(/\d+)?", re.sub(r"[^0-9/]", "", wd.text) or "x")
              and re.sub(r"[0-9/., ]", "", wd.text) == "" and not _claimed(wd, used) and in_band(wd)]  # fmt: skip
    def aligned(wd: Word) -> bool:
        # on a row of the header's labelled numbers: its badges stand in rows
        return any(abs(wd.centre[1] - u.centre[1]) < 0.75 * max(1, u.box[3] - u.box[1]) for u in used)

    best: tuple[tuple[bool, float], Word, tuple[int, int, int, int]] | None = None
    for wd in counts:
        th = max(1, wd.box[3] - wd.box[1])
        if profile is not None:
            m = find_icon(frame, wd.box, th, words, profile)
            icon = None if m is None else m.box
        else:
            blobs = icon_boxes(frame, wd.box, th, words)
            if blobs:
                b = blobs[0]
                side = max(b[2] - b[0], b[3] - b[1]) / PIECE_FILLS[0]
                cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
                icon = (int(cx - side / 2), int(cy - side / 2), int(cx + side / 2), int(cy + side / 2))
            else:
                icon = None
        if icon is None:
            continue
        d = float(np.hypot((icon[0] + icon[2]) / 2 - wd.centre[0], (icon[1] + icon[3]) / 2 - wd.centre[1])) / th
        key = (not aligned(wd), d)
        if best is None or key < best[0]:
            best = (key, wd, icon)
    if best is None:
        return None
    _, wd, icon = best
    th = max(1, wd.box[3] - wd.box[1])
    # room for the count to grow by digits ("9" to "10", "3/9" to "3/12")
    grow = (wd.box[0] - th, wd.box[1], wd.box[2] + th, wd.box[3])
    place = _grown(_union(grow, icon), regions, wd.centre, th // 2, w, h)
    return _union(place, icon), icon


def _claimed(wd: Word, used: list[Word]) -> bool:
    """Whether `wd` is a number a label claimed, or that number read again: OCR may give
    one number twice, from two readings of its line (a low-confidence "Moves 14" cut in
    two over a sure "MOVES" and "14"), and the copy beside the goal's icon was taken for
    the goal's count (world 2's goal place then held the moves and cut off "0/14")."""
    return any(wd is u or _overlap(wd.box, u.box) > 0.5 * max(1, min(_area(wd.box), _area(u.box))) for u in used)


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
    # up to the next word on the label's line (one read surely: an unsure "Q" there may be
    # the very number, a 0 taken for a letter)
    right = min([wd.box[0] - gap for wd in words
                 if wd.box[0] > x1 and abs(wd.centre[1] - label.centre[1]) < lh and wd.conf >= 0.6
                 and not _zero_as_letters(wd.text)]
                + [int(x1 + BESIDE * lh)])  # fmt: skip
    # below: a stacked header's number is often bigger than its label, and on a badge of
    # its own under it (the box is then that badge)
    under = (x0 - 2 * lh, y1 + gap, x1 + 2 * lh, min(hi_y, int(y1 + BELOW * lh)))
    badge = _badge(regions, (under[0] + under[2]) / 2, (under[1] + under[3]) / 2, w, h)
    for box in (
        (x1 + gap, y0 - lh // 3, min(hi_x, right), y1 + lh // 3),
        badge if badge is not None and badge[1] >= y1 and badge[1] - y1 < lh else under,
    ):
        bx0, by0 = max(lo_x, box[0]), max(lo_y, box[1])
        bx1, by1 = min(hi_x, w, box[2]), min(hi_y, h, box[3])
        if bx1 - bx0 < lh // 2 or by1 - by0 < lh // 2:
            continue
        crop = frame[by0:by1, bx0:bx1]
        # characters about the label's size, not specks of a backdrop read as a digit
        tall = ink_height(crop)
        if tall is not None and tall >= 0.5 * lh and ocr.number(crop) is not None:
            return (bx0, by0, bx1, by1)
    return None
