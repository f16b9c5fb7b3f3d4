"""A lattice of cells on an image, and small per-cell descriptors sampled from it.

`Lattice` places `cols x rows` cells of `px x py` pixels (fractional) with the top-left
corner at (x0, y0). Board finding tries many lattices on one image, so cells are
sampled in one `cv2.remap` per lattice: the image is blurred once to the right scale
(which makes point samples area averages) and each cell is read as an s x s grid of
points. That costs the same for any period or phase and no cell is cut out one by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import cv2
import numpy as np

DESC_SAMPLE = 8  # sample points per cell side for descriptors


@dataclass(frozen=True)
class Lattice:
    x0: float
    y0: float
    px: float
    py: float
    cols: int
    rows: int

    @property
    def x1(self) -> float:
        return self.x0 + self.cols * self.px

    @property
    def y1(self) -> float:
        return self.y0 + self.rows * self.py

    def scaled(self, factor: float, dx: float = 0.0, dy: float = 0.0) -> "Lattice":
        """This lattice in another image: coordinates times factor, then shifted."""
        return Lattice(self.x0 * factor + dx, self.y0 * factor + dy, self.px * factor, self.py * factor, self.cols, self.rows)

    def sub(self, c0: int, r0: int, cols: int, rows: int) -> "Lattice":
        return Lattice(self.x0 + c0 * self.px, self.y0 + r0 * self.py, self.px, self.py, cols, rows)


def blurred_for(img: np.ndarray, px: float, py: float, sample: int = DESC_SAMPLE) -> np.ndarray:
    """img blurred so that point samples `px/sample` apart average their neighbourhood."""
    sx = max(0.0, 0.5 * px / sample - 0.5)
    sy = max(0.0, 0.5 * py / sample - 0.5)
    if sx < 0.3 and sy < 0.3:
        return img
    return cv2.GaussianBlur(img, (0, 0), sigmaX=max(sx, 0.3), sigmaY=max(sy, 0.3))


def sample_cells(blurred: np.ndarray, lat: Lattice, sample: int = DESC_SAMPLE) -> np.ndarray:
    """Each cell as a sample x sample grid: (rows, cols, sample, sample, C) float32.

    Points outside the image repeat its border (a board cut by the screen edge still
    gives whole cells).
    """
    u = (np.arange(sample, dtype=np.float32) + 0.5) / sample
    xs = (lat.x0 + (np.arange(lat.cols, dtype=np.float32)[:, None] + u[None, :]) * lat.px).ravel()
    ys = (lat.y0 + (np.arange(lat.rows, dtype=np.float32)[:, None] + u[None, :]) * lat.py).ravel()
    mx, my = np.meshgrid(xs.astype(np.float32) - 0.5, ys.astype(np.float32) - 0.5)
    out = cv2.remap(blurred, mx, my, interpolation=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    if out.ndim == 2:
        out = out[..., None]
    c = out.shape[2]
    return out.reshape(lat.rows, sample, lat.cols, sample, c).transpose(0, 2, 1, 3, 4).astype(np.float32, copy=False)


def descriptors(cells: np.ndarray, inset: int = 1) -> np.ndarray:
    """Flatten sampled cells (rows, cols, s, s, C) to (rows*cols, D), dropping `inset` samples
    at each border (gaps and neighbours' edges)."""
    r, c, s = cells.shape[0], cells.shape[1], cells.shape[2]
    inner = cells[:, :, inset : s - inset, inset : s - inset]
    return inner.reshape(r * c, -1)


def rms_distances(a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """RMS difference per component between rows of a and rows of b (default a)."""
    b = a if b is None else b
    a64 = a.astype(np.float64)
    b64 = b.astype(np.float64)
    sq = (a64 * a64).sum(1)[:, None] + (b64 * b64).sum(1)[None, :] - 2.0 * (a64 @ b64.T)
    return cast(np.ndarray, np.sqrt(np.clip(sq, 0.0, None) / a.shape[1]))
