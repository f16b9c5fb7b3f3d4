"""A frame as the agent saw it, for a person: the board's grid and letters, the move about
to be made, and what the check made of it. The report and the live view draw with it.

The frame is scaled down first, then drawn on: pictures for a page are a few hundred
pixels wide, and drawing on the full frame would cost ten times as much.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from agent.games.base import OK_VERDICTS
from agent.vision.grid import BBox, cell_edges
from agent.vision.overlay import LOW, draw_overlay

ARROW = (0, 140, 255)  # BGR orange: the move
GOOD = (60, 170, 60)
BAD = (40, 40, 220)
NEUTRAL = (90, 90, 90)


def board_letters(board: str | None) -> list[list[str]] | None:
    """The journal's board text as rows of letters; None when it is no grid (rows of
    different lengths, or nothing)."""
    if not board:
        return None
    rows = [list(line) for line in board.split("\n")]
    if not rows or not rows[0] or any(len(r) != len(rows[0]) for r in rows):
        return None
    return rows


def differences(board: str | None, expected: str | None) -> set[tuple[int, int]]:
    """Cells where `board` and `expected` (the predicted board) disagree; a '?' on either
    side (a cell the rules could not predict, or one read unknown) is no disagreement."""
    a, b = board_letters(board), board_letters(expected)
    if a is None or b is None or len(a) != len(b) or len(a[0]) != len(b[0]):
        return set()
    return {(r, c) for r, (ra, rb) in enumerate(zip(a, b)) for c, (x, y) in enumerate(zip(ra, rb))
            if x != y and "?" not in (x, y)}  # fmt: skip


def _scaled(frame: np.ndarray, width: int | None) -> tuple[np.ndarray, float]:
    h, w = frame.shape[:2]
    if width is None or width >= w:
        return frame, 1.0
    s = width / w
    return cv2.resize(frame, (width, max(1, round(h * s))), interpolation=cv2.INTER_AREA), s


def annotate(
    frame: np.ndarray,
    bbox: BBox | Sequence[float] | None,
    board: str | None,
    gestures: Sequence[Sequence[object]] | None = None,
    verdict: str | None = None,
    expected: str | None = None,
    title: str | None = None,
    width: int | None = None,
) -> np.ndarray:
    """The annotated frame (BGR uint8), `width` pixels wide when given (never wider
    than the frame). `gestures` in the journal's form (["swipe", x1, y1, x2, y2, ms],
    ["tap", x, y]); cells where `expected` (the predicted board) differs from `board`
    are boxed in red."""
    small, s = _scaled(frame, width)
    letters = board_letters(board)
    if bbox is not None and letters is not None:
        box = tuple(round(float(v) * s) for v in bbox)
        x0, y0, x1, y1 = box
        if x1 - x0 >= len(letters[0]) and y1 - y0 >= len(letters):
            conf = np.ones((len(letters), len(letters[0])), dtype=np.float32)
            out = draw_overlay(small, (x0, y0, x1, y1), letters, conf, low=0.0)
            _mark_differences(out, (x0, y0, x1, y1), letters, differences(board, expected))
        else:
            out = small.copy()
    else:
        out = small.copy()
    for g in gestures or ():
        _draw_gesture(out, g, s)
    if verdict or title:
        _banner(out, verdict, title)
    return out


def _mark_differences(out: np.ndarray, box: tuple[int, int, int, int], board: list[list[str]],
                      cells: set[tuple[int, int]]) -> None:  # fmt: skip
    if not cells:
        return
    xs, ys = cell_edges(box, len(board), len(board[0]))
    thick = max(2, round(float(np.diff(xs).min()) / 12))
    for r, c in sorted(cells):
        cv2.rectangle(out, (int(xs[c]), int(ys[r])), (int(xs[c + 1]) - 1, int(ys[r + 1]) - 1), LOW, thick)


def _draw_gesture(out: np.ndarray, g: Sequence[object], s: float) -> None:
    kind = g[0] if g else None
    size = max(2, round(out.shape[1] / 180))
    try:
        if kind == "swipe":
            p1 = (round(float(g[1]) * s), round(float(g[2]) * s))  # type: ignore[arg-type]
            p2 = (round(float(g[3]) * s), round(float(g[4]) * s))  # type: ignore[arg-type]
            cv2.arrowedLine(out, p1, p2, (0, 0, 0), size + 3, cv2.LINE_AA, tipLength=0.35)
            cv2.arrowedLine(out, p1, p2, ARROW, size, cv2.LINE_AA, tipLength=0.35)
        elif kind == "tap":
            p = (round(float(g[1]) * s), round(float(g[2]) * s))  # type: ignore[arg-type]
            cv2.circle(out, p, 6 * size, (0, 0, 0), size + 3, cv2.LINE_AA)
            cv2.circle(out, p, 6 * size, ARROW, size, cv2.LINE_AA)
    except (IndexError, TypeError, ValueError):
        return  # a gesture line this code does not know how to draw is left out, not fatal


def _banner(out: np.ndarray, verdict: str | None, title: str | None) -> None:
    text = " - ".join(t for t in (title, verdict) if t)
    colour = NEUTRAL if verdict is None else (GOOD if verdict in OK_VERDICTS else BAD)
    font = cv2.FONT_HERSHEY_SIMPLEX
    scale = max(0.4, out.shape[1] / 900)
    thick = max(1, round(scale * 1.5))
    (tw, th), base = cv2.getTextSize(text, font, scale, thick)
    cv2.rectangle(out, (0, 0), (min(out.shape[1], tw + 16), th + base + 12), colour, -1)
    cv2.putText(out, text, (8, th + 6), font, scale, (255, 255, 255), thick, cv2.LINE_AA)
