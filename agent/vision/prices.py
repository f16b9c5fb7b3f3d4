"""A currency icon beside a number: a coin, a gem or a bank note drawn before or after it.

Games price in their own currency with no currency sign: "900" beside a coin on a button
spends 900 coins, and the same coin beside "+50" on a card is a reward. The icon is found in
the image, not in the text (OCR reads a coin as "$", "@", "O" or nothing): a solid blob of a
colour other than the face it sits on, about as tall as the digits (0.6 to 2.2 times), thick
everywhere (a letter is drawn with strokes; the thickest part of a coin is half its height),
just left or right of the number.
"""

from __future__ import annotations

import cv2
import numpy as np

Box = tuple[int, int, int, int]

REACH = 2.6  # digit heights: how far beside the number the icon may start
FACE_DELTA = 28.0  # Lab distance from the face: the icon's pixels
SOLID = 0.28  # the icon's largest inscribed radius, as a share of its height (strokes are ~0.1)
FILL = 0.45  # the icon covers at least this share of its box


def _lab(img: np.ndarray) -> np.ndarray:
    lab = cv2.cvtColor(img, cv2.COLOR_BGR2Lab).astype(np.float32)
    lab[..., 0] *= np.float32(100.0 / 255.0)
    lab[..., 1:] -= np.float32(128.0)
    return lab


def icon_beside(frame: np.ndarray, box: Box, face: tuple[float, float, float] | None = None) -> Box | None:
    """The box of a currency-like icon just left or right of the text in `box` (a number's
    word box), or None. `face` is the Lab colour the text sits on (else the median of a
    ring around the word)."""
    h, w = frame.shape[:2]
    x0, y0, x1, y1 = box
    th = max(4, y1 - y0)
    reach = int(REACH * th)
    ey0, ey1 = max(0, y0 - th // 2), min(h, y1 + th // 2)
    for sx0, sx1 in ((max(0, x0 - reach), x0), (x1, min(w, x1 + reach))):
        if sx1 - sx0 < th // 2 or ey1 - ey0 < th // 2:
            continue
        crop = frame[ey0:ey1, sx0:sx1]
        lab = _lab(crop)
        f = np.array(face if face is not None else _ring_face(frame, box), np.float32)
        d = np.linalg.norm(lab - f, axis=2)
        mask = (d > FACE_DELTA).astype(np.uint8)
        n, comp, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        dist = cv2.distanceTransform(mask, cv2.DIST_L2, 5)
        for i in range(1, n):
            bx, by, bw, bh, area = (int(v) for v in stats[i])
            if not 0.6 * th <= bh <= 2.2 * th or not 0.5 * bh <= bw <= 2.2 * bh:
                continue
            if area < FILL * bw * bh:
                continue
            if bx == 0 or by == 0 or bx + bw >= mask.shape[1] or by + bh >= mask.shape[0]:
                continue  # what the crop cuts through is a shape's edge or the screen, not an icon beside the text
            inner = float(dist[comp == i].max())
            if inner < SOLID * min(bh, bw):
                continue
            return (sx0 + bx, ey0 + by, sx0 + bx + bw, ey0 + by + bh)
    return None


def _ring_face(frame: np.ndarray, box: Box) -> tuple[float, float, float]:
    """The colour around a word: the median of a thin ring just outside its box."""
    h, w = frame.shape[:2]
    x0, y0, x1, y1 = box
    m = max(2, (y1 - y0) // 4)
    ring = np.concatenate([
        frame[max(0, y0 - m) : y0, x0:x1].reshape(-1, 3), frame[y1 : min(h, y1 + m), x0:x1].reshape(-1, 3),
    ])  # fmt: skip
    if len(ring) == 0:
        ring = frame[y0:y1, x0:x1].reshape(-1, 3)
    med = np.median(ring, axis=0).astype(np.uint8)[None, None, :]
    lab = _lab(med)[0, 0]
    return float(lab[0]), float(lab[1]), float(lab[2])
