"""Frames calibration must not learn from as they are: a board under a dialog, and cells
that are moving or covered.

Covered board (`covering_overlay`). A dialog, a light box or the popup of a dimmed
screen is a panel: one flat colour (a gentle shade at most) filling a rounded rectangle
of a few cells or more, with text or icons on it. The board is looked at with one
pitch of margin all round (the board finder often stops at a panel's edge, so the panel
lies mostly outside the box it found), looked for SEARCH pitches around the box, on a copy with PANEL_CELL pixels per cell. Flat
pixels (Lab gradient under FLAT_GRADIENT delta E per pixel) are joined into connected
regions; a region is a panel when, with its holes (the text) filled in,
- it covers at least MIN_PANEL_CELLS cells' area inside the board's box (a HUD card
  beside the board is no cover) and spans more than one cell both ways (a tile that fills its cell, a gap line, are smaller);
- it fills its bounding box (SOLIDITY: a rounded rectangle does, a board's background
  seen around its tiles does not, unless the tiles are holes in it, see next);
- it is one colour (COHERENT share of it within COLOUR_NEAR of its median);
- and that colour is not the board's own: not the background of the cells it leaves
  uncovered (the colour along their borders: an empty stretch of a board is flat and
  connected too) and not what lies around the board (the holes of an irregular board
  show it).
The screen is "dimmed" when the board cells left uncovered are far darker than the
panel (DIM_GAP in L between the panel and the board's bright end).

Unsettled cells (`unsettled_cells`) are named and read "?", never clustered:
- offset: a piece whose extent is lopsided in its cell (its margins on two opposite
  sides differ by OFFSET_SHARE of the cell or more, both from nothing and from the
  board's typical lopsidedness, which a game's shading or a tile kind may have);
- blur: a piece whose edges, along x or y (motion blur softens one axis), are softer
  than those of every one of its look-alikes (the LOOK_ALIKES cells nearest in mean
  colour, within LIKE_NEAR: blur keeps a piece's mean colour) by BLUR_SHARE. Comparing
  with the softest look-alike, not the typical one, allows for where an edge falls
  between samples, which alone changes a sharp edge's gradient up to threefold.

- and it is bare (BARE): what it holds fills little of it, where a panel behind the
  board (its frame, a backing taken in by a box found too wide) is mostly tiles.
Measured (the six real shots, the 20 bbb crops, the sim screens of every game, the
synthetic boards of tests/unit/test_calibrate.py): panels drawn over 11 to 21 cells have
solidity 0.87-0.99 and coherence 1.0; the board's own flat regions are rejected by
colour or by covering all of it, a candy board's surround by AROUND_SHARE (0.35-0.64
there). Dim: panel L minus the board's 95th percentile L is over DIM_GAP on every dimmed
frame, under it on every light box. Offset: clean cells are lopsided by at most 0.25
(p95 0.03-0.21), pieces caught mid-fall by 0.46-0.62 and sim pieces moved by 0.35-0.45
of a cell by 0.35 or more. Blur: a Gaussian blur of 0.12 cell or a motion blur of 0.4
cell gives 0.35-0.45 of the median look-alike. Not caught: a cell holding halves of two
pieces (the one below a falling piece: it looks symmetric), a piece shifted by exactly
half a cell (its border ring, where the background is read, is half piece), and score
text over a piece (only when it moves the piece's extent).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import cv2
import numpy as np

from agent.vision.grid import BBox
from agent.vision.layers import BACKGROUND, RING, RING_INLIER
from agent.vision.locate import BoardFind, NoBoardError
from agent.vision.periodicity import lab_image
from agent.vision.samples import CellSamples


SEARCH = 2  # pitches around the board box a panel is looked for in
PANEL_CELL = 16  # pixels per cell of the copy panels are looked for on
FLAT_GRADIENT = 3.0  # delta E per pixel of that copy: flatter is part of a flat region
MIN_PANEL_CELLS = 2.0
MIN_SPAN = 1.5  # cells, both ways
SOLIDITY = 0.85
COLOUR_NEAR = 10.0
COHERENT = 0.85
BOARD_COLOUR = 12.0  # a panel this near the board's own background colour is the board
LEFT_MIN = 0.25  # a panel over all but this share of the board is what the board was found in
AROUND_SHARE = 0.3  # a panel whose colour is this share of what lies around the board is that surround
DIM_GAP = 30.0
# A dialog hides what is under it: what it holds (text, a button, icons) fills a small
# part of it. A panel behind the board (its frame, a backing) shows the tiles on it, so
# most of its filled outline is pieces, not panel. Measured: the flat share of the
# drawn dialogs and popups 0.67-0.97; a board's dark backing seen with the board box
# found too wide 0.31.
BARE = 0.5
_CLOSE = PANEL_CELL // 4
_CLOSE_KERNEL = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * _CLOSE + 1, 2 * _CLOSE + 1))


# unsettled cells
MIN_OBJECT = 0.08  # share of a cell its piece must cover to be looked at
MIN_PIECES = 6  # cells with pieces a board needs for its typical look to be known
OFFSET_SHARE = 0.3
MIN_RANGE = 10.0  # L range of a cell whose edges are measured
BLUR_SHARE = 0.5
LOOK_ALIKES = 4
LIKE_NEAR = 8.0  # delta E of mean colour: a blurred piece keeps its own
MIN_LIKE = 2


class CoveredBoardError(NoBoardError):
    """Something (a dialog, a popup over a dimmed screen) covers the board."""

    hint = "close the dialog or popup over the board, then calibrate again"


@dataclass(frozen=True)
class Panel:
    """A panel over the board: its box (frame pixels), cells covered, and whether the
    rest of the screen is dimmed."""

    bbox: BBox
    cells: int
    dimmed: bool
    colour: tuple[float, float, float]


def _region(frame: np.ndarray, board: BoardFind) -> tuple[np.ndarray, int, int, float, float]:
    """The board with one pitch of margin, in Lab at PANEL_CELL pixels per cell:
    (lab, x0, y0, scale) with x0, y0 the region's corner in the frame."""
    h, w = frame.shape[:2]
    px, py = board.pitch
    bx0, by0, bx1, by1 = board.bbox
    x0, y0 = max(0, int(bx0 - SEARCH * px)), max(0, int(by0 - SEARCH * py))
    x1, y1 = min(w, int(np.ceil(bx1 + SEARCH * px))), min(h, int(np.ceil(by1 + SEARCH * py)))
    sx, sy = PANEL_CELL / px, PANEL_CELL / py
    part = frame[y0:y1, x0:x1]
    small = cv2.resize(part, (max(1, round((x1 - x0) * sx)), max(1, round((y1 - y0) * sy))), interpolation=cv2.INTER_AREA)
    return lab_image(small), x0, y0, sx, sy


def _gradient(lab: np.ndarray) -> np.ndarray:
    gx = cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3)
    return np.sqrt((gx * gx + gy * gy).sum(axis=2)) * np.float32(1.0 / 8.0)


def find_panels(frame: np.ndarray, board: BoardFind, debug: bool = False) -> list[Panel]:
    lab, rx0, ry0, sx, sy = _region(frame, board)
    rh, rw = lab.shape[:2]
    cell_area = PANEL_CELL * PANEL_CELL
    flat = (_gradient(lab) < FLAT_GRADIENT).astype(np.uint8)
    n, comp, stats, _ = cv2.connectedComponentsWithStats(flat, connectivity=4)
    # the board box in region pixels
    bx0, by0 = (board.bbox[0] - rx0) * sx, (board.bbox[1] - ry0) * sy
    bx1, by1 = (board.bbox[2] - rx0) * sx, (board.bbox[3] - ry0) * sy
    ibx0, iby0, ibx1, iby1 = (int(round(v)) for v in (bx0, by0, bx1, by1))
    inside = np.zeros((rh, rw), bool)
    inside[iby0:iby1, ibx0:ibx1] = True
    out = []
    for i in range(1, n):
        x, y, cw, ch, area = (int(v) for v in stats[i])
        if area < MIN_PANEL_CELLS * cell_area or cw < MIN_SPAN * PANEL_CELL or ch < MIN_SPAN * PANEL_CELL:
            continue
        mask = (comp[y : y + ch, x : x + cw] == i).astype(np.uint8)
        # text and icons on a panel may reach its edge: bridge them before filling holes
        closed = cv2.morphologyEx(np.pad(mask, _CLOSE), cv2.MORPH_CLOSE, _CLOSE_KERNEL)[_CLOSE:-_CLOSE, _CLOSE:-_CLOSE]
        contours, _ = cv2.findContours(closed, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        filled = np.zeros_like(mask)
        cv2.drawContours(filled, contours, -1, 1, thickness=-1)
        solidity = float(filled.sum()) / (cw * ch)
        bare = float(mask.sum()) / max(1.0, float(filled.sum()))
        pix = lab[y : y + ch, x : x + cw][mask > 0]
        med = np.median(pix, axis=0)
        coherent = float((np.linalg.norm(pix - med, axis=1) < COLOUR_NEAR).mean())
        full = np.zeros((rh, rw), bool)
        full[y : y + ch, x : x + cw] = filled > 0
        covered = _covered_cells(full, ibx0, iby0, ibx1, iby1, board.rows, board.cols)
        # over the board itself (a HUD card beside the board is no cover), though maybe
        # mostly outside the box: the finder often stops at a panel's edge
        over = float(full[iby0:iby1, ibx0:ibx1].sum())
        if over < MIN_PANEL_CELLS * cell_area:
            continue
        board_cells = _covered_cells(full, ibx0, iby0, ibx1, iby1, board.rows, board.cols, margin=0)
        left = 1.0 - board_cells / (board.rows * board.cols)
        # another flat region of the board, more than a cell across, with this colour:
        # the board's own background between its tiles
        share = 0.0
        for j in range(1, n):
            if j == i:
                continue
            xj, yj, wj, hj, aj = (int(v) for v in stats[j])
            if max(wj, hj) < MIN_SPAN * PANEL_CELL or aj < cell_area or not inside[yj + hj // 2, xj + wj // 2]:
                continue
            cj = np.median(lab[comp == j], axis=0)
            if np.linalg.norm(cj - med) < BOARD_COLOUR:
                share = max(share, aj / cell_area)
        board_like = left < LEFT_MIN or share > 0
        around = ~inside & ~full
        near_around = float((np.linalg.norm(lab[around] - med, axis=1) < COLOUR_NEAR).mean()) if around.any() else 0.0
        if debug:
            print(f"  region {i}: box {(x, y, cw, ch)} cells {area / cell_area:.1f} solidity {solidity:.2f} "
                  f"coherent {coherent:.2f} bare {bare:.2f} colour {np.round(med, 1)} board-share {share:.2f} "
                  f"around {near_around:.2f} covered {covered}")
        if solidity < SOLIDITY or coherent < COHERENT or board_like or near_around >= AROUND_SHARE or bare < BARE:
            continue
        bbox = (int(rx0 + x / sx), int(ry0 + y / sy), int(rx0 + (x + cw) / sx), int(ry0 + (y + ch) / sy))
        rest = lab[inside & ~full]
        bright = float(np.percentile(rest[:, 0], 95)) if rest.size else 0.0
        out.append(Panel(bbox, covered, float(med[0]) - bright >= DIM_GAP, (float(med[0]), float(med[1]), float(med[2]))))
    return out


def _covered_cells(full: np.ndarray, x0: int, y0: int, x1: int, y1: int, rows: int, cols: int, margin: int = 1) -> int:
    """Cells of the board and of its `margin` cells around at least half under the panel."""
    px, py = (x1 - x0) / cols, (y1 - y0) / rows
    n = 0
    for r in range(-margin, rows + margin):
        for c in range(-margin, cols + margin):
            a, b = int(round(y0 + r * py)), int(round(y0 + (r + 1) * py))
            u, v = int(round(x0 + c * px)), int(round(x0 + (c + 1) * px))
            a, b, u, v = max(a, 0), min(b, full.shape[0]), max(u, 0), min(v, full.shape[1])
            if b > a and v > u and full[a:b, u:v].mean() >= 0.5:
                n += 1
    return n




def covering_overlay(frame: np.ndarray, board: BoardFind) -> str | None:
    """Why `board` cannot be calibrated from `frame` because something covers it (a
    dialog or panel over part of it, or a popup over a dimmed screen), or None."""
    panels = find_panels(frame, board)
    if not panels:
        return None
    p = max(panels, key=lambda q: q.cells)
    where = f"the {board.rows}x{board.cols} board at {list(board.bbox)}"
    if p.dimmed:
        return f"the screen is dimmed under an overlay: a popup at {list(p.bbox)} covers {p.cells} cells of and around {where}"
    return f"a dialog at {list(p.bbox)} covers {p.cells} cells of and around {where}"


def check_not_covered(frame: np.ndarray, board: BoardFind) -> None:
    """Raise CoveredBoardError when something covers `board` (see covering_overlay)."""
    reason = covering_overlay(frame, board)
    if reason is not None:
        raise CoveredBoardError(reason)


# -- unsettled cells -------------------------------------------------------------------------


def object_masks(lab: np.ndarray) -> np.ndarray:
    """`agent.vision.layers.object_mask` of every cell at once: (n, s, s, 3) -> (n, s, s)
    bool (the same background test, the distances by one batched product)."""
    n, s = lab.shape[:2]
    a, b = RING, s - 1 - RING
    ring = np.concatenate(
        [lab[:, a, a : b + 1], lab[:, b, a : b + 1], lab[:, a + 1 : b, a], lab[:, a + 1 : b, b]], axis=1
    ).astype(np.float32)  # (n, R, 3)
    med = np.median(ring, axis=1, keepdims=True)
    inlier = np.linalg.norm(ring - med, axis=2) < RING_INLIER  # (n, R)
    flat = lab.reshape(n, s * s, 3).astype(np.float32)
    pp = (flat * flat).sum(axis=2)[:, :, None]
    qq = np.where(inlier, (ring * ring).sum(axis=2), np.float32(1e12))[:, None, :]
    d2 = pp + qq - 2.0 * np.matmul(flat, ring.transpose(0, 2, 1))
    return cast(np.ndarray, (d2.min(axis=2) >= BACKGROUND * BACKGROUND).reshape(n, s, s))


def _extent(mask: np.ndarray) -> tuple[int, int, int, int] | None:
    """(top, bottom, left, right) margins of a piece's mask in its cell, in samples."""
    s = mask.shape[0]
    rows = np.flatnonzero(mask.sum(axis=1) >= 2)
    cols = np.flatnonzero(mask.sum(axis=0) >= 2)
    if rows.size == 0 or cols.size == 0:
        return None
    return int(rows[0]), int(s - 1 - rows[-1]), int(cols[0]), int(s - 1 - cols[-1])


def _sharpness(lab: np.ndarray, margin: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, 2) edge sharpness across x and y, and (n,) L range, of every cell's inner part:
    the bright end of the L gradient along each axis over the L range (a blurred edge
    spreads the same step over more samples; motion blur along one axis only)."""
    n, s = lab.shape[:2]
    lum = np.ascontiguousarray(lab[:, margin : s - margin, margin : s - margin, 0]).reshape(n, -1)
    k = s - 2 * margin
    flat = lum.reshape(n * k, k)
    gx = np.abs(cv2.Sobel(flat, cv2.CV_32F, 1, 0, ksize=3)).reshape(n, k, k)[:, 1:-1, 1:-1].reshape(n, -1)
    gy = np.abs(cv2.Sobel(flat, cv2.CV_32F, 0, 1, ksize=3)).reshape(n, k, k)[:, 1:-1, 1:-1].reshape(n, -1)
    lo, hi = np.percentile(lum, (5, 95), axis=1)
    rng = hi - lo
    top = np.stack([np.percentile(gx, 95, axis=1), np.percentile(gy, 95, axis=1)], axis=1) / 8.0
    return top / np.maximum(rng, 1.0)[:, None], rng


def unsettled_mask(unsettled: dict[tuple[int, int], str], rows: int, cols: int) -> np.ndarray:
    """The cells of `unsettled` as a (rows, cols) mask, as clustering takes them."""
    mask = np.zeros((rows, cols), bool)
    for r, c in unsettled:
        mask[r, c] = True
    return mask


def unsettled_cells(cells: CellSamples, rows: int, cols: int, holes: np.ndarray | None = None) -> dict[tuple[int, int], str]:
    """Cells whose piece is moving or covered, with the reason: "offset" (off its cell's
    centre, mid-fall or mid-swap) or "blur" (motion blur). See the module docstring."""
    lab = cells.lab
    n, s = lab.shape[:2]
    skip = np.zeros(n, bool) if holes is None else np.asarray(holes, bool).ravel()
    lop = np.full((n, 2), np.nan)
    masks = object_masks(lab)
    for i in range(n):
        if skip[i]:
            continue
        m = masks[i]
        m[[0, -1], :] = False
        m[:, [0, -1]] = False  # the ring is where the background was read
        if m.mean() < MIN_OBJECT:
            continue
        e = _extent(m)
        if e is None:
            continue
        lop[i] = ((e[0] - e[1]) / s, (e[2] - e[3]) / s)
    out: dict[tuple[int, int], str] = {}
    if np.isfinite(lop[:, 0]).sum() < MIN_PIECES:
        return out
    typical = np.nanmedian(lop, axis=0)
    sharp, rng = _sharpness(lab, cells.margin)
    like = _look_alikes(lab, cells.margin, np.isfinite(lop[:, 0]) & (rng >= MIN_RANGE) & ~skip)
    for i in range(n):
        if not np.isfinite(lop[i, 0]):
            continue
        off = np.abs(lop[i] - typical)
        if (off >= OFFSET_SHARE).any() and (np.abs(lop[i])[off >= OFFSET_SHARE] >= OFFSET_SHARE).any():
            out[divmod(i, cols)] = "offset"
        elif rng[i] >= MIN_RANGE and like[i].size and (sharp[i] < BLUR_SHARE * sharp[like[i]].min(axis=0)).any():
            out[divmod(i, cols)] = "blur"
    return out


def _look_alikes(lab: np.ndarray, margin: int, usable: np.ndarray) -> list[np.ndarray]:
    """For each cell, the LOOK_ALIKES usable cells nearest to it in mean colour (blur
    keeps a cell's mean colour: its look-alikes are the same piece, sharp)."""
    n, s = lab.shape[:2]
    mean = lab[:, margin : s - margin, margin : s - margin].reshape(n, -1, 3).mean(axis=1)
    d = np.linalg.norm(mean[:, None] - mean[None], axis=2)
    d[:, ~usable] = np.inf
    np.fill_diagonal(d, np.inf)
    d[d >= LIKE_NEAR] = np.inf
    order = np.argsort(d, axis=1)[:, :LOOK_ALIKES]
    out = [o[np.isfinite(d[i, o])] for i, o in enumerate(order)]
    return [o if o.size >= MIN_LIKE else o[:0] for o in out]
