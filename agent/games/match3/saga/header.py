"""A family world's header: where its badges are, and what they say.

Layouts: "badges" (two rows of two, as the old game, in the world's words), "row" (one
row: moves, goal, score, with the level in a small badge above), "goal_panel" (a tall
panel at the top left with the goal's icon and count, moves beside it, level and score
under that), "stacked" (labels above their numbers). The goal shows as the goal piece's
icon with the number still to go (or "3/12" counting up), or "Target 3000" on a score
level. `boxes` is the layout; `draw_base` paints the badges once (the static look),
`draw_text` the words and numbers of a frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agent.games.match3.saga import screens as S
from agent.games.match3.saga.family import HeaderStyle

Box = tuple[int, int, int, int]
HEADER_BOTTOM = 0.155  # of the screen's height: the board starts below


@dataclass(frozen=True)
class HeaderValues:
    level: int
    moves: int
    score: int
    target: int
    goal_kind: str  # "score" | "collect" | "break"
    goal_left: int  # still to go (collect, break)
    goal_count: int


def boxes(style: HeaderStyle, w: int, h: int) -> dict[str, Box]:
    """The header's boxes: "level", "moves", "score", "goal" (and label boxes of a stacked one)."""
    m, top = int(w * 0.04), int(h * 0.03)
    bh = int(h * 0.038)
    gap = int(w * 0.03)
    if style.layout == "row":
        y = top + bh + gap // 2
        pw = (w - 2 * m - 2 * gap) // 3
        out = {name: (m + i * (pw + gap), y, m + i * (pw + gap) + pw, y + int(bh * 1.4))
               for i, name in enumerate(("moves", "goal", "score"))}  # fmt: skip
        out["level"] = (w // 2 - pw // 2, top, w // 2 + pw // 2, top + bh)
        return out
    if style.layout == "goal_panel":
        panel = (m, top, m + int(w * 0.3), int(h * 0.145))
        rx = panel[2] + gap
        half = (w - m - rx - gap) // 2
        return {"goal": panel, "moves": (rx, top, w - m, top + int(bh * 1.4)),
                "level": (rx, top + int(bh * 1.4) + gap // 2, rx + half, top + int(bh * 2.4) + gap // 2),
                "score": (rx + half + gap, top + int(bh * 1.4) + gap // 2, w - m, top + int(bh * 2.4) + gap // 2)}  # fmt: skip
    if style.layout == "stacked":
        out = {"level": (w // 4, top, 3 * w // 4, top + bh)}
        pw = (w - 2 * m - 2 * gap) // 3
        y0 = top + bh + gap // 2
        for i, name in enumerate(("moves", "goal", "score")):
            x0 = m + i * (pw + gap)
            out[name + "_label"] = (x0, y0, x0 + pw, y0 + int(bh * 0.8))
            out[name] = (x0, y0 + int(bh * 0.8), x0 + pw, y0 + int(bh * 2.0))
        return out
    # "badges": two rows of two
    pw = (w - 2 * m - gap) // 2
    out = {}
    for i, name in enumerate(("level", "goal", "moves", "score")):
        r, c = divmod(i, 2)
        x, y = m + c * (pw + gap), top + r * (bh + gap // 2)
        out[name] = (x, y, x + pw, y + bh)
    return out


def draw_base(img: np.ndarray, style: HeaderStyle) -> None:
    h, w = img.shape[:2]
    for name, (x0, y0, x1, y1) in boxes(style, w, h).items():
        if name.endswith("_label"):
            continue
        r = (min(y1 - y0, x1 - x0)) // 4
        S.rounded(img, (x0 + 3, y0 + 4, x1 + 3, y1 + 4), r, (15, 10, 10))
        S.rounded(img, (x0, y0, x1, y1), r, style.panel)


def draw_text(img: np.ndarray, style: HeaderStyle, v: HeaderValues,
              icon: tuple[np.ndarray, np.ndarray] | None) -> None:  # fmt: skip
    """The header's words and numbers; `icon` is the goal piece's sprite (collect, break)."""
    h, w = img.shape[:2]
    b = boxes(style, w, h)
    ink = style.ink
    goal_text = (f"{v.goal_count - v.goal_left}/{v.goal_count}" if style.counts_up else str(v.goal_left))
    if style.layout == "stacked":
        S.text_in(img, style.level_form.format(v.level), b["level"], ink, None, 0.6)
        labels = {"moves": style.moves_word, "score": style.score_word,
                  "goal": style.target_word if v.goal_kind == "score" else ""}  # fmt: skip
        for name, label in labels.items():
            if label:
                S.text_in(img, label, b[name + "_label"], ink, None, 0.6)
        S.text_in(img, str(v.moves), b["moves"], ink, None, 0.6)
        S.text_in(img, str(v.score), b["score"], ink, None, 0.6)
        _goal(img, b["goal"], v, icon, str(v.target) if v.goal_kind == "score" else goal_text, ink)
        return
    S.text_in(img, style.level_form.format(v.level), b["level"], ink, None, 0.55)
    S.text_in(img, f"{style.score_word} {v.score}", b["score"], ink, None, 0.55)
    if style.layout in ("row", "goal_panel"):
        S.text_in(img, f"{style.moves_word} {v.moves}", b["moves"], ink, None, 0.5)
    else:
        S.text_in(img, f"{style.moves_word} {v.moves}", b["moves"], ink, None, 0.55)
    score_goal = f"{style.target_word} {v.target}"
    if style.layout == "goal_panel":
        x0, y0, x1, y1 = b["goal"]
        if v.goal_kind == "score":
            mid = (y0 + y1) // 2
            S.text_in(img, style.target_word, (x0, y0, x1, mid), ink, None, 0.5)
            S.text_in(img, str(v.target), (x0, mid, x1, y1), ink, None, 0.5)
            return
        side = min(x1 - x0, (y1 - y0) * 6 // 10)
        ix0 = (x0 + x1 - side) // 2
        if icon is not None:
            paste_icon(img, icon, (ix0, y0 + (y1 - y0) // 20, ix0 + side, y0 + (y1 - y0) // 20 + side))
        S.text_in(img, goal_text, (x0, y0 + (y1 - y0) * 62 // 100, x1, y1), ink, None, 0.7)
        return
    _goal(img, b["goal"], v, icon, score_goal if v.goal_kind == "score" else goal_text, ink)


def _goal(img: np.ndarray, box: Box, v: HeaderValues, icon: tuple[np.ndarray, np.ndarray] | None, text: str,
          ink: tuple[int, int, int]) -> None:  # fmt: skip
    x0, y0, x1, y1 = box
    if v.goal_kind == "score" or icon is None:
        S.text_in(img, text, box, ink, None, 0.55)
        return
    side = int((y1 - y0) * 0.9)
    cx = x0 + (x1 - x0) // 3
    iy = y0 + (y1 - y0 - side) // 2
    paste_icon(img, icon, (cx - side, iy, cx, iy + side))
    S.text_in(img, text, (cx + side // 6, y0, x1 - (x1 - x0) // 12, y1), ink, None, 0.6)


def paste_icon(img: np.ndarray, icon: tuple[np.ndarray, np.ndarray], box: Box) -> None:
    import cv2

    x0, y0, x1, y1 = box
    side = min(x1 - x0, y1 - y0)
    if side < 4:
        return
    bgr = cv2.resize(icon[0], (side, side), interpolation=cv2.INTER_AREA)
    a = cv2.resize(icon[1], (side, side), interpolation=cv2.INTER_LINEAR)[..., None]
    region = img[y0 : y0 + side, x0 : x0 + side]
    if region.shape[:2] != (side, side):
        return
    region[:] = (region * (1 - a) + bgr * a).astype(np.uint8)
