"""What moves around a family world's board forever: drifting clouds or twinkling sparkles.

The layer is made at an eighth of the screen's size and drawn up each frame, then added
to the frame where the mask allows (the background, never the board or the header), so
the pixels around the board change every frame, slowly, at a few milliseconds a frame.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

SCALE = 8


class Motion:
    def __init__(self, kind: str, size: tuple[int, int], rng: np.random.Generator) -> None:
        self.kind = kind
        w, h = size
        self._size = size
        self._sw, self._sh = max(8, w // SCALE), max(8, h // SCALE)
        self._speed = float(rng.uniform(1.5, 4.0))  # small pixels a second
        if kind == "clouds":
            tex = np.zeros((self._sh, self._sw * 2), np.float32)
            for _ in range(int(rng.integers(8, 16))):
                c = (int(rng.integers(0, self._sw * 2)), int(rng.integers(0, self._sh)))
                axes = (int(rng.integers(self._sw // 8, self._sw // 3)), int(rng.integers(self._sh // 30 + 1, self._sh // 10 + 2)))
                cv2.ellipse(tex, c, axes, 0, 0, 360, float(rng.uniform(0.5, 1.0)), -1, cv2.LINE_AA)
            tex = np.asarray(cv2.GaussianBlur(tex, (0, 0), max(1.0, self._sw / 40)), np.float32)
            # wrap: the right half repeats the left so the drift never ends
            self._tex = np.concatenate([tex[:, : self._sw], tex[:, : self._sw]], 1) * 0.5 + np.concatenate(
                [tex[:, self._sw :], tex[:, self._sw :]], 1) * 0.5  # fmt: skip
            self._gain = float(rng.uniform(40, 70))
        else:
            n = int(rng.integers(25, 50))
            self._dots = [(float(rng.uniform(0, self._sw)), float(rng.uniform(0, self._sh)), float(rng.uniform(1.0, 3.0)),
                           float(rng.uniform(0, 6.3)), float(rng.uniform(0.8, 2.2))) for _ in range(n)]  # fmt: skip
            self._gain = float(rng.uniform(120, 200))

    def layer(self, t: float) -> np.ndarray:
        """The uint8 brightening to add at time t, full size, one channel."""
        if self.kind == "clouds":
            shift = (t * self._speed) % self._sw
            m = np.array([[1.0, 0.0, -shift], [0.0, 1.0, 0.0]], np.float32)
            small = np.asarray(cv2.warpAffine(self._tex, m, (self._sw, self._sh), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP), np.float32)
        else:
            small = np.zeros((self._sh, self._sw), np.float32)
            for x, y, r, p, f in self._dots:
                k = 0.5 + 0.5 * math.sin(p + f * t)
                yy = (y - t * self._speed * 0.3) % self._sh
                cv2.circle(small, (int(x * 4), int(yy * 4)), max(1, int(r * 4 * (0.5 + 0.5 * k))), float(k), -1,
                           cv2.LINE_AA, shift=2)  # fmt: skip
        layer = np.asarray(cv2.resize(small, self._size, interpolation=cv2.INTER_LINEAR), np.float32)
        return np.clip(layer * self._gain, 0, 255).astype(np.uint8)

    def apply(self, img: np.ndarray, t: float, mask: np.ndarray, gain: float = 1.0) -> None:
        """Brighten `img` in place where `mask` (uint8, nonzero) allows, `gain` of the layer."""
        layer = self.layer(t)
        if gain < 0.99:
            layer = cv2.convertScaleAbs(layer, alpha=gain)
        cv2.add(img, cv2.cvtColor(layer, cv2.COLOR_GRAY2BGR), dst=img, mask=mask)
