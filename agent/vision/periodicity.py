"""Where a screen repeats itself: local lattice periods from windowed autocorrelation.

A game board is a patch of the screen that repeats with a period of one cell in x and
one in y: the slots, gaps and frames repeat exactly, and identical tile sprites repeat
at whole-cell offsets. The autocorrelation of a high-passed copy of the image (only
detail is kept, so flat areas and smooth gradients count for nothing) therefore has
peaks at whole multiples of the cell size along each axis.

The screen is cut into overlapping square windows on a small image pyramid (a fixed
window size per level, so big cells are seen at coarse levels and small cells at fine
ones), each window's autocorrelation is computed with one batched FFT, and every window
proposes the periods that make a comb of peaks along x and along y. Windows that agree
on a period pair are grouped; a group is a candidate board (periods and the area where
they were seen) for `agent.vision.locate` to confirm, place and measure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import cv2
import numpy as np

WINDOW = 128  # window side at every pyramid level, pixels
STRIDE = 64
MIN_PERIOD = 7  # smallest period looked for at a level (pixels of that level)
MAX_LEVELS = 5
HIGHPASS_SIGMA = 1.5  # the blur removed to keep only detail, pixels of the level
# a period is a comb along the axis: peaks at k*p must stand above the troughs at (k-1/2)*p
_SPAN = 0.8  # harmonics up to this fraction of the window
_MIN_SCORE = 0.08  # weaker windows are noise
_ASPECT = 2.0  # cells at most this elongated
_SAME_PERIOD = 0.07  # periods within 7% (log) are the same


@dataclass(frozen=True)
class PeriodCandidate:
    """A candidate lattice: periods px, py and the box where windows saw them (work pixels)."""

    px: float
    py: float
    score: float  # summed window scores: strength times area
    region: tuple[int, int, int, int]  # x0, y0, x1, y1 (x1, y1 exclusive)
    windows: int


def lab_image(img: np.ndarray) -> np.ndarray:
    """BGR uint8 -> Lab float32 in OpenCV's float units (L 0..100, a and b about -128..127).

    Through the 8-bit conversion, which is table-driven and many times faster than the
    float one; its quantisation is far below the contrasts looked for here.
    """
    lab = cv2.cvtColor(img, cv2.COLOR_BGR2Lab).astype(np.float32)
    lab[..., 0] *= np.float32(100.0 / 255.0)
    lab[..., 1:] -= np.float32(128.0)
    return lab


def detail(lab: np.ndarray, sigma: float = HIGHPASS_SIGMA) -> np.ndarray:
    """Local contrast: gradient magnitude of the lightly blurred Lab image, float32 (H, W, 1).

    Unsigned on purpose: on a checkerboard the edge between two slots changes sign from
    one cell to the next, so a signed image repeats only every second cell, but its
    magnitude repeats every cell. Colour edges count as well as light ones.
    """
    lab = cv2.GaussianBlur(lab, (0, 0), sigma * 0.5)
    gx = cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3)
    return cast(np.ndarray, np.sqrt((gx * gx + gy * gy).sum(axis=2))[..., None])


def blobs(lab: np.ndarray, sigma: float = HIGHPASS_SIGMA) -> np.ndarray:
    """What is where: chroma and lightness, lightly blurred, float32 (H, W, 2).

    Where every tile is drawn differently (gems of many cuts) over a grainy scene, the
    detail inside the tiles and in the grain hides the repeat of the cells from
    `detail`; a coloured piece in each slot on a dark panel still repeats as a blob.
    """
    lab = cv2.GaussianBlur(lab, (0, 0), sigma)
    chroma = np.sqrt(lab[..., 1] * lab[..., 1] + lab[..., 2] * lab[..., 2])
    return np.stack([chroma, lab[..., 0]], axis=-1).astype(np.float32)


Feature = Callable[[np.ndarray], np.ndarray]


def axis_acf(stack: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Normalised autocorrelation along x and along y of each (n, H, W, C) window.

    Only the two axes of the 2-D autocorrelation are needed, and R(dx, 0) is the sum
    over rows of each row's 1-D autocorrelation, so 1-D FFTs along one axis do (half
    the work of a 2-D transform). Zero-padded (no wrap-around), summed over channels,
    divided by the overlap at each lag (unbiased) and by the zero-lag energy, so a
    perfect repeat scores 1. Returns rx (n, W) and ry (n, H).
    """
    x = stack - stack.mean(axis=(1, 2), keepdims=True)
    out = []
    for axis in (2, 1):
        m = x.shape[axis]
        f = np.fft.rfft(x, n=2 * m, axis=axis)
        power = (f.real**2 + f.imag**2).sum(axis=(3, 1 if axis == 2 else 2))
        r = np.fft.irfft(power, n=2 * m, axis=1)[:, :m]
        r = r / ((m - np.arange(m)) / m)[None, :]
        out.append(r / np.maximum(r[:, :1], 1e-9))
    return out[0], out[1]


def _interp(v: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """v (n, S) sampled at fractional positions pos (...): (n, ...)."""
    lo = np.floor(pos).astype(np.int64)
    t = (pos - lo).astype(v.dtype)
    lo = np.clip(lo, 0, v.shape[1] - 2)
    return cast(np.ndarray, v[:, lo] * (1 - t) + v[:, lo + 1] * t)


def comb_scores(v: np.ndarray, periods: np.ndarray, span: float = _SPAN, harmonics: int = 3) -> np.ndarray:
    """Comb contrast of each autocorrelation row at each period: (n, len(periods)).

    For each of the first `harmonics` multiples k*p that fit in `span` of the row, the
    peak v(k*p) minus the higher of the troughs v((k -/+ 1/2)*p); the score is the
    weakest of these. A true period has a peak at every multiple and troughs between.
    A fraction of it puts some of its "peaks" on the true troughs, so its weakest
    contrast is about zero however strong the others are. An odd multiple of the true
    period scores as well as the period (callers prefer the smaller).
    """
    s = v.shape[1]
    k = np.arange(1, harmonics + 1)[None, :]
    p = periods[:, None].astype(np.float64)
    use = ((k + 0.5) * p <= span * s) | (k == 1)
    top = s - 1.001
    peaks = _interp(v, np.minimum(k * p, top))
    before = _interp(v, np.minimum((k - 0.5) * p, top))
    after = _interp(v, np.minimum((k + 0.5) * p, top))
    contrast = peaks - np.maximum(before, after)
    contrast = np.where(use[None], contrast, np.inf)
    return cast(np.ndarray, contrast.min(axis=-1))


def _top_periods(scores: np.ndarray, periods: np.ndarray, top: int) -> list[list[tuple[float, float]]]:
    """Per row: up to `top` local maxima (period, score) above the noise score, best first."""
    out = []
    left = np.concatenate([scores[:, :1] - 1, scores[:, :-1]], axis=1)
    right = np.concatenate([scores[:, 1:], scores[:, -1:] - 1], axis=1)
    is_peak = (scores >= left) & (scores >= right) & (scores > _MIN_SCORE)
    for row, peak in zip(scores, is_peak):
        idx = np.flatnonzero(peak)
        idx = idx[np.argsort(row[idx])[::-1][:top]]
        out.append([(float(periods[i]), float(row[i])) for i in idx])
    return out


def _windows(img: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int]]]:
    h, w = img.shape[:2]
    if h < WINDOW or w < WINDOW:  # a small image (or coarse level) is one zero-padded window
        pad = np.zeros((max(h, WINDOW), max(w, WINDOW), img.shape[2]), img.dtype)
        pad[:h, :w] = img
        img, h, w = pad, pad.shape[0], pad.shape[1]
    ys = list(range(0, h - WINDOW + 1, STRIDE))
    xs = list(range(0, w - WINDOW + 1, STRIDE))
    if ys[-1] != h - WINDOW:
        ys.append(h - WINDOW)
    if xs[-1] != w - WINDOW:
        xs.append(w - WINDOW)
    pos = [(x, y) for y in ys for x in xs]
    return np.stack([img[y : y + WINDOW, x : x + WINDOW] for x, y in pos]), pos


@dataclass(frozen=True)
class _Seen:
    px: float
    py: float
    score: float
    box: tuple[int, int, int, int]


def window_periods(img: np.ndarray, top: int = 3, feature: Feature = detail) -> list[_Seen]:
    """Every window's plausible (px, py) pairs with their scores, in image pixels."""
    seen: list[_Seen] = []
    level = lab_image(img)
    periods = np.arange(MIN_PERIOD, int(WINDOW / 2.5) + 1, dtype=np.float64)
    for lvl in range(MAX_LEVELS):
        f = 2**lvl
        if lvl and min(level.shape[:2]) < WINDOW // 2:
            break
        stack, pos = _windows(feature(level))
        rx, ry = axis_acf(stack)
        tx = _top_periods(comb_scores(rx, periods), periods, top)
        ty = _top_periods(comb_scores(ry, periods), periods, top)
        for (x, y), cx, cy in zip(pos, tx, ty):
            box = (x * f, y * f, (x + WINDOW) * f, (y + WINDOW) * f)
            for px, sx in cx:
                for py, sy in cy:
                    if max(px, py) <= _ASPECT * min(px, py):
                        seen.append(_Seen(px * f, py * f, min(sx, sy), box))
        if min(level.shape[:2]) <= WINDOW:
            break
        level = cv2.resize(level, (level.shape[1] // 2, level.shape[0] // 2), interpolation=cv2.INTER_AREA)
    return seen


def period_candidates(img: np.ndarray, limit: int = 6, feature: Feature = detail) -> list[PeriodCandidate]:
    """Lattice candidates for a (work-size) BGR image, strongest first.

    Window proposals with about the same (px, py) are pooled; each pool's region is the
    union of its windows that score at least half its best one (a stray weak window far
    away does not stretch the area to search).
    """
    seen = sorted(window_periods(img, feature=feature), key=lambda s: -s.score)
    groups: list[list[_Seen]] = []
    for s in seen:
        for g in groups:
            head = g[0]
            if abs(np.log(s.px / head.px)) < _SAME_PERIOD and abs(np.log(s.py / head.py)) < _SAME_PERIOD:
                g.append(s)
                break
        else:
            groups.append([s])
    h, w = img.shape[:2]
    out = []
    for g in groups:
        best = g[0].score
        strong = [s for s in g if s.score >= 0.5 * best]
        weights = np.array([s.score for s in strong])
        px = float(np.average([s.px for s in strong], weights=weights))
        py = float(np.average([s.py for s in strong], weights=weights))
        x0 = max(0, min(s.box[0] for s in strong))
        y0 = max(0, min(s.box[1] for s in strong))
        x1 = min(w, max(s.box[2] for s in strong))
        y1 = min(h, max(s.box[3] for s in strong))
        # area-normalised so a coarse level's big windows do not outvote fine ones
        score = float(sum(s.score * (s.box[2] - s.box[0]) ** 2 for s in g) / (WINDOW * WINDOW))
        out.append(PeriodCandidate(px, py, score, (x0, y0, x1, y1), len(g)))
    out.sort(key=lambda c: -c.score)
    return out[:limit]
