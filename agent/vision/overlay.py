"""A picture of what calibration or reading found, for a person to check.

The screenshot, dimmed outside the board, with the grid lines, each cell's class letter
(holes and empty cells as a small dot), and cells read with low confidence boxed in red
with their confidence. Saved as PNG (atomically, like every file users keep).
"""

from __future__ import annotations


import cv2
import numpy as np

from typing import Sequence

from agent.vision.classify import EMPTY_LABEL, UNKNOWN_LABEL
from agent.vision.grid import BBox, cell_edges

GRID = (255, 220, 0)  # BGR cyan-ish
TEXT = (255, 255, 255)
OUTLINE = (0, 0, 0)
LOW = (40, 40, 235)  # red
# one distinct colour per class letter, so equal tiles read as equal at a glance
_PALETTE = [
    (80, 200, 255), (120, 255, 120), (255, 160, 90), (200, 120, 255), (90, 255, 255), (255, 120, 200),
    (160, 220, 160), (120, 160, 255), (255, 255, 140), (180, 180, 180),
]  # fmt: skip


def _colour(label: str) -> tuple[int, int, int]:
    if label in (EMPTY_LABEL, UNKNOWN_LABEL) or not label:
        return TEXT
    return _PALETTE[(ord(label[0]) - ord("A")) % len(_PALETTE)]


def draw_overlay(
    frame: np.ndarray,
    bbox: BBox,
    labels: list[list[str]],
    confidence: np.ndarray,
    low: float = 0.5,
    title: str | None = None,
    legend: Sequence[tuple[str, str, str]] = (),
) -> np.ndarray:
    """The overlay image (BGR uint8, same size as frame). `legend`: (letter, what it is,
    "#rrggbb") per class, drawn in a box at the bottom left, below the board if there
    is room."""
    rows, cols = len(labels), len(labels[0])
    out = (frame.astype(np.float32) * 0.45).astype(np.uint8)  # dim everything ...
    x0, y0, x1, y1 = (int(v) for v in bbox)
    out[y0:y1, x0:x1] = frame[y0:y1, x0:x1]  # ... but the board
    xs, ys = cell_edges(bbox, rows, cols)
    cell = float(min(np.diff(xs).min(), np.diff(ys).min()))
    thick = max(1, round(cell / 40))
    for x in xs:
        cv2.line(out, (int(x), y0), (int(x), y1 - 1), GRID, thick, cv2.LINE_AA)
    for y in ys:
        cv2.line(out, (x0, int(y)), (x1 - 1, int(y)), GRID, thick, cv2.LINE_AA)
    scale = max(0.35, cell / 70.0)
    font = cv2.FONT_HERSHEY_SIMPLEX
    for r in range(rows):
        for c in range(cols):
            lab = labels[r][c]
            cx, cy = (xs[c] + xs[c + 1]) // 2, (ys[r] + ys[r + 1]) // 2
            conf = float(confidence[r, c])
            if lab == EMPTY_LABEL:
                cv2.circle(out, (int(cx), int(cy)), max(2, round(cell / 14)), TEXT, -1, cv2.LINE_AA)
            else:
                (tw, th), _ = cv2.getTextSize(lab, font, scale, 2 * thick)
                org = (int(cx - tw / 2), int(cy + th / 2))
                cv2.putText(out, lab, org, font, scale, OUTLINE, 4 * thick, cv2.LINE_AA)
                cv2.putText(out, lab, org, font, scale, _colour(lab), 2 * thick, cv2.LINE_AA)
            if conf < low or lab == UNKNOWN_LABEL:
                m = max(2, round(cell / 16))
                cv2.rectangle(out, (int(xs[c]) + m, int(ys[r]) + m), (int(xs[c + 1]) - m, int(ys[r + 1]) - m), LOW, 2 * thick)
                note = f"{conf:.2f}"
                small = scale * 0.45
                (tw, th), _ = cv2.getTextSize(note, font, small, thick)
                org = (int(xs[c + 1] - m - tw - 2), int(ys[r + 1] - m - 3))
                cv2.putText(out, note, org, font, small, OUTLINE, 3 * thick, cv2.LINE_AA)
                cv2.putText(out, note, org, font, small, LOW, thick, cv2.LINE_AA)
    if legend:
        _draw_legend(out, legend, y1)
    if title:
        s = max(0.5, frame.shape[1] / 1600)
        (tw, th), base = cv2.getTextSize(title, font, s, max(1, round(2 * s)))
        cv2.rectangle(out, (0, 0), (min(out.shape[1], tw + 20), th + base + 16), (0, 0, 0), -1)
        cv2.putText(out, title, (10, th + 8), font, s, TEXT, max(1, round(2 * s)), cv2.LINE_AA)
    return out



def _draw_legend(out: np.ndarray, legend: Sequence[tuple[str, str, str]], board_bottom: int) -> None:
    """Letter in its overlay colour, a swatch of the class's own colour, and its role
    and name: one line per class, in a black box."""
    font = cv2.FONT_HERSHEY_SIMPLEX
    h, w = out.shape[:2]
    s = max(0.4, w / 2000)
    thick = max(1, round(1.5 * s))
    (_, th), base = cv2.getTextSize("Ag", font, s, thick)
    line = th + base + 6
    width = min(w, max(cv2.getTextSize(f"W  {what}", font, s, thick)[0][0] for _, what, _ in legend) + 3 * line)
    height = line * len(legend) + 8
    top = board_bottom + 8 if board_bottom + 8 + height <= h else max(0, h - height)
    cv2.rectangle(out, (0, top), (width, min(h, top + height)), (0, 0, 0), -1)
    for i, (letter, what, colour) in enumerate(legend):
        y = top + 4 + (i + 1) * line - base - 3
        cv2.putText(out, letter, (6, y), font, s, _colour(letter), thick, cv2.LINE_AA)
        if len(colour) == 7 and colour.startswith("#"):
            r, g, b = (int(colour[k : k + 2], 16) for k in (1, 3, 5))
            cv2.rectangle(out, (6 + line, y - th), (6 + line + th, y), (b, g, r), -1)
        cv2.putText(out, what, (10 + line + th, y), font, s, TEXT, thick, cv2.LINE_AA)
