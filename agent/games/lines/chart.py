"""A PNG of a Color Lines bench: each player's games sorted by turns survived."""

from __future__ import annotations


import cv2
import numpy as np


COLOURS = ((60, 60, 220), (60, 170, 60), (200, 110, 30), (30, 160, 220))


def bench_chart(turns_by_player: dict[str, list[int]], title: str, cap: int, size: tuple[int, int] = (900, 540)) -> np.ndarray:
    w, h = size
    img = np.full((h, w, 3), 255, dtype=np.uint8)
    left, right, top, bottom = 70, 20, 50, 50
    pw, ph = w - left - right, h - top - bottom
    cv2.putText(img, title, (left, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 1, cv2.LINE_AA)
    cv2.rectangle(img, (left, top), (left + pw, top + ph), (0, 0, 0), 1)
    ymax = max([cap] + [max(t) for t in turns_by_player.values() if t])
    for frac in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = int(top + ph * (1 - frac))
        cv2.line(img, (left, y), (left + pw, y), (225, 225, 225), 1)
        cv2.putText(img, f"{int(ymax * frac)}", (5, y + 5), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (60, 60, 60), 1, cv2.LINE_AA)
    cv2.putText(img, "games, sorted by turns survived", (left, h - 15), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (60, 60, 60), 1,
                cv2.LINE_AA)
    for i, (name, turns) in enumerate(turns_by_player.items()):
        colour = COLOURS[i % len(COLOURS)]
        t = sorted(turns)
        n = len(t)
        pts = np.array([[left + pw * (k + 0.5) / max(1, n), top + ph * (1 - v / ymax)] for k, v in enumerate(t)], np.int32)
        if n > 1:
            cv2.polylines(img, [pts], False, colour, 2, cv2.LINE_AA)
        for p in pts:
            cv2.circle(img, (int(p[0]), int(p[1])), 3, colour, -1, cv2.LINE_AA)
        cv2.putText(img, f"{name} (median {float(np.median(t)) if t else 0:.0f})", (left + 10, top + 20 + 20 * i),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.5, colour, 1, cv2.LINE_AA)
    return img

