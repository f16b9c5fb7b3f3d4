"""Drawing helpers the simulated phones' renderers share."""

from __future__ import annotations

import cv2
import numpy as np

Box = tuple[int, int, int, int]  # x0, y0, x1, y1; x1 and y1 exclusive


def rounded_mask(shape: tuple[int, int], box: Box, radius: int) -> np.ndarray:
    """Anti-aliased rounded rectangle coverage in [0, 1], (h, w) float32."""
    h, w = shape
    x0, y0, x1, y1 = box
    m = np.zeros((h, w), np.uint8)
    r = max(0, min(radius, (x1 - x0) // 2, (y1 - y0) // 2))
    cv2.rectangle(m, (x0 + r, y0), (x1 - 1 - r, y1 - 1), 255, -1)
    cv2.rectangle(m, (x0, y0 + r), (x1 - 1, y1 - 1 - r), 255, -1)
    for cx, cy in ((x0 + r, y0 + r), (x1 - 1 - r, y0 + r), (x0 + r, y1 - 1 - r), (x1 - 1 - r, y1 - 1 - r)):
        cv2.circle(m, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return m.astype(np.float32) / 255


def blend(img: np.ndarray, mask: np.ndarray, color: tuple[int, int, int] | np.ndarray, opacity: float) -> None:
    """img = img * (1 - m) + color * m, with m = mask * opacity, in place (float image)."""
    m = (mask * opacity)[..., None]
    img *= 1 - m
    img += np.asarray(color, np.float32) * m
