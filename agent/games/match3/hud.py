"""The header numbers (steps left, score): how the sim draws them and how to read them back.

Drawing and reading live together so they cannot drift apart: the reader matches
templates of the very font, scale and thickness the renderer used (both come from the
`Layout`), so it reads the sim's screen exactly, with or without JPEG noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import cv2
import numpy as np

if TYPE_CHECKING:  # render imports this module to draw the numbers
    from agent.games.match3.render import Layout

FONT = cv2.FONT_HERSHEY_SIMPLEX
VALUE_COLOR = (255, 255, 255)
NO_VALUE = "--"  # what the steps box shows in a variant without steps

# Normalised correlation of a digit template with the screen: the true digit scores
# ~0.99 on a clean frame and stays above 0.85 under heavy JPEG; a neighbouring
# digit's strokes or a dash stay well below this.
_MATCH_THRESHOLD = 0.7
# The most steps the simulated header shows: six digits fit its box on every screen
# size, and no game counts more moves than that.
MAX_STEPS = 999_999


@dataclass(frozen=True)
class Hud:
    """The numbers in the header. `steps` is None where the game shows no step counter."""

    steps: int | None
    score: int


def value_origin(box: tuple[int, int, int, int], text: str, scale: float, thickness: int) -> tuple[int, int]:
    """Bottom-left text origin that centres `text` in `box`."""
    x0, y0, x1, y1 = box
    (w, h), _ = cv2.getTextSize(text, FONT, scale, thickness)
    return x0 + (x1 - x0 - w) // 2, y0 + (y1 - y0 + h) // 2


def draw_value(img: np.ndarray, box: tuple[int, int, int, int], text: str, scale: float, thickness: int) -> None:
    org = value_origin(box, text, scale, thickness)
    cv2.putText(img, text, org, FONT, scale, VALUE_COLOR, thickness, cv2.LINE_AA)


def hud_texts(hud: Hud) -> tuple[str, str]:
    steps = NO_VALUE if hud.steps is None else str(max(0, hud.steps))
    return steps, str(max(0, hud.score))


@dataclass(frozen=True)
class _Templates:
    images: np.ndarray  # (10, th, tw) uint8, white digit on black
    advance: int  # pixels from one digit's origin to the next


@lru_cache(maxsize=16)
def _templates(scale: float, thickness: int) -> _Templates:
    # All ten digits share one window (the union of their ink around the origin), so
    # scores are comparable and a narrow digit's blank sides count as evidence too.
    pad = 4 * thickness + 8
    (w, h), base = cv2.getTextSize("0", FONT, scale, thickness)
    canvases = []
    for d in range(10):
        c = np.zeros((h + base + 2 * pad, w + 2 * pad), np.uint8)
        cv2.putText(c, str(d), (pad, pad + h), FONT, scale, 255, thickness, cv2.LINE_AA)
        canvases.append(c)
    ink = np.maximum.reduce(canvases) > 0
    ys, xs = np.nonzero(ink)
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    two = np.zeros((h + base + 2 * pad, 2 * w + 2 * pad), np.uint8)
    cv2.putText(two, "11", (pad, pad + h), FONT, scale, 255, thickness, cv2.LINE_AA)
    one = np.zeros_like(two)
    cv2.putText(one, "1", (pad, pad + h), FONT, scale, 255, thickness, cv2.LINE_AA)
    advance = int(np.nonzero(two.any(0))[0].max() - np.nonzero(one.any(0))[0].max())
    images = np.stack([c[y0:y1, x0:x1] for c in canvases])
    return _Templates(images, max(1, advance))


def read_number(gray: np.ndarray, scale: float, thickness: int, margin: int = 0) -> int | None:
    """The digits drawn in `gray` (a crop around one value, with `margin` columns beyond
    the value's box on each side), or None if there are none."""
    t = _templates(scale, thickness)
    th, tw = t.images.shape[1:]
    if gray.shape[0] < th or gray.shape[1] < tw or float(gray.std()) < 1.0:
        return None
    # Ink at or beyond the box's sides: the number runs past its box, so any digits read
    # here would be a cut-off part of it (twelve 9s read as ten, or a lone 0), not the
    # number. The box may cut in the gap between two digits, hence the margin.
    floor, peak = float(np.median(gray)), float(gray.max())
    side = max(2, margin)
    sides = np.concatenate([gray[:, :side], gray[:, -side:]], axis=1)
    if float(sides.max()) > floor + 0.5 * (peak - floor):
        return None
    scores = np.stack([cv2.matchTemplate(gray, img, cv2.TM_CCOEFF_NORMED) for img in t.images])
    scores = np.nan_to_num(scores, nan=0.0, posinf=0.0, neginf=0.0)
    best = scores.max(axis=0)  # (H', W') best digit score per position
    # The digits of one number share a baseline: read along the best row.
    row = int(np.argmax(best.max(axis=1)))
    lo, hi = max(0, row - 1), min(best.shape[0], row + 2)
    profile = best[lo:hi].max(axis=0)
    digit_at = scores[:, lo:hi, :].max(axis=1).argmax(axis=0)
    picks: list[tuple[int, int]] = []
    live = profile.copy()
    reach = max(1, int(round(t.advance * 0.7)))
    while True:
        x = int(np.argmax(live))
        if live[x] < _MATCH_THRESHOLD:
            break
        picks.append((x, int(digit_at[x])))
        live[max(0, x - reach) : x + reach + 1] = -1.0
    if not picks:
        return None
    picks.sort()
    # A real number is a tight run of digits; stray matches far apart are noise.
    for (xa, _), (xb, _) in zip(picks, picks[1:]):
        if not 0.75 * t.advance <= xb - xa <= 1.3 * t.advance:
            return None
    return int("".join(str(d) for _, d in picks))


def _read_value(frame: np.ndarray, box: tuple[int, int, int, int], layout: "Layout") -> int | None:
    # half a digit's advance beyond each side reaches the next digit of a number that
    # spills out of its box, and not the neighbouring box's
    margin = _templates(layout.hud_scale, layout.hud_thickness).advance // 2
    x0, y0, x1, y1 = box
    lo, hi = max(0, x0 - margin), min(frame.shape[1], x1 + margin)
    gray = _crop_gray(frame, (lo, y0, hi, y1))
    return read_number(gray, layout.hud_scale, layout.hud_thickness, max(x0 - lo, hi - x1))


def _crop_gray(frame: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    x0, y0, x1, y1 = box
    crop = frame[y0:y1, x0:x1]
    return cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY) if crop.ndim == 3 else crop


def read_hud(frame: np.ndarray, layout: "Layout") -> Hud | None:
    """Steps and score as the sim drew them; None if this is not a readable game header."""
    if frame.ndim not in (2, 3) or frame.shape[:2] != (layout.height, layout.width):
        return None
    score = _read_value(frame, layout.score_box, layout)
    if score is None:
        return None
    steps = _read_value(frame, layout.steps_box, layout)
    if steps is not None and steps > MAX_STEPS:
        steps = None  # more than the game can show: a misread, not a count
    return Hud(steps=steps, score=score)
