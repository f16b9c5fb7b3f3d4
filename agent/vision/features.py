"""Per-cell feature vectors for telling tiles apart.

The board is cropped once and shrunk with area averaging to SAMPLE x SAMPLE pixels per
cell; everything after that works on that small image, so the cost hardly depends on
the screen resolution and JPEG/scaling noise is averaged away before it is measured.

Each cell then drops an `inset` margin on every side (tiles have gaps, borders and
shadows that belong to the board, not to the tile, and a slightly off calibration
moves the neighbour's edge into the cell) and the rest is described in CIE Lab,
where Euclidean distance roughly follows perceived colour difference, so a distance
threshold means the same thing for every colour.

Feature layout for `patch = P` (length `feature_length(P)` = 3*P*P + 6):

    [0, 3*P*P)           the inner cell area-averaged down to P x P, row-major
                         (row, column), with L, a, b interleaved per pixel
    [3*P*P, 3*P*P + 3)   mean L, a, b over the inner cell
    [3*P*P + 3, +6)      standard deviation of L, a, b over the inner cell

L is 0..100 and a, b about -128..127 (OpenCV's float Lab), so one unit is about one
"just noticeable difference" and distances between features are in those units.
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from agent.vision.grid import BBox, check_bbox

# Bump when the layout or scaling changes: profiles store it and stale exemplars are refused.
FEATURE_VERSION = 1

SAMPLE = 16  # pixels per cell side after the first shrink
DEFAULT_INSET = 0.12
DEFAULT_PATCH = 6
STAT_LENGTH = 6


def feature_length(patch: int = DEFAULT_PATCH) -> int:
    return 3 * patch * patch + STAT_LENGTH


@lru_cache(maxsize=32)
def _weights(sample: int, inset: float, patch: int) -> tuple[np.ndarray, np.ndarray]:
    """Area weights (patch, sample) mapping a sampled cell side onto `patch` bins of its inner part.

    Done as a weight matrix rather than a resize so the inset need not fall on whole
    pixels and all cells are reduced in one matrix product. Also returns the (sample,)
    weights of the inner part as a whole, for the mean/std statistics.
    """
    lo, hi = inset * sample, (1.0 - inset) * sample
    step = (hi - lo) / patch
    starts = lo + step * np.arange(patch)[:, None]
    px = np.arange(sample)[None, :]
    overlap = np.clip(np.minimum(px + 1, starts + step) - np.maximum(px, starts), 0.0, None)
    w = (overlap / step).astype(np.float32)
    whole = (w.sum(axis=0) / patch).astype(np.float32)
    w.setflags(write=False)
    whole.setflags(write=False)
    return w, whole


def _shrink(img: np.ndarray, width: int, height: int) -> np.ndarray:
    """Area-average img down to width x height, fast.

    OpenCV's INTER_AREA is exact but slow (about 3.5 ms for a 1000 px board) unless the
    ratio is a whole number. So: bilinear to the nearest whole multiple k of the target
    with k chosen so that step shrinks by at most 2x (bilinear still reads every pixel
    then, nothing is skipped), then INTER_AREA by exactly k. Within 0.5 grey levels of
    the exact result on average, at a fifth of the time.
    """
    h, w = img.shape[:2]
    kx = max(1, int(np.ceil(w / width / 2.0)))
    ky = max(1, int(np.ceil(h / height / 2.0)))
    if kx == 1 and ky == 1:
        return cv2.resize(img, (width, height), interpolation=cv2.INTER_AREA)
    mid = cv2.resize(img, (width * kx, height * ky), interpolation=cv2.INTER_LINEAR)
    return cv2.resize(mid, (width, height), interpolation=cv2.INTER_AREA)


def _sample_for(inset: float, patch: int) -> int:
    # at least two sampled pixels per patch bin, so each bin still averages some noise away
    inner = 1.0 - 2.0 * inset
    return max(SAMPLE, int(np.ceil(2 * patch / inner)))


def cell_features(
    frame: np.ndarray,
    bbox: BBox,
    rows: int,
    cols: int,
    inset: float = DEFAULT_INSET,
    patch: int = DEFAULT_PATCH,
) -> np.ndarray:
    """Features of every cell, shape (rows * cols, feature_length(patch)) float32, row-major."""
    if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
        raise ValueError(f"expected an (H, W, 3) uint8 BGR frame, got {frame.shape} {frame.dtype}")
    if not 0.0 <= inset < 0.5:
        raise ValueError(f"inset is a fraction of the cell in [0, 0.5), got {inset}")
    if patch < 1:
        raise ValueError(f"patch must be at least 1, got {patch}")
    x0, y0, x1, y1 = check_bbox(bbox, rows, cols)
    h, w = frame.shape[:2]
    if x0 < 0 or y0 < 0 or x1 > w or y1 > h:
        raise ValueError(f"board bbox {tuple(bbox)} is outside the {w}x{h} frame")

    s = _sample_for(inset, patch)
    small = _shrink(frame[y0:y1, x0:x1], cols * s, rows * s)
    lab = cv2.cvtColor(small.astype(np.float32) * np.float32(1.0 / 255.0), cv2.COLOR_BGR2Lab)
    cells = lab.reshape(rows, s, cols, s, 3).transpose(0, 2, 1, 3, 4)  # (r, c, y, x, ch)

    wts, whole = _weights(s, float(inset), int(patch))
    # y then x: two small matrix products instead of one 5-D einsum keeps it well under a ms
    rows_reduced = np.einsum("py,rcyxk->rcpxk", wts, cells, optimize=True)
    patches = np.einsum("qx,rcpxk->rcpqk", wts, rows_reduced, optimize=True)
    mean = np.einsum("y,rcyxk,x->rck", whole, cells, whole, optimize=True)
    mean_sq = np.einsum("y,rcyxk,x->rck", whole, cells * cells, whole, optimize=True)
    std = np.sqrt(np.clip(mean_sq - mean * mean, 0.0, None))

    n = rows * cols
    out = np.concatenate(
        [patches.reshape(n, 3 * patch * patch), mean.reshape(n, 3), std.reshape(n, 3)], axis=1
    )
    return out.astype(np.float32, copy=False)
