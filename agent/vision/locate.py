"""Finding a game board on a screenshot with no prior knowledge of the game.

1. Candidates: `periodicity.period_candidates` proposes cell sizes (px, py) and the
   area where the screen repeats with them, on a copy at most WORK_MAX pixels long.
2. For each candidate, on a crop of the full frame scaled so cells are about
   REFINE_CELL pixels:
   - period (`refine_period`): the autocorrelation of the candidate's area decides
     between the proposed period, its multiples and its fractions, then fits it to
     sub-pixel precision from every harmonic peak, checked against the comb of all of
     them (see _off_sideband; cells about square: see _ELONGATED);
   - phase (`phase.best_phase`): where the lattice lines fall, as the position at
     which the cells' borders vary least from cell to cell;
   - extent (`extent.board_extent`): the rows and columns whose cells are the board's
     kinds of cell, and the holes of an irregular board;
   - settling (`_settled`): the period measured again on the board's own box;
   - rhythm (`lattice_periodicity`): how strongly the final box repeats with exactly
     its period, which makes candidates found different ways comparable.
3. Placements of one board by several candidates are one (see `_same`, `_better`). The
   best-scoring candidate that makes a 3..12 by 3..12 board wins. Nothing passes on
   a screen without a board (a menu, noise, a repeating wallpaper: its "board" would
   run past 12 cells or have no distinct tiles), and that is reported, not invented.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import cast

import cv2
import numpy as np

from agent.errors import AgentError
from agent.vision.grid import BBox
from agent.vision.profile import GRID_MAX, GRID_MIN
from agent.vision.extent import board_extent
from agent.vision.lattice import DESC_SAMPLE, Lattice, blurred_for
from agent.vision.phase import best_phase, border_variance
from agent.vision.periodicity import (
    Feature,
    PeriodCandidate,
    axis_acf,
    blobs,
    comb_scores,
    detail,
    lab_image,
    period_candidates,
)

WORK_MAX = 1024  # longest side of the copy periods are searched on
REFINE_CELL = 32.0  # cell size (pixels) of the crop a candidate is placed on
MIN_CELL_PX = 10  # smaller cells cannot be told apart
_PHASE_CELLS = 4
_FUNDAMENTAL = 0.25  # the proposed period (or a multiple) needs this share of the best contrast
_FRACTION = 0.6  # a fraction of the proposed period needs this share
_MARGIN_CELLS = 3  # the crop runs this many cells past the area where repetition was seen
_CANDIDATES = 8
_NEAR = 0.15  # how far from a proposed period its refinement looks for a stronger peak
_NEAR_GAIN = 1.5  # ... and how much stronger that peak must be
# No clear peak: comb contrast under this. Measured: the periods chosen on the real shots
# with obstacles drawn on them 0.067 or more; a proposal 9% off a board of 2x2 crates -0.01-0.02.
_WEAK = 0.04
# A harmonic whose peak stands over its troughs less than this share of the first peak's
# is a slope, not a peak, when the period is measured again on a board's box (see
# _settled). Measured: world 2's 7-row board with a block of crates, its second harmonic
# 0.32 of the first (its window's top a slope 8% short), the fourth and fifth 0.64-0.76.
_HARMONIC_PROMINENCE = 0.5
# The fitted period stands while the comb of every harmonic there is at least this share
# of the comb's best near it (within its main lobe, the half maximum); off it, the fit
# followed a sideband (see _off_sideband).
_COMB_LOBE = 0.5
# A board's cells are about square (the real shots: at most 1.08 to 1): a lattice whose
# cells are twice as long as wide has split the board's tiles in two along one axis (a
# period halved where tiles are mirror-symmetric), and its half-tiles repeat as well as
# the tiles do.
_ELONGATED = 1.5
# The period measured again on the board's box (see _settled) replaces the first when
# within this share of it; the search looks down to this share of it for a fraction.
_SETTLE = 0.03
_SETTLE_LO = 0.8
# Two placements are of the same board when their periods are within this share of
# each other and their boxes share this much of the smaller one (see _same).
_SAME_PITCH = 0.02
_SAME_SHARE = 0.5
# ... and of two, the one holding more cells is kept unless its score is under this share
# of the other's. Measured on the look-alike families (27 such pairs): the true board
# against one stopping short of its outer rows 0.96 or more; a box grown over a textured
# backdrop against the true board 0.51.
_SAME_SCORE = 0.75
# A find by its detail scoring under this barely repeats: the real shots' boards score 2.8
# to 40 by their detail, the placements that are not a board 0.01 to 0.3. Under it the
# blobs are looked at too, and the finds of both ranked together (world 2's first level,
# a block of 14 crates in a 7x8 board, read by its detail as a 4x7 box below scoring
# 0.001, by its blobs as the board scoring 12).
_WEAK_FIND = 1.0


class NoBoardError(AgentError):
    """The screenshot shows no game board (or none that could be found)."""

    exit_code = 4
    hint = (
        "open the game with its board fully on screen (no dialog or menu over it) and try again; "
        "a board needs 3 to 12 rows and columns of cells at least 10 pixels wide"
    )


@dataclass(frozen=True, eq=False)
class BoardFind:
    """A board found on a frame: its box (frame pixels, x1/y1 exclusive), grid, and evidence.

    `occupied` marks cells that look like the board's (a tile type or its empty slot);
    the others are flat or unlike the rest (holes of an irregular board, one-off tiles).
    `holes` marks the cells taken for holes: they show what lies around the board.
    """

    bbox: BBox
    rows: int
    cols: int
    pitch: tuple[float, float]
    score: float
    occupied: np.ndarray = field(repr=False)
    holes: np.ndarray = field(repr=False)
    lattice: Lattice = field(repr=False)
    # how much the cells differ along their borders over the whole board (see
    # phase.border_variance): least where the lattice's lines fall on the board's own
    borders: float = field(default=0.0, repr=False)


@dataclass(frozen=True)
class _Crop:
    x0: int
    y0: int
    scale: float  # crop pixels per frame pixel
    lab: np.ndarray

    def to_frame(self, lat: Lattice) -> Lattice:
        return lat.scaled(1.0 / self.scale, self.x0, self.y0)


def work_copy(frame: np.ndarray) -> tuple[np.ndarray, float]:
    h, w = frame.shape[:2]
    sc = min(1.0, WORK_MAX / max(h, w))
    if sc >= 1.0:
        return frame, 1.0
    return cv2.resize(frame, (max(1, round(w * sc)), max(1, round(h * sc))), interpolation=cv2.INTER_AREA), sc


def check_frame(frame: np.ndarray) -> np.ndarray:
    if not isinstance(frame, np.ndarray) or frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
        shape = getattr(frame, "shape", None)
        raise ValueError(f"expected an (H, W, 3) uint8 BGR image, got {shape} {getattr(frame, 'dtype', type(frame))}")
    if min(frame.shape[:2]) < GRID_MIN * MIN_CELL_PX:
        raise NoBoardError(f"the image is only {frame.shape[1]}x{frame.shape[0]} pixels: too small to hold a board")
    return frame


# -- period ------------------------------------------------------------------------------


def refine_period(v: np.ndarray, p: float, lo: float, prominent: bool = False) -> float | None:
    """The fundamental period near p in a 1-D autocorrelation v, to sub-pixel precision.

    Tries p, its multiples 2p, 3p and its fractions p/2, p/3, ..., each by the contrast of its
    first peak over the troughs half a period either side: a fraction of the true
    period puts its first peak on a true trough and an even multiple its troughs on
    true peaks, so both score about nothing, while an odd multiple scores like the
    period itself. The smallest option with a clear peak wins (see _FUNDAMENTAL and
    _FRACTION). Then a weighted
    least-squares fit through the origin of the harmonic peak positions k*p, each found
    by a parabola through the top of v. `prominent`: a harmonic counts only when its peak
    stands over the troughs half a period either side by a share of the first peak's
    (_HARMONIC_PROMINENCE), not where the window's highest point is a slope. A fit that
    followed a family of sidebands instead of the peaks is caught last (_off_sideband).
    """
    n = len(v)
    hi = n / 2.5
    fractions = [p / m for m in range(2, int(p / lo) + 1)]
    options = np.array(sorted({q for q in (*fractions, p, 2 * p, 3 * p) if lo <= q <= hi}))
    if options.size == 0:
        return None
    scores = comb_scores(v[None, :], options, span=1.0, harmonics=1)[0]
    # A board with a two-cell pattern (checkered slots, alternating tile backs, blockers
    # on every other row) has a stronger peak at 2p than at p, so the bar for keeping
    # the proposed period is low; a fraction of it must be clearly periodic to replace it.
    best = scores.max()
    bar = np.where(options < p * 0.99, _FRACTION * best, _FUNDAMENTAL * best)
    pick = int(np.flatnonzero(scores >= bar)[0]) if best > 0.0 else int(np.argmin(np.abs(options - p)))
    p = float(options[pick])
    # The proposal is a coarse estimate from a small copy of the screen; a board with big
    # flat obstacles (2x2 crates) can pull it a tenth off the true period, where there is
    # no clear peak and the harmonics' windows below miss the true peaks: then a clearly
    # stronger peak near it is the period.
    near = p * np.linspace(1 - _NEAR, 1 + _NEAR, 31)
    near = near[(near >= lo) & (near <= hi)]
    strength = float(scores[pick])
    if near.size and strength < _WEAK:
        around = comb_scores(v[None, :], near, span=1.0, harmonics=1)[0]
        if around.max() > _NEAR_GAIN * max(strength, 0.0) + 1e-9:
            p, strength = float(near[int(np.argmax(around))]), float(around.max())
    if strength <= 0.0:
        return None
    # Each harmonic is looked for around k times the period fitted from the ones before
    # it, not k times the proposal: a proposal some percent off puts its later windows
    # beside the true peaks, onto the bumps between them, which pull the fit off. But a
    # fit from the first peak alone is only as good as that peak, and a broad one (a
    # plateau where the tiles' widths differ) can put it a tenth off: where the fitted
    # window's maximum lies on its edge (no peak in it), the proposal's window is looked at.
    ks, pos, wts = [], [], []
    fit = p
    first: float | None = None  # the first peak's prominence

    def prominence(i: int) -> float:
        troughs = np.interp([i - fit / 2, i + fit / 2], np.arange(n), v)
        return float(v[i] - troughs.mean())

    def peak_in(centre: float) -> int | None:
        a = max(1, int(np.floor(centre - 0.2 * p)))
        b = min(n - 2, int(np.ceil(centre + 0.2 * p)))
        if b <= a:
            return None
        i = a + int(np.argmax(v[a : b + 1]))
        return i if a < i < b else None  # the maximum on the edge of the search: not a peak

    for k in range(1, int(0.7 * n / p) + 1):
        i = peak_in(k * fit)
        if i is None and fit != p:
            i = peak_in(k * p)
        if i is None:
            continue
        if prominent:
            stands = prominence(i)
            if first is None:
                first = stands
            elif stands < _HARMONIC_PROMINENCE * first:
                continue
        den = v[i - 1] - 2 * v[i] + v[i + 1]
        off = 0.5 * (v[i - 1] - v[i + 1]) / den if den < 0 else 0.0
        ks.append(k)
        pos.append(i + float(np.clip(off, -0.5, 0.5)))
        wts.append(max(v[i], 1e-3))
        k_arr, pos_arr, w_arr = np.array(ks, float), np.array(pos), np.array(wts)
        fit = float((w_arr * k_arr * pos_arr).sum() / (w_arr * k_arr * k_arr).sum())
    return _off_sideband(v, fit, lo, hi)


def _off_sideband(v: np.ndarray, fit: float, lo: float, hi: float) -> float:
    """The period fitted from the harmonics' peaks, unless it lies off the comb of all of
    them: then the period within _NEAR of it where that comb stands highest (see
    _harmonic_comb).

    Big sprites that fill most of their cells (gems some 0.85 of a cell wide, with strong
    outlines) put a peak in the autocorrelation at the sprite's width as well as at the
    cell's, and a family of such sidebands at k*p - (p - width) beside the true peaks k*p.
    At the scale the period is measured on, the first sideband and the first true peak
    merge into one broad hump whose top is the sideband (the autocorrelation falls with
    the lag); the fit then follows the sidebands, through the origin, and comes out short
    (measured: a board of such gems with cut corners, 106 pixels a cell, placed at 96.5
    along x, its columns drifting most of a cell off at its edges). A sideband stands
    beside each harmonic at the same lag, not in proportion to k, so only the true
    period lines up every harmonic's peak over its troughs at once.
    """
    n = len(v)
    harmonics = max(1, int(0.7 * n / fit))  # the fit's own reach
    grid = fit * np.linspace(1 - _NEAR, 1 + _NEAR, 61)
    grid = grid[(grid >= lo) & (grid <= hi) & ((harmonics + 0.5) * grid <= n - 1.001)]
    if grid.size < 3:
        return fit
    comb = _harmonic_comb(v, grid, harmonics)
    i = int(np.argmax(comb))
    if i == 0 or i == grid.size - 1 or comb[i] <= 0.0:
        return fit  # no peak of the comb near the fit: nothing better to go by
    # Within the comb's main lobe the fit stands: it is the more precise (each peak's
    # own top, weighted), and where peaks are broad blobs the comb's top moves with the
    # slope of the autocorrelation as much as the fit's does.
    if _harmonic_comb(v, np.array([fit]), harmonics)[0] >= _COMB_LOBE * comb[i]:
        return fit
    den = comb[i - 1] - 2 * comb[i] + comb[i + 1]
    off = 0.5 * (comb[i - 1] - comb[i + 1]) / den if den < 0 else 0.0
    return float(grid[i] + np.clip(off, -0.5, 0.5) * (grid[1] - grid[0]))


def _harmonic_comb(v: np.ndarray, periods: np.ndarray, harmonics: int) -> np.ndarray:
    """For each period p, how far the autocorrelation v stands at k*p over the mean of
    the troughs at (k -/+ 1/2)*p, averaged over k = 1..harmonics (the same k for every
    period, so they compare). Against the troughs' mean, not the higher one (see
    comb_scores): a steep fall of v with the lag hides a true peak below the trough
    before it but leaves it above their mean."""
    lags = np.arange(len(v))
    k = np.arange(1, harmonics + 1)[None, :]
    p = periods[:, None]
    peaks = np.interp(k * p, lags, v)
    troughs = (np.interp((k - 0.5) * p, lags, v) + np.interp((k + 0.5) * p, lags, v)) / 2
    return cast(np.ndarray, (peaks - troughs).mean(axis=1))


# -- phase and extent ----------------------------------------------------------------------


def lattice_periodicity(lab: np.ndarray, lat: Lattice, holes: np.ndarray | None = None,
                        feature: Feature = detail, level: bool = False) -> float:  # fmt: skip
    """How strongly the box of a placed lattice repeats with exactly its periods: the
    weaker of the x and y comb contrasts of its autocorrelation (see comb_scores).
    `holes` (rows, cols) marks cells of an irregular board that show what lies behind
    it: they count as flat, so a picture behind its cut corners does not drown the
    rhythm of its cells.

    A property of the answer alone, so candidates found different ways compare fairly:
    a lattice laid over a board at the wrong pitch finds its box repeating at another."""
    h, w = lab.shape[:2]
    x0, y0 = max(0, int(np.floor(lat.x0))), max(0, int(np.floor(lat.y0)))
    x1, y1 = min(w, int(np.ceil(lat.x1))), min(h, int(np.ceil(lat.y1)))
    if x1 - x0 < 2 * lat.px or y1 - y0 < 2 * lat.py:
        return 0.0
    d = feature(lab[y0:y1, x0:x1])
    # compressed, so a few high-contrast tiles on a board of faint empty slots do not
    # drown the slots' edges, which are what repeats there
    d = np.log1p(d / max(float(np.median(d)), 1e-3))
    if holes is not None and holes.any() and not holes.all():
        ys = np.clip(((np.arange(y0, y1) + 0.5 - lat.y0) // lat.py).astype(int), 0, lat.rows - 1)
        xs = np.clip(((np.arange(x0, x1) + 0.5 - lat.x0) // lat.px).astype(int), 0, lat.cols - 1)
        behind = holes[ys[:, None], xs[None, :]]
        d[behind] = float(d[~behind].mean())
    vx, vy = axis_acf(d[None])
    if level:
        cx, cy = _levelled_comb(vx[0], lat.px), _levelled_comb(vy[0], lat.py)
    else:
        cx = comb_scores(vx, np.array([lat.px]), span=1.0, harmonics=1)[0, 0]
        cy = comb_scores(vy, np.array([lat.py]), span=1.0, harmonics=1)[0, 0]
    return float(max(0.0, min(cx, cy)))


def _levelled_comb(v: np.ndarray, p: float) -> float:
    """The peak at the period over the mean of the troughs half a period either side: a
    box whose autocorrelation falls steeply with the lag (a diamond of a board, a block of
    crates, holes over a grainy scene) keeps a peak there that the higher trough hides."""
    if 1.5 * p > v.size - 1.001:
        return 0.0
    peak, before, after = np.interp([p, 0.5 * p, 1.5 * p], np.arange(v.size), v)
    return float(peak - (before + after) / 2)


# -- one candidate -----------------------------------------------------------------------


def _crop(frame: np.ndarray, box: tuple[float, float, float, float], scale: float) -> _Crop:
    h, w = frame.shape[:2]
    x0, y0 = max(0, int(np.floor(box[0]))), max(0, int(np.floor(box[1])))
    x1, y1 = min(w, int(np.ceil(box[2]))), min(h, int(np.ceil(box[3])))
    part = frame[y0:y1, x0:x1]
    if scale < 1.0:
        part = cv2.resize(part, (max(1, round(part.shape[1] * scale)), max(1, round(part.shape[0] * scale))), interpolation=cv2.INTER_AREA)
    sx = part.shape[1] / (x1 - x0)
    return _Crop(x0, y0, sx, lab_image(part))


def place(frame: np.ndarray, cand: PeriodCandidate, work_scale: float, feature: Feature = detail) -> BoardFind | None:
    """Period, phase and extent for one candidate on the full frame, or None. `feature`
    is what the candidate's period was seen in, and is measured again in."""
    h, w = frame.shape[:2]
    pxf, pyf = cand.px / work_scale, cand.py / work_scale
    if min(pxf, pyf) < MIN_CELL_PX / 1.5:
        return None
    scale = min(1.0, REFINE_CELL / min(pxf, pyf))
    rx0, ry0, rx1, ry1 = (v / work_scale for v in cand.region)
    core_f = (rx0, ry0, rx1, ry1)

    # the period from the area where repetition was seen
    first = _crop(frame, core_f, scale)
    det = feature(first.lab)[None]
    vx, vy = axis_acf(det)
    lo = MIN_CELL_PX * first.scale * 0.9
    px = refine_period(vx[0], pxf * first.scale, lo)
    py = refine_period(vy[0], pyf * first.scale, lo)
    if px is None or py is None or max(px, py) > _ELONGATED * min(px, py):
        return None
    px, py = px / first.scale, py / first.scale  # frame pixels
    # the period found may be a fraction of the proposal (a coarse level's window saw
    # three cells as one): the board is measured at the scale of the cells it has, as
    # the extent's measures were made at, not squeezed to a few pixels a cell
    scale = min(1.0, REFINE_CELL / min(px, py))

    margin = [_MARGIN_CELLS] * 4
    phase: tuple[float, float] | None = None  # a lattice corner, frame pixels
    seen = core_f  # where the board's kinds are learned, frame pixels (set with the phase)
    for _ in range(3):
        box = (rx0 - margin[0] * px, ry0 - margin[1] * py, rx1 + margin[2] * px, ry1 + margin[3] * py)
        crop = _crop(frame, box, scale)
        s = crop.scale
        blur = blurred_for(crop.lab, px * s, py * s)
        core = ((rx0 - crop.x0) * s, (ry0 - crop.y0) * s, (rx1 - crop.x0) * s, (ry1 - crop.y0) * s)
        if phase is None:
            # the phase is measured on the area where repetition was seen, grown to at
            # least _PHASE_CELLS cells a side: a few cells, nearly all empty slots, say
            # little about it (but growing further takes in what is around the board)
            gx = max(0.0, (_PHASE_CELLS + 1) * px * s - (core[2] - core[0])) / 2
            gy = max(0.0, (_PHASE_CELLS + 1) * py * s - (core[3] - core[1])) / 2
            wide = (
                max(0.0, core[0] - gx), max(0.0, core[1] - gy),
                min(blur.shape[1], core[2] + gx), min(blur.shape[0], core[3] + gy),
            )  # fmt: skip
            x0, y0, _ = best_phase(blur, wide, px * s, py * s)
            phase = (crop.x0 + x0 / s, crop.y0 + y0 / s)
            # the extent learns the board's kinds there too: the few cells of a board of
            # big crates that repeat clearly are too few to learn them from
            seen = (crop.x0 + wide[0] / s, crop.y0 + wide[1] / s, crop.x0 + wide[2] / s, crop.y0 + wide[3] / s)
        else:  # a bigger crop of the same board: same lattice
            x0, y0 = (phase[0] - crop.x0) * s, (phase[1] - crop.y0) * s
        core = ((seen[0] - crop.x0) * s, (seen[1] - crop.y0) * s, (seen[2] - crop.x0) * s, (seen[3] - crop.y0) * s)
        ext = board_extent(blur, core, x0, y0, px * s, py * s)
        if ext is None:
            return None
        # a board that runs into the crop's edge (not the screen's) may go on: look further
        at_screen = (box[0] <= 0, box[1] <= 0, box[2] >= w, box[3] >= h)
        grow = [t and not e for t, e in zip(ext.touches, at_screen)]
        if not any(grow):
            break
        margin = [m + _MARGIN_CELLS if g else m for m, g in zip(margin, grow)]
        if feature is not detail:
            # A period seen in a few blobs is a percent or two off, which over a bigger
            # crop puts the far lines a third of a cell out: measured again on the part
            # of the board found, and the lattice kept where it falls on it.
            st = _settled(crop, ext.lattice, feature)
            px, py = st.px / s, st.py / s
            phase = (crop.x0 + st.x0 / s, crop.y0 + st.y0 / s)
    assert ext is not None  # the loop ran at least once and returned on None
    for _ in range(2):  # see _rephased: the extent found again on the board's own lines
        moved = _rephased(blur, ext.lattice)
        again = board_extent(blur, core, *moved, px * s, py * s) if moved is not None else None
        if again is None:
            break
        ext = again
    # The kinds were learned where repetition was seen. Few windows see the blobs of a
    # grainy board, and a kind may lie only outside them, its cells with no twin there:
    # such a board's kinds are learned again over the whole box found. (Not a board found
    # by its detail: there the box may run on under a dialog, which learning over it
    # would make the board's.)
    lat0 = ext.lattice
    whole = None if feature is detail else \
        board_extent(blur, (lat0.x0, lat0.y0, lat0.x1, lat0.y1), lat0.x0, lat0.y0, px * s, py * s)
    if whole is not None and whole.lattice.rows * whole.lattice.cols >= lat0.rows * lat0.cols \
            and whole.occupied.sum() > ext.occupied.sum():
        ext = whole
    if not (GRID_MIN <= ext.lattice.rows <= GRID_MAX and GRID_MIN <= ext.lattice.cols <= GRID_MAX):
        return None
    settled = _settled(crop, ext.lattice, feature)
    lat = crop.to_frame(settled)
    rhythm = lattice_periodicity(crop.lab, settled, ext.holes)
    if feature is not detail:
        # The box repeats in its detail, or in its blobs. Blobs are big: over a few rows
        # their autocorrelation falls with the lag so fast that the trough before the
        # period stands above its peak (a diamond board with a block of crates and holes
        # over a grainy scene passed or failed as the scene moved), so the peak is
        # measured against the level of the troughs either side.
        rhythm = max(rhythm, lattice_periodicity(crop.lab, settled, ext.holes, feature, level=True))
    if rhythm <= 0.0:
        return None
    bbox = (
        max(0, int(round(lat.x0))),
        max(0, int(round(lat.y0))),
        min(w, int(round(lat.x1))),
        min(h, int(round(lat.y1))),
    )
    score = ext.score * rhythm
    return BoardFind(bbox, lat.rows, lat.cols, (lat.px, lat.py), score, ext.occupied, ext.holes, lat,
                     border_variance(blur, settled))  # fmt: skip


def _rephased(blur: np.ndarray, lat: Lattice) -> tuple[float, float] | None:
    """The lattice's corner moved to the phase measured again inside the board's box
    (crop pixels), or None when the lines stay within a sample of where they were. The
    first phase was measured over a few cells around where repetition was seen: where
    those are all empty slots, alike whatever the phase, the backdrop beside the board
    decides it, and lines a fifth of a cell off cut every slot in two (the board then
    spans a line of cells more each way). Inside the box the tiles on the board say
    where its lines are; its outer lines are left out, as lines off the board's cut
    them across the board's edge and the backdrop (which then decides it again)."""
    inner = (lat.x0 + lat.px, lat.y0 + lat.py, lat.x1 - lat.px, lat.y1 - lat.py)
    x0, y0, _ = best_phase(blur, inner, lat.px, lat.py)
    off = [(x0 - lat.x0) / lat.px, (y0 - lat.y0) / lat.py]
    off = [o - round(o) for o in off]
    # per axis: a shift within one sample of a cell side is no new placement
    off = [o if abs(o) > 1.0 / DESC_SAMPLE else 0.0 for o in off]
    if off == [0.0, 0.0]:
        return None
    return lat.x0 + off[0] * lat.px, lat.y0 + off[1] * lat.py


def _settled(crop: _Crop, lat: Lattice, feature: Feature = detail) -> Lattice:
    """The lattice of a board whose extent is known, its period measured again on the
    board's own box (crop pixels) and its lines kept where they fall at the board's
    centre: the first period was measured where repetition was seen, which takes in what
    lies around a board and only part of it, and a period a fraction of a percent off
    moves the outer lines by a few pixels."""
    h, w = crop.lab.shape[:2]
    x0, y0 = max(0, int(np.floor(lat.x0))), max(0, int(np.floor(lat.y0)))
    x1, y1 = min(w, int(np.ceil(lat.x1))), min(h, int(np.ceil(lat.y1)))
    vx, vy = axis_acf(feature(crop.lab[y0:y1, x0:x1])[None])
    found = [refine_period(v, p, _SETTLE_LO * p, prominent=True) for v, p in ((vx[0], lat.px), (vy[0], lat.py))]
    px, py = (q if q is not None and abs(q / p - 1.0) < _SETTLE else p for q, p in zip(found, (lat.px, lat.py)))
    cx, cy = lat.x0 + lat.cols * lat.px / 2, lat.y0 + lat.rows * lat.py / 2
    return Lattice(cx - lat.cols * px / 2, cy - lat.rows * py / 2, px, py, lat.cols, lat.rows)


def find_boards(frame: np.ndarray) -> list[BoardFind]:
    """Every board placement the candidates lead to, best first, without duplicates.
    Raises NoBoardError if there is none."""
    check_frame(frame)
    work, sc = work_copy(frame)
    found: list[BoardFind] = []
    # Gradient detail first; where nothing repeats in it, or only weakly (see _WEAK_FIND),
    # the blobs of colour and light (see periodicity.blobs): a board of many-cut gems over
    # a grainy scene.
    for feature in (detail, blobs):
        for cand in period_candidates(work, limit=_CANDIDATES, feature=feature):
            b = place(frame, cand, sc, feature)
            if b is None:
                continue
            same = [f for f in found if _same(b, f)]
            if not same:
                found.append(b)
                continue
            # The same board placed by two candidates: see _better; it ranks by the better score.
            kept = b
            for f in same:
                kept = replace(_better(kept, f), score=max(kept.score, f.score))
            found = [f for f in found if not any(f is g for g in same)] + [kept]
        if found and max(f.score for f in found) >= _WEAK_FIND:
            break
    if not found:
        raise NoBoardError("no game board found: nothing on the screen repeats like a grid of tiles")
    return sorted(found, key=lambda b: -b.score)


def _same(a: BoardFind, b: BoardFind) -> bool:
    """Two placements of one board: the same lattice (periods within a few percent, lines
    within a quarter cell of each other) over boxes sharing most of the smaller one."""
    la, lb = a.lattice, b.lattice
    for pa, pb, oa, ob in ((la.px, lb.px, la.x0, lb.x0), (la.py, lb.py, la.y0, lb.y0)):
        if abs(pa / pb - 1.0) > _SAME_PITCH:
            return False
        off = (oa - ob) / pa
        if abs(off - round(off)) > 0.25:
            return False
    ix = max(0, min(a.bbox[2], b.bbox[2]) - max(a.bbox[0], b.bbox[0]))
    iy = max(0, min(a.bbox[3], b.bbox[3]) - max(a.bbox[1], b.bbox[1]))
    smaller = min((u[2] - u[0]) * (u[3] - u[1]) for u in (a.bbox, b.bbox))
    return ix * iy >= _SAME_SHARE * smaller


def _better(a: BoardFind, b: BoardFind) -> BoardFind:
    """Of two placements of one board, the one holding more of its cells (the extent
    learned from a candidate that saw only part of a board with cut corners and lit tiles
    can stop short of its sparse outer rows), unless its score is clearly lower (its box
    took in something without the board's rhythm); of two holding as many, the one whose
    cell borders vary least over the whole board (the phase's own measure, taken on all
    of it: their lines differ by a few pixels, their scores by noise)."""
    na, nb = int(a.occupied.sum()), int(b.occupied.sum())
    inner = _inside(a, b) or _inside(b, a)
    if inner and a.rows * a.cols != b.rows * b.cols:
        # One box holds the other and lines more: its extent judged those lines the
        # board's, where the other's stopped short. Which found more cells inside is noise
        # of two phases (measured: world 6's level 2, its outer column of a gem and two
        # crates among cut corners, lost to a box a column short that read 2 more cells).
        big, small = (a, b) if a.rows * a.cols > b.rows * b.cols else (b, a)
        return big if big.score >= _SAME_SCORE * small.score else small
    if na != nb:
        big, small = (a, b) if na > nb else (b, a)
        return big if big.score >= _SAME_SCORE * small.score else small
    return a if a.borders < b.borders else b


def _inside(a: BoardFind, b: BoardFind) -> bool:
    """a's box within b's, to a quarter of a cell each side."""
    tx, ty = 0.25 * b.pitch[0], 0.25 * b.pitch[1]
    return (a.bbox[0] >= b.bbox[0] - tx and a.bbox[1] >= b.bbox[1] - ty
            and a.bbox[2] <= b.bbox[2] + tx and a.bbox[3] <= b.bbox[3] + ty)


def find_board(frame: np.ndarray) -> BoardFind:
    """The board on a full screenshot (BGR uint8). Raises NoBoardError if there is none."""
    return find_boards(frame)[0]
