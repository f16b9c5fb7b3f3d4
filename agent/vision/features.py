"""Per-cell feature vectors for telling tiles apart.

The board is cropped once and shrunk with area averaging to `sample_for()` pixels per
cell side (24 with the defaults); everything after that works on that small image, so
the cost hardly depends on the screen resolution and JPEG/scaling noise is averaged
away before it is measured.

Each cell then drops an `inset` margin on every side (rounded to whole sampled pixels) (tiles have gaps, borders and
shadows that belong to the board, not to the tile, and a slightly off calibration
moves the neighbour's edge into the cell) and the rest is described in CIE Lab,
where Euclidean distance roughly follows perceived colour difference, so a distance
threshold means the same thing for every colour.

Feature layout for `patch = P` (length `feature_length(P)` = 3*P*P + 6 + 9):

    [0, 3*P*P)            the inner cell area-averaged down to P x P, row-major
                          (row, column), with L, a, b interleaved per pixel
    [3*P*P, +3)           mean L, a, b over the inner cell           (x STAT_WEIGHT(P))
    [3*P*P + 3, +3)       standard deviation of L, a, b              (x STAT_WEIGHT(P))
    [3*P*P + 6, +9)       mean gradient magnitude of L in 3 x 3 bins  (x TEXTURE_WEIGHT(P))

L is 0..100 and a, b about -128..127 (OpenCV's float Lab), so one unit is about one
"just noticeable difference". The statistics and texture blocks are scaled so that
each carries about as much weight in a Euclidean distance as the whole colour layout
(they have far fewer components): the layout tells shapes apart, the statistics
colours whatever their position, and the texture tiles of one colour that differ in
their detail (a cracked blocker and a plain one, an enhanced orb with a badge).
Distances between features therefore stay in about Lab units.
"""

from __future__ import annotations

from functools import lru_cache
from typing import cast

import cv2
import numpy as np

from agent.vision.grid import BBox, check_bbox

# Bump when the layout or scaling changes: profiles store it and stale exemplars are refused.
FEATURE_VERSION = 2

SAMPLE_INNER = 18  # pixels per side of the described part of a cell, at least (see cell_layout)
DEFAULT_INSET = 0.125  # 3 of 24 sampled pixels
DEFAULT_PATCH = 6
STAT_LENGTH = 6
TEXTURE_BINS = 3
TEXTURE_LENGTH = TEXTURE_BINS * TEXTURE_BINS
# Block weights relative to the colour layout, see the module docstring.
_STAT_SHARE = 1.0
_TEXTURE_SHARE = 2.0


def feature_length(patch: int = DEFAULT_PATCH) -> int:
    return 3 * patch * patch + STAT_LENGTH + TEXTURE_LENGTH


def stat_weight(patch: int) -> float:
    return _STAT_SHARE * float(np.sqrt(3 * patch * patch / STAT_LENGTH))


def texture_weight(patch: int) -> float:
    return _TEXTURE_SHARE * float(np.sqrt(3 * patch * patch / TEXTURE_LENGTH))


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


@lru_cache(maxsize=64)
def cell_layout(inset: float, patch: int) -> tuple[int, int, int]:
    """(sample, margin, inner): pixels per cell side after the shrink, the margin dropped
    on each side, and the inner part that is described.

    Chosen so every bin is a whole block of pixels (inner is a multiple of `patch` and of
    TEXTURE_BINS, at least SAMPLE_INNER) and margin / sample is as near `inset` as whole
    pixels allow: then pooling is a reshape and a mean, with no interpolation."""
    k = max(2, int(np.ceil(SAMPLE_INNER / patch)))
    while (patch * k) % TEXTURE_BINS:
        k += 1
    inner = patch * k
    margin = int(round(inset * inner / (1.0 - 2.0 * inset)))
    return inner + 2 * margin, margin, inner


def sample_for(inset: float, patch: int) -> int:
    return cell_layout(float(inset), int(patch))[0]


def board_lab(frame: np.ndarray, bbox: BBox, rows: int, cols: int, sample: int) -> np.ndarray:
    """The board shrunk to `sample` pixels per cell, in float Lab: (rows*sample, cols*sample, 3)."""
    x0, y0, x1, y1 = check_bbox(bbox, rows, cols)
    small = _shrink(frame[y0:y1, x0:x1], cols * sample, rows * sample)
    return cv2.cvtColor(small.astype(np.float32) * np.float32(1.0 / 255.0), cv2.COLOR_BGR2Lab)


def _check(frame: np.ndarray, bbox: BBox, rows: int, cols: int, inset: float, patch: int) -> None:
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


def _blocks(img: np.ndarray, rows: int, cols: int, sample: int, margin: int, inner: int, bins: int) -> np.ndarray:
    """(rows*sample, cols*sample, C) -> (rows*cols, bins*bins*C): per-cell block means of
    the inner part."""
    ch = img.shape[2]
    k = inner // bins
    cells = img.reshape(rows, sample, cols, sample, ch)[:, margin : margin + inner, :, margin : margin + inner]
    out = cells.reshape(rows, bins, k, cols, bins, k, ch).mean(axis=(2, 5))  # (r, by, c, bx, ch)
    return cast(np.ndarray, out.transpose(0, 2, 1, 3, 4).reshape(rows * cols, bins * bins * ch))


def features_from_lab(lab: np.ndarray, rows: int, cols: int, inset: float, patch: int) -> np.ndarray:
    """Features of every cell of a board already shrunk to Lab (see board_lab)."""
    s, margin, inner = cell_layout(float(inset), int(patch))
    if lab.shape[0] != rows * s or lab.shape[1] != cols * s:
        raise ValueError(f"expected a {cols * s}x{rows * s} board image for inset {inset}, patch {patch}")
    lab = np.asarray(lab, dtype=np.float32)
    patches = _blocks(lab, rows, cols, s, margin, inner, patch)
    mean = _blocks(lab, rows, cols, s, margin, inner, 1)
    mean_sq = _blocks(lab * lab, rows, cols, s, margin, inner, 1)
    std = np.sqrt(np.clip(mean_sq - mean * mean, 0.0, None))

    # Sobel responds 8x to a step of one unit per pixel, so /8 gives L units per pixel
    lum = np.ascontiguousarray(lab[..., 0])
    gx = cv2.Sobel(lum, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(lum, cv2.CV_32F, 0, 1, ksize=3)
    grad = (cv2.magnitude(gx, gy) * np.float32(1.0 / 8.0))[..., None]
    texture = _blocks(grad, rows, cols, s, margin, inner, TEXTURE_BINS)

    out = np.concatenate(
        [patches, stat_weight(patch) * mean, stat_weight(patch) * std, texture_weight(patch) * texture],
        axis=1,
    )
    return out.astype(np.float32, copy=False)


def cell_features(
    frame: np.ndarray,
    bbox: BBox,
    rows: int,
    cols: int,
    inset: float = DEFAULT_INSET,
    patch: int = DEFAULT_PATCH,
) -> np.ndarray:
    """Features of every cell, shape (rows * cols, feature_length(patch)) float32, row-major."""
    _check(frame, bbox, rows, cols, inset, patch)
    lab = board_lab(frame, bbox, rows, cols, sample_for(inset, patch))
    return features_from_lab(lab, rows, cols, inset, patch)
