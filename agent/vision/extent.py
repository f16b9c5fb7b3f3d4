"""Which rows and columns of a placed lattice are the board, and which cells are holes.

A cell belongs to the board when it is one of the board's kinds: it has a near-duplicate
among the clearly repeating cells where the repetition was first seen (the "core") that
repeat locked to the lattice (see _LOCKED: a texture or picture taken into the core
repeats too, but as much half a cell off). Two views are compared. Whole cells, borders
included: a board's cells share their borders, so an empty slot is told from a plain
strip of the slot's colour beside the board. Cell centres: a tile standing on another
background layer (a candy off its glass tile) is still its kind. Kinds confined to one
row or column are bars and frames, not tiles. The board is the box around its cells,
trimmed until every outer row and column holds some (one-off pieces, a lit tile or a
special, count beside a board cell), and cut at a line across it that holds nothing of
the board (what lies past such a gap is not the board); holes are cells of the box that
look like what lies around it.

The box's edge is where a sharp lattice stops (see _SHARP): cells that change when the
lattice moves half a cell are objects in cells, while a frosted, blurred or textured
surround, a bar or a frame does not change. An outer line of the box needs firm cells
(sharp, or close twins that are not smooth), so a frosted ring that passes as loose
twins of a busy board is peeled off. Obstacles (jars, crates, one per cell) are not
the board's tile kinds and may fill one edge row (a strip by the rule above, and often
flat beside gems); a line beside the box that is mostly sharp cells closely repeating
each other or the board's cells joins the box (an obstacle as sharp as a typical tile,
see _OBSTACLE_SHARP), and so does a line keeping the lattice's rhythm along it, cell by
cell or every second cell (see _Rhythm: ice, stone, shelves two cells wide). Inside the
box a loose twin that is smooth and blunt (no object in its cell) is background, and
judged as a hole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import cv2
import numpy as np
from scipy.sparse.csgraph import connected_components

from agent.vision.lattice import DESC_SAMPLE, Lattice, descriptors, rms_distances, sample_cells
from agent.vision.profile import GRID_MIN

_FLAT = 0.25  # a cell with less contrast than this share of the board's typical cell is flat
_TWIN = 3.0  # near-duplicate: within this many times the typical nearest-neighbour distance
_TWIN_FLOOR = 3.0  # Lab units: never stricter than screenshot noise
# An object the board repeats is far nearer its twin than anything outside (crates:
# 0.1-1.6 apart, 20+ from the scene); two cut corners over a smooth scene are near each
# other only about as near as the scene beside them (2.2-2.4 apart, 4-7 from the scene).
_REPEATED = 3.0
# ... and it is an object: a crate has a border, grain, a line across (the family's
# crates 0.19 or more of the board's typical roughness, see _roughness), while a scene
# far out of focus is a plane of colour over two cells side by side (0.02-0.08 where
# such twins made the sky beside a board a kind of tiles). Plainer than this, a twin
# proves nothing.
_PLAIN = 0.12
_TWIN_SHARE = 0.3  # ... or than this share of the typical distance between two cells
_CENTRE_SHARE = 0.15  # the same for cell centres: a small patch, so a smaller share
_OBJECT_CONTRAST = 6.0  # Lab units: a centre fainter than this holds no tile
_STRIP = 0.8  # a kind with this share of its cells in one line is a strip, not tiles
_MIN_ROW_CELLS = 2  # an outer row or column needs this many board cells
_MIN_DENSITY = 0.5  # board cells per cell of the box
# A hole is also smooth: the background behind a board is a picture in its own right,
# but over one cell it is (nearly) a plane of colour, while a tile has an outline, a slot
# edge, a piece on top. Smooth: what a plane fit leaves of the whole cell is under this
# share of what it leaves of the board's typical cell. Measured: holes over flat,
# gradient and out-of-focus backgrounds and Candy Crush's holes 0.05-0.33; tiles 0.54 or
# more (the Bejeweled 3 hypercube 0.54, synthetic one-off tiles 0.7), except plain tiles
# that fill their cell (Candy Crush's bubblegum 0.22), which look nothing like the outside.
_SMOOTH = 0.4
# A smooth cell needs only to be about as near the outside as the board (whole cell):
# behind the middle of a board a scene out of focus shows other colours than around it
# (measured up to 1.3), while plain tiles are far from it (the bubblegum 13).
_SMOOTH_RATIO = 2.0  # (the old test, clearly nearer the outside, 0.75, missed most of those)
# The board's edge is where a sharp lattice stops. Sharpness: how much a whole cell
# changes when the lattice moves half a cell along x, and along y (the lesser), as a
# share of the board's typical cell. A tile, a slot, an obstacle, is an object in its
# cell: moved half a cell, the view shows the gap between two. A bar or a frame runs
# along its line (moved along it, nothing changes) and a frosted or blurred surround is
# smooth (nothing changes either way). Measured on the true cells of the six real shots,
# six Bejeweled Blitz crops and the simulator: board cells 0.41 or more (5th percentiles
# 0.52-0.79), Color Lines' empty cells 0.15 (which repeat exactly); the ring of cells
# just outside a board 0.00-0.30 (medians 0.00-0.30), a frosted ring taken as board
# 0.20-0.31; the crates and jars of tests/unit/test_extent.py pass (a crate drawn with
# hairline edges, 0.37, did not: an obstacle needs a visible outline).
_SHARP = 0.5
# A cell that is not sharp still holds the box's edge if it is a close twin (within this
# share of the strict twin limit) of the core's repeating cells and not smooth (an empty
# slot of a grid). Measured: board cells mostly under 0.4; a frosted ring's cells
# 0.5-0.96; smooth background next to a board can be close, so smoothness decides.
_CLOSE = 0.5
# An obstacle line (jars along an edge row) joins the box when this share of it is board
# cells or obstacle cells (sharp, a close twin of another such cell or of a board cell).
# Measured: half let a row of round buttons (3 of 8 cells, at two cells' pitch) under a
# board join it, with two loose twins; obstacle rows drawn in the tests fill their line.
_LINE_SHARE = 0.75
# An obstacle is an object in its cell as much as a tile is: it must be as sharp as a
# typical board cell, not just the board's least. Measured: the crates and jars of
# tests/unit/test_extent.py 1.0 or more where they decide a line; quarters of round
# buttons centred on the lattice's corners (a row of them under a board) 0.5-0.6.
_OBSTACLE_SHARP = 0.8
# A line of one obstacle per cell (ice, stone, crates side by side over a whole outer
# column) is no tile kind and its cells are blunt across their common edges, but it keeps
# the lattice's rhythm along the line: moved a whole cell along it the view hardly
# changes, moved half a cell it shows the seams between two obstacles. A bar, a frame,
# a frosted or blurred surround, a textured backdrop change as much (or as little) for a
# whole cell as for half. Measured on the edge_columns look-alikes (medians along a line,
# as shares of the board's typical sharpness): obstacle lines half-cell change 0.20-0.69
# and 2.6-56 times their whole-cell change; lines of background, panels and HUD beside
# boards 0.6-1.3 times. A ribbed bar (a thin rib at every column boundary) keeps the
# rhythm too, but its half-cell change is a thin line's; so do the rounded corners of an
# empty board's outer slots seen from the cells beside it, which change by 0.5 Lab units
# where obstacle lines change by 4-18.
_RHYTHM = 2.0
# A line beside the box whose cells pass as loose twins of the board's (a dark panel's
# margin over a textured backdrop) still joins it only when it is a line of the grid:
# sharp on the lattice, or rhythmic along it (a row of like empty slots repeats exactly).
# Measured on the crates look-alikes (medians along a line, as shares of the board's
# typical sharpness): such margins 0.06-0.10, the board's own outer lines 0.9 or more;
# Color Lines' empty cells 0.15 (see _SHARP); a ring of cells just outside a board up to 0.30.
_LINE_SHARP = 0.12
_RHYTHM_SHARP = 0.15
_RHYTHM_LAB = 2.5
# ... and every cell of such a line holds something: obstacles fill the line they stand
# on, cell by cell, while round buttons two cells apart (each cell a quarter of one) leave
# blank backdrop between them. Measured: the least cell of the obstacle lines of the
# edge_columns and crates look-alikes 0.17 or more; the backdrop between buttons 0.00-0.01.
_RHYTHM_FILL = 0.08
# ... and in absolute terms (Lab units): a board of empty slots is so blunt that the
# backdrop beside quarters of round buttons centred on the lattice's corners, which
# changes by noise when moved, came to a tenth of its sharpness. Measured: the least cell
# of the obstacle lines of the four uneven look-alike families 3.2 or more; that backdrop
# under a board of empty slots (test_calibrate) 0.09.
_RHYTHM_FILL_LAB = 1.0
# ... and the rhythm fills the line's cells, not just their side along the box: a lattice
# a shade off the board's pitch puts a sliver of the board's outer slots into the line of
# backdrop beside it, which then keeps the rhythm by that sliver alone. Measured (median
# half-cell change along the line of the cells' far halves, as a share of the board's
# typical sharpness): such a line of backdrop 0.05; the obstacle lines that decide the
# look-alike tests (edge_columns, crates, cut_corners, frosted panels) 0.18 or more.
_RHYTHM_FAR = 0.1
# A reference cell of the board's kinds repeats locked to the lattice: it and its nearest
# twin a whole number of cells away are nearer each other than to themselves moved half a
# cell, whichever of the four ways (see _SHARP; a hole of the backdrop in a cut corner
# changes as much as a tile when moved onto the tiles beside it, but not when moved away
# from them). A busy texture, a blurred picture or a frosted surround looks about
# as much like itself moved half a cell as like any other patch of it, so its cells, which
# repeat each other loosely wherever the core takes some in, are no reference. Measured
# (half-cell change over nearest repeat, core cells that repeat): the frosted_edge and
# cut_corners look-alikes' tiles 2.2 or more at the 1st percentile (median 23); cells of
# the textures, pictures and panels around them median 1.1, 90th percentile 2.2 (so both
# of a pair: one texture cell in ten passes alone, and a few made references enough for
# all of the texture to pass as their twins).
_LOCKED = 2.0
_CROSS4 = cv2.getStructuringElement(cv2.MORPH_CROSS, (3, 3))


def _contrast(cells: np.ndarray) -> np.ndarray:
    """Spread of each sampled cell (rows*cols,): how much is going on inside it."""
    r, c = cells.shape[:2]
    inner = cells[:, :, 1:-1, 1:-1].reshape(r * c, -1, cells.shape[-1])
    return cast(np.ndarray, np.sqrt(inner.var(axis=1).sum(axis=1)))


def _nearest(d: np.ndarray) -> np.ndarray:
    d = d.copy()
    np.fill_diagonal(d, np.inf)
    return cast(np.ndarray, d.min(axis=1))


class _Twins:
    """Which cells have a near-duplicate among the clearly repeating cells of the core.

    The reference is the core cells that clearly repeat (tile types and empty slots);
    loners such as holes showing the background behind an irregular board are left out,
    or the background around the board would count as board. A cell's twin must be
    nearer than the spread of one tile type (a few typical nearest-neighbour distances;
    outer cells differ a little more, their border ring holds the board's edge) or a
    share of the typical distance between two cells, whichever is larger.
    """

    def __init__(
        self,
        desc: np.ndarray,
        contrast: np.ndarray,
        inside: np.ndarray,
        share: float,
        valid: np.ndarray | None = None,
        channels: int = 3,
        forgive: bool = False,
        shift: np.ndarray | None = None,
        allowed: np.ndarray | None = None,
    ) -> None:
        self.desc = desc
        self.contrast = contrast
        self.typical_contrast = float(np.median(contrast[inside]))
        solid = contrast >= _FLAT * self.typical_contrast
        partial = np.zeros(len(desc), bool) if valid is None else ~valid.all(axis=1)
        core_idx = np.flatnonzero(inside & solid & ~partial)
        self.repeats = False
        self.twin = np.zeros(len(desc), bool)
        self.typical_nn, self.pair = np.inf, 0.0
        self.limit = self.strict_limit = _TWIN_FLOOR
        self.ref = np.zeros(0, np.int64)
        self.nn = np.full(len(desc), np.inf)
        self.nearest = np.zeros(len(desc), np.int64)
        self.kind_of_ref = np.zeros(0, np.int64)
        self.unlocked = np.zeros(len(desc), bool)
        self.locked = np.zeros(len(desc), bool)  # core cells that passed (with `shift`)
        if core_idx.size < 4:
            return
        dc = rms_distances(desc[core_idx])
        nn_core = _nearest(dc)
        self.pair = float(np.median(dc[np.triu_indices(core_idx.size, 1)]))
        self.typical_nn = float(np.median(nn_core))
        self.repeats = self.typical_nn <= 0.6 * self.pair
        keep = nn_core <= max(_TWIN_FLOOR, _TWIN * self.typical_nn)
        if shift is not None:  # see _LOCKED: a cell and its nearest twin alike
            mate = core_idx[np.argmin(dc + np.diag(np.full(core_idx.size, np.inf)), axis=1)]
            locked = np.minimum(shift[core_idx], shift[mate]) >= _LOCKED * nn_core
            self.unlocked[core_idx[~locked]] = True
            self.locked[core_idx[locked]] = True
        if allowed is not None:
            keep &= allowed[core_idx]
        keep &= ~self.unlocked[core_idx]
        ref = core_idx[keep]
        # (never as far as half the typical pair: when the board's own cells differ that
        # much, as where a busy background shows between tiles, everything would be a twin)
        self.limit = max(_TWIN_FLOOR, min(_TWIN * self.typical_nn, 0.5 * self.pair), share * self.pair)
        # the limit without the spread term: for cells judged on something else as well
        self.strict_limit = max(_TWIN_FLOOR, share * self.pair)
        if ref.size == 0:
            return
        if forgive:
            d = side_forgiving_distances(desc, desc[ref], int(round(np.sqrt(desc.shape[1] / channels))), channels)
        else:
            d = rms_distances(desc, desc[ref])
        d[ref, np.arange(ref.size)] = np.inf  # a cell is not its own twin
        if valid is not None:  # (without it no cell is partial)
            for i in np.flatnonzero(partial):  # cut by the screen's edge: compare what is there
                m = valid[i]
                d[i] = np.sqrt(((desc[ref][:, m] - desc[i, m]) ** 2).mean(axis=1))
        self.nn = d.min(axis=1)
        self.twin = solid & (self.nn < self.limit)
        # kinds: reference cells joined by being close twins of each other (the strict
        # limit: with the lenient one a bar next to the board could chain into its kinds)
        self.ref = ref
        self.nearest = d.argmin(axis=1)
        joined = rms_distances(desc[ref]) < max(_TWIN_FLOOR, _TWIN * self.typical_nn)
        _, self.kind_of_ref = connected_components(joined, directed=False)


def side_forgiving_distances(a: np.ndarray, b: np.ndarray, sample: int, channels: int) -> np.ndarray:
    """RMS distance between sampled cells (rows of a and b), forgiving one outer strip:
    the least of the distance over the whole cell and over the cell without its top,
    bottom, left or right quarter. A board's edge row cut short by the capture, or
    a cell whose border on one side holds the board's frame, still matches its kind; a
    strip of other stuff that only looks alike on some sides does not."""
    shape = (sample, sample, channels)
    strip = max(1, sample // 4)
    masks = [np.ones(shape, bool)]
    for side in range(4):
        m = np.ones(shape, bool)
        if side == 0:
            m[:strip] = False
        elif side == 1:
            m[-strip:] = False
        elif side == 2:
            m[:, :strip] = False
        else:
            m[:, -strip:] = False
        masks.append(m)
    out: np.ndarray | None = None
    for m in masks:
        flat = m.ravel()
        d = rms_distances(a[:, flat], b[:, flat])
        out = d if out is None else np.minimum(out, d)
    assert out is not None  # masks is never empty
    return out


def _on_image(lat: Lattice, w: int, h: int, sample: int, channels: int) -> np.ndarray:
    """(rows*cols, sample*sample*channels): which descriptor components lie on the image."""
    u = (np.arange(sample) + 0.5) / sample
    xs = lat.x0 + (np.arange(lat.cols)[:, None] + u[None, :]) * lat.px  # (cols, s)
    ys = lat.y0 + (np.arange(lat.rows)[:, None] + u[None, :]) * lat.py  # (rows, s)
    okx = (xs >= 0) & (xs < w)
    oky = (ys >= 0) & (ys < h)
    ok = oky[:, None, :, None] & okx[None, :, None, :]  # (rows, cols, s, s)
    return np.repeat(ok.reshape(lat.rows * lat.cols, sample * sample), channels, axis=1)


def _without_strips(view: _Twins, rows: int, cols: int) -> np.ndarray:
    """The view's twins minus those whose kind lies (almost) all in one row or column.

    Tile kinds recur all over a board; a run of identical cells confined to one line is
    a bar, a toolbar or a frame beside it (it repeats, so it can look like a tile kind)."""
    keep = view.twin.copy()
    if view.ref.size == 0:
        return keep
    r_of = np.arange(rows * cols) // cols
    c_of = np.arange(rows * cols) % cols
    kind = view.kind_of_ref[view.nearest]  # each cell's kind through its nearest reference
    for k in np.unique(kind[view.twin]):
        members = view.twin & (kind == k)
        in_line = max(np.bincount(r_of[members]).max(), np.bincount(c_of[members]).max())
        if in_line >= _STRIP * members.sum():
            keep &= ~members
    return keep


@dataclass(frozen=True)
class Extent:
    lattice: Lattice  # crop coordinates, only the board's rows and columns
    occupied: np.ndarray
    holes: np.ndarray
    score: float
    touches: tuple[bool, bool, bool, bool]  # left, top, right, bottom edge of the crop


def board_extent(blur: np.ndarray, core: tuple[float, float, float, float], x0: float, y0: float, px: float, py: float) -> Extent | None:
    """The board's rows and columns on a lattice through (x0, y0); None if there is no board."""
    h, w = blur.shape[:2]
    # every lattice cell at least 3/4 inside the crop
    c_lo = -int(np.floor((x0 + 0.25 * px) / px))
    r_lo = -int(np.floor((y0 + 0.25 * py) / py))
    c_hi = int(np.floor((w - x0 + 0.25 * px) / px))
    r_hi = int(np.floor((h - y0 + 0.25 * py) / py))
    lat = Lattice(x0 + c_lo * px, y0 + r_lo * py, px, py, c_hi - c_lo, r_hi - r_lo)
    if lat.cols < GRID_MIN or lat.rows < GRID_MIN:
        return None
    cells = sample_cells(blur, lat)
    cx = lat.x0 + (np.arange(lat.cols) + 0.5) * px
    cy = lat.y0 + (np.arange(lat.rows) + 0.5) * py
    inside = ((cx[None, :] >= core[0]) & (cx[None, :] < core[2]) & (cy[:, None] >= core[1]) & (cy[:, None] < core[3])).ravel()
    if inside.sum() < 4:
        return None
    # Two views of a cell. Whole, borders included: a board's cells share their borders
    # (that is how the phase was chosen), while a plain strip of the right colour beside
    # the board does not. Centre only: a tile standing on another background layer (a
    # candy off its glass tile) is still its kind, and has something in the middle.
    valid = _on_image(lat, w, h, cells.shape[2], cells.shape[-1])
    whole_desc = descriptors(cells, inset=0)
    sx, sy, least = _shift_change(blur, lat, whole_desc)
    whole = _Twins(whole_desc, _contrast(cells), inside, _TWIN_SHARE, valid, cells.shape[-1], True,
                   shift=least)  # fmt: skip
    # a bare centre is a small patch that much of a screen can match: less leniency
    centre = _Twins(descriptors(cells, inset=2), _contrast(cells[:, :, 1:-1, 1:-1]), inside, _CENTRE_SHARE,
                    allowed=whole.locked)  # fmt: skip
    if not whole.repeats:
        return None  # the cells do not repeat: not a board
    # a centre holds something when it is not flat, and not faint in absolute terms
    has_object = centre.contrast >= max(_OBJECT_CONTRAST, _FLAT * centre.typical_contrast)
    whole_ok = _without_strips(whole, lat.rows, lat.cols)
    centre_ok = _without_strips(centre, lat.rows, lat.cols)
    # A cell with something in it whose centre is not one of the board's kinds gets no
    # benefit of the board's own spread: where a busy background shows between the tiles,
    # that spread is large and a bar beside the board would pass on it.
    whole_ok &= ~has_object | centre_ok | (whole.nn < whole.strict_limit)
    board = (whole_ok | (centre_ok & has_object)).reshape(lat.rows, lat.cols)
    typical_nn, pair = whole.typical_nn, whole.pair
    # The box's edge holds only firm cells (a frosted surround that passes as a loose twin
    # is peeled off line by line); then lines of obstacles beside the box join it; inside
    # it, a board cell that is smooth and blunt is judged as a possible hole (below).
    if board.any():
        sharp = np.minimum(sx, sy).reshape(lat.rows, lat.cols)
        sharp = sharp / max(float(np.median(sharp[board])), 1e-6)
        # close, and locked to the lattice as the references are (see _LOCKED): a margin
        # of the panel over a textured backdrop can come as near the board's plainer cells
        # (a grey slab on the panel) as its empty slots come to each other
        close = (whole.nn < _CLOSE * whole.strict_limit) & (least >= _LOCKED * whole.nn)
        close = close.reshape(lat.rows, lat.cols)
        rough = _roughness(whole.desc).reshape(lat.rows, lat.cols)
        typical_rough = max(float(np.median(rough[board])), 1e-6)
        smooth = rough < _SMOOTH * typical_rough
        # A smooth close twin holds the box's edge too when it is an object the board
        # repeats exactly, with something in its middle (crates side by side are blunt
        # across their seams and plain inside, but each is the other's copy; a scene far
        # out of focus repeats too, but is plainer, see _PLAIN). Measured: world 6's
        # level 2 was found a column short, its gem and two crates among cut corners.
        copied = ((whole.nn < _TWIN_FLOOR).reshape(board.shape) & has_object.reshape(board.shape)
                  & (rough >= _PLAIN * typical_rough))
        firm = board & ((sharp >= _SHARP) | (close & (~smooth | copied)))
        # One-off pieces (a lit tile, a special, the one tile of its colour) are no twin of
        # the board's kinds, but objects in their cells as its cells are (sharp, not
        # smooth, something in the middle): beside a board cell they keep a sparse outer
        # line of a board with cut corners in the box.
        pieces = ~board & has_object.reshape(board.shape) & (sharp >= _SHARP) & ~smooth
        obstacles = _obstacle_cells(board, whole.desc, sharp, _CLOSE * whole.strict_limit)
        scale = max(float(np.median(np.minimum(sx, sy).reshape(board.shape)[board])), 1e-6)
        rhythm = _Rhythm(whole.desc.reshape(lat.rows, lat.cols, -1), sx.reshape(board.shape), sy.reshape(board.shape),
                         scale, blur, lat)  # fmt: skip
    else:
        obstacles, firm, rhythm, pieces = np.zeros_like(board), board, None, np.zeros_like(board)
        sharp, smooth = np.zeros(board.shape), np.zeros_like(board)

    r0, r1, c0, c1 = _one_block(_trim(board, pieces), firm | obstacles, whole_ok.reshape(board.shape),
                                inside.reshape(board.shape))  # fmt: skip
    if r1 - r0 < GRID_MIN or c1 - c0 < GRID_MIN:
        return None
    a0, a1, b0, b1 = _trim(firm[r0:r1, c0:c1], pieces[r0:r1, c0:c1])
    r0, r1, c0, c1 = r0 + a0, r0 + a1, c0 + b0, c0 + b1
    if r1 - r0 < GRID_MIN or c1 - c0 < GRID_MIN:
        return None
    # A line joins by its firm cells and obstacles, not by loose twins: those were peeled
    # off just above (a textured backdrop, a panel's margin that passes as twins of a
    # busy board's cells), and counting them again grew the box back over them.
    g0, g1, h0, h1 = _grow_lines((r0, r1, c0, c1), firm | obstacles, rhythm)
    if (g0, g1, h0, h1) != (r0, r1, c0, c1):
        added = np.ones_like(board)
        added[r0:r1, c0:c1] = False
        board = board | ((obstacles | (rhythm.cells if rhythm is not None else False)) & added)
        r0, r1, c0, c1 = g0, g1, h0, h1
    # A cell that is smooth and blunt holds no object: as a loose twin of the board's
    # cells it is background (a hole over a scene out of focus next to the hole's
    # neighbours' slots), so _holes judges it. Tiles are sharp, empty slots not smooth.
    # Measured: 16 -> 17 of 20 scenes right in test_interior_holes_over_an_out_of_focus_scene.
    board = board & ~(smooth & (sharp < _SHARP))
    occupied = board[r0:r1, c0:c1]
    if (occupied | pieces[r0:r1, c0:c1]).mean() < _MIN_DENSITY:
        return None
    # Smooth cells that are sharp only by an edge across them stay board above; at the
    # outline they may be the picture behind with the panel's border across it (a cut
    # corner), so _holes judges them too.
    # (smooth next to the cells that hold an object: where the corners look alike, they
    # are board cells too and pull the median down)
    objects = board & has_object.reshape(board.shape)
    soft = board & smooth
    if objects.any():
        soft |= board & (rough < _SMOOTH * float(np.median(rough[objects])))
    holes = _holes(whole.desc.reshape(lat.rows, lat.cols, -1), board, r0, r1, c0, c1, soft[r0:r1, c0:c1])
    strength = 1.0 - typical_nn / max(pair, 1e-6)
    touches = (c0 == 0, r0 == 0, c1 == lat.cols, r1 == lat.rows)
    return Extent(lat.sub(c0, r0, c1 - c0, r1 - r0), occupied, holes, float(occupied.sum() * strength), touches)


def _holes(desc: np.ndarray, board: np.ndarray, r0: int, r1: int, c0: int, c1: int,
           soft: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """Cells of the box that are holes in an irregular board: they show what lies
    behind the board instead of a tile.

    A hole has no twin among the board's cells. One joined to the edge of the box
    through other such cells (the shape of an irregular board eats in from its outline)
    is a hole when it looks more like the lattice cells just outside the box near it
    than like any board cell. A one-off tile (a single special gem, a lone ball on an
    empty board) fails that: it shares the board's slot and light and so is nearer to
    the board's cells than to the outside.

    Edge holes are judged growing in from the outline: a cell once it touches the box's
    edge or a hole found, so a tile joined to the edge only through other unmatched
    cells is judged on its own, not carried in by the chain.

    A hole inside the board (not joined to the edge) is where a one-off tile usually
    sits. It must be smooth (a plane of colour explains the whole cell, see _roughness):
    the background behind a board is a picture, but over one cell it barely varies, while
    a tile has an outline, a slot's edge, a piece on top; and it must be about as near
    what lies outside the board (the cells around the box and the holes found) as any
    board cell. A scene out of focus behind the board shows other colours in its middle
    than around it, so nearness alone cannot tell; smoothness can. Each hole found joins
    the outside its neighbours are compared with. A cell that repeats another such cell
    exactly (within screenshot noise, _TWIN_FLOOR), while nothing outside does, is an
    object the board repeats (a block of plain crates, no tile kind of the board), not
    the picture behind it: two holes over a scene show two parts of it (measured: 4.9 or
    more apart on the out-of-focus scenes of test_calibrate; the crates of a block 0.1-1.6).
    """
    rows, cols = board.shape
    holes = np.zeros((r1 - r0, c1 - c0), bool)
    alone = ~board[r0:r1, c0:c1]
    # soft cells (board cells that are smooth) join the cells judged only where they reach
    # the outline: there they may be background the board's outline cuts across
    lonely = alone | (soft if soft is not None else False)
    if not lonely.any():
        return holes
    n_lab, comp = cv2.connectedComponents(lonely.astype(np.uint8), connectivity=4)
    edge_comps = set(np.unique(np.concatenate([comp[0], comp[-1], comp[:, 0], comp[:, -1]]))) - {0}
    candidates = np.isin(comp, list(edge_comps)) & lonely
    lonely = alone | candidates
    ring = np.zeros_like(board)
    ring[max(r0 - 1, 0) : min(r1 + 1, rows), max(c0 - 1, 0) : min(c1 + 1, cols)] = True
    ring[r0:r1, c0:c1] = False
    if not ring.any():
        return holes
    ring_rc = np.argwhere(ring)
    inner = desc[r0:r1, c0:c1]
    board_desc = inner[~lonely]
    around = desc[ring_rc[:, 0], ring_rc[:, 1]]
    if board_desc.size:
        roughness = _roughness(inner.reshape(-1, inner.shape[-1])).reshape(lonely.shape)
        typical = max(float(np.median(roughness[~lonely])), 1e-6)
        smooth, plain = roughness < _SMOOTH * typical, roughness < _PLAIN * typical
        scenic = _roughness(around) < _SMOOTH * typical  # the cells around that may be the scene
    else:
        smooth, plain, scenic = lonely, np.zeros_like(lonely), np.zeros(len(around), bool)

    def repeated_inside(r: int, c: int, to_outside: float) -> bool:
        # repeated on the board within screenshot noise, and like nothing outside it: an
        # obstacle the board repeats (a block of crates), whether or not it meets the edge
        others = lonely & ~holes
        others[r, c] = False
        if not others.any() or plain[r, c]:
            return False
        twin = float(rms_distances(inner[r, c][None], inner[others]).min())
        return twin < _TWIN_FLOOR <= to_outside and _REPEATED * twin <= to_outside

    def like_outside(r: int, c: int) -> bool:  # a smooth cell about as near the outside as the board
        if not smooth[r, c]:
            return False
        cell = inner[r, c][None]
        outside = np.concatenate([around, inner[holes]])
        to_outside = float(rms_distances(cell, outside).min())
        if repeated_inside(r, c, to_outside):
            return False
        # an unmatched look nearer an obstacle the board repeats than the scene (a crate
        # with rivets in a block of plain crates) is one more of the board's obstacles
        others = repeated & ~holes
        others[r, c] = False
        if others.any() and float(rms_distances(cell, inner[others]).min()) < to_outside:
            return False
        return bool(to_outside < _SMOOTH_RATIO * rms_distances(cell, board_desc).min())

    # edge holes grow in from the outline: a cell is judged once it touches the box's edge
    # or a hole found (a tile reached only through other unmatched cells is not a hole)
    reach = np.zeros_like(holes)
    reach[0], reach[-1], reach[:, 0], reach[:, -1] = True, True, True, True
    pending = candidates.copy()
    while True:
        todo = pending & reach
        if not todo.any():
            break
        for r, c in np.argwhere(todo):
            gap = np.abs(ring_rc - np.array([r + r0, c + c0])).max(axis=1)
            near = ring_rc[gap <= gap.min() + 1]
            to_outside = rms_distances(inner[r, c][None], desc[near[:, 0], near[:, 1]]).min()
            to_board = rms_distances(inner[r, c][None], board_desc).min() if board_desc.size else np.inf
            # The cells just outside may be no scene at all (a header's badges over a board's
            # top row, none of them smooth): a smooth cell nearer some smooth cell around
            # the box than any board cell is the scene too.
            if not to_outside < to_board and smooth[r, c] and not scenic[gap <= gap.min() + 1].any() \
                    and scenic.any():  # fmt: skip
                to_outside = min(to_outside, rms_distances(inner[r, c][None], around[scenic]).min())
            holes[r, c] = to_outside < to_board and not repeated_inside(r, c, float(to_outside))
        pending &= ~todo
        grown = cv2.dilate(holes.astype(np.uint8), _CROSS4).astype(bool)
        reach |= grown
    interior = lonely & ~candidates if board_desc.size else np.zeros_like(lonely)
    repeated = np.zeros_like(lonely)  # unmatched cells with a twin within noise: obstacles
    if lonely.sum() > 1:
        d = rms_distances(inner[lonely])
        np.fill_diagonal(d, np.inf)
        repeated[lonely] = d.min(axis=1) < _TWIN_FLOOR
        repeated &= ~plain
    while interior.any():  # a hole found is outside too: the picture behind goes on into its neighbours
        found = np.zeros_like(holes)
        for r, c in np.argwhere(interior):
            found[r, c] = like_outside(r, c)
        if not found.any():
            break
        holes |= found
        interior &= ~found
    return holes


def _roughness(desc: np.ndarray) -> np.ndarray:
    """What a plane of colour fitted to each whole-cell descriptor (n, DESC_SAMPLE^2 * C)
    leaves unexplained (RMS, Lab units): near 0 for a smooth patch of background, large
    for a tile (its outline, its slot's edge, the piece on top)."""
    s = DESC_SAMPLE
    n = desc.shape[0]
    v = desc.reshape(n, s * s, -1).astype(np.float64)
    yy, xx = np.mgrid[0:s, 0:s]
    a = np.stack([np.ones(s * s), xx.ravel(), yy.ravel()], axis=1)
    fit = a @ np.linalg.pinv(a)  # projection onto planes
    rest = v - np.einsum("ij,njc->nic", fit, v)
    return cast(np.ndarray, np.sqrt((rest**2).sum(axis=2).mean(axis=1)))


def _shift_change(blur: np.ndarray, lat: Lattice, desc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """How much each whole cell (RMS, Lab units) changes when the lattice is moved half a
    cell along x, and along y (see _SHARP), and the least change of the four ways it can
    move (see _LOCKED). Two more remaps of the blurred crop, a line of cells longer."""
    r, c = lat.rows, lat.cols
    out = []
    for dx, dy in ((0.5, 0.0), (0.0, 0.5)):
        # the views half a cell before each cell and after it, one line of cells longer
        moved = Lattice(lat.x0 - dx * lat.px, lat.y0 - dy * lat.py, lat.px, lat.py, c + (dx > 0), r + (dy > 0))
        d = descriptors(sample_cells(blur, moved), inset=0).reshape(moved.rows, moved.cols, -1)
        before, after = (d[:, :c], d[:, 1:]) if dx > 0 else (d[:r], d[1:])
        own = desc.reshape(r, c, -1)
        out += [np.sqrt(((after - own) ** 2).mean(axis=2)).ravel(), np.sqrt(((before - own) ** 2).mean(axis=2)).ravel()]
    return out[0], out[2], np.minimum.reduce(out)


def _obstacle_cells(board: np.ndarray, desc: np.ndarray, sharp: np.ndarray, limit: float) -> np.ndarray:
    """Cells that are not board cells but could be obstacles in the grid (jars, crates,
    stone blocks): sharp on the lattice (an object in its cell, see _SHARP) and a close
    twin of another such cell or of a board cell (obstacles come in a few looks; a
    frosted or busy surround does not repeat itself that closely while staying sharp).
    Flatness is not asked: a crate filling its cell has less going on than a gem."""
    rows, cols = board.shape
    flat_board = board.ravel()
    cand = (~flat_board) & (sharp.ravel() >= _OBSTACLE_SHARP)
    ok = np.zeros(rows * cols, bool)
    if not cand.any():
        return ok.reshape(rows, cols)
    idx = np.flatnonzero(cand)
    pool = np.flatnonzero(cand | flat_board)
    d = rms_distances(desc[idx], desc[pool])
    d[np.arange(idx.size), np.searchsorted(pool, idx)] = np.inf
    ok[idx[d.min(axis=1) < limit]] = True
    return ok.reshape(rows, cols)


class _Rhythm:
    """Which lines beside the box are a row or column of obstacles by the lattice's
    rhythm along them (see _RHYTHM); `cells` marks the cells of the lines joined.
    `desc` are the whole cells' descriptors (rows, cols, n), `sx` and `sy` their
    half-cell changes (see _shift_change), all in Lab units, `scale` the board's typical
    sharpness in them; `blur` and `lat` the crop and lattice they were measured on."""

    def __init__(self, desc: np.ndarray, sx: np.ndarray, sy: np.ndarray, scale: float, blur: np.ndarray,
                 lat: Lattice) -> None:  # fmt: skip
        self.desc, self.sx, self.sy, self.scale = desc, sx / scale, sy / scale, scale
        self.blur, self.lat = blur, lat
        self.cells = np.zeros(sx.shape, bool)

    def far_seams(self, rows: slice | int, cols: slice | int, side: int) -> float:
        """The median half-cell change along the line of the half of its cells away from
        the box (side: 0 above it, 1 below, 2 left, 3 right), as a share of the board's
        sharpness (see _RHYTHM_FAR)."""
        lat, s = self.lat, DESC_SAMPLE
        if isinstance(rows, int):
            c = cols if isinstance(cols, slice) else slice(cols, cols + 1)
            line = lat.sub(c.start or 0, rows, (c.stop or lat.cols) - (c.start or 0), 1)
            moved = Lattice(line.x0 + 0.5 * line.px, line.y0, line.px, line.py, line.cols, 1)
        else:
            r, col = rows, cols if isinstance(cols, int) else (cols.start or 0)
            line = lat.sub(col, r.start or 0, 1, (r.stop or lat.rows) - (r.start or 0))
            moved = Lattice(line.x0, line.y0 + 0.5 * line.py, line.px, line.py, 1, line.rows)
        own, shifted = sample_cells(self.blur, line), sample_cells(self.blur, moved)
        half = {0: np.s_[:, :, : s // 2], 1: np.s_[:, :, s // 2 :], 2: np.s_[:, :, :, : s // 2], 3: np.s_[:, :, :, s // 2 :]}[side]
        d = own[half] - shifted[half]
        change = np.sqrt((d.reshape(d.shape[0] * d.shape[1], -1) ** 2).mean(axis=1))
        return float(np.median(change)) / self.scale

    def measure(self, rows: slice | int, cols: slice | int) -> _Line | None:
        """A line's measures (see _Line); None when too short."""
        along = self.sx[rows, cols] if isinstance(rows, int) else self.sy[rows, cols]
        d = self.desc[rows, cols]
        if len(d) < GRID_MIN:
            return None
        # each cell against its nearest neighbour one or two cells along the line: a second
        # kind mixed in (a stone among the ice) costs only its own cell, and obstacles
        # two cells wide (shelves) or of two alternating looks keep the rhythm too
        nearer = np.full(len(d), np.inf)
        for k in (1, 2):
            step = np.sqrt(((d[k:] - d[:-k]) ** 2).mean(axis=1)) / self.scale
            nearer[:-k] = np.minimum(nearer[:-k], step)
            nearer[k:] = np.minimum(nearer[k:], step)
        sharp = np.minimum(self.sx[rows, cols], self.sy[rows, cols])
        return _Line(float(np.median(along)), float(np.median(along / np.maximum(nearer, 1e-6))),
                     float(np.median(sharp)), float(sharp.min()))  # fmt: skip

    def blunt(self, rows: slice | int, cols: slice | int) -> bool:
        """A line of loose twins that is no line of the grid: blunt across (see
        _LINE_SHARP) and without the lattice's rhythm along it."""
        m = self.measure(rows, cols)
        return m is not None and m.sharp < _LINE_SHARP and m.ratio < _RHYTHM

    def joins(self, rows: slice | int, cols: slice | int, side: int) -> bool:
        m = self.measure(rows, cols)
        if m is None:
            return False
        ok = (m.seams >= _RHYTHM_SHARP and m.seams * self.scale >= _RHYTHM_LAB and m.ratio >= _RHYTHM
              and m.least >= _RHYTHM_FILL and m.least * self.scale >= _RHYTHM_FILL_LAB
              and self.far_seams(rows, cols, side) >= _RHYTHM_FAR)  # fmt: skip
        if ok:
            self.cells[rows, cols] = True
        return ok


@dataclass(frozen=True)
class _Line:
    """Measures of a line of cells, as shares of the board's typical sharpness."""

    seams: float  # median half-cell change along the line
    ratio: float  # median ratio of that to each cell's change to its nearest neighbour along it
    sharp: float  # median sharpness (the smaller half-cell change of each cell)
    least: float  # the least sharpness of a cell


def _grow_lines(box: tuple[int, int, int, int], cells: np.ndarray, rhythm: _Rhythm | None = None) -> tuple[int, int, int, int]:
    """The box (r0, r1, c0, c1) grown by every line just outside it that is mostly
    `cells`, or a line of obstacles by its rhythm: an edge row of obstacles continues the
    board across its width, while a stray twin or two beside the board does not make a line."""
    r0, r1, c0, c1 = box
    rows, cols = cells.shape
    # A line of obstacles is the board's outer line on its side: past it lie the panel's
    # margin and the backdrop, whose cells can look like twins of the board's once the
    # obstacle line is in, so that side grows on only by rhythm (a second line of them).
    edge = [False] * 4

    def joins(side: int, r: slice | int, c: slice | int) -> bool:
        if not edge[side] and cells[r, c].mean() >= _LINE_SHARE and (rhythm is None or not rhythm.blunt(r, c)):
            return True
        if rhythm is not None and rhythm.joins(r, c, side):
            edge[side] = True
            return True
        return False

    while True:
        grown = False
        if r0 > 0 and joins(0, r0 - 1, slice(c0, c1)):
            r0, grown = r0 - 1, True
        if r1 < rows and joins(1, r1, slice(c0, c1)):
            r1, grown = r1 + 1, True
        if c0 > 0 and joins(2, slice(r0, r1), c0 - 1):
            c0, grown = c0 - 1, True
        if c1 < cols and joins(3, slice(r0, r1), c1):
            c1, grown = c1 + 1, True
        if not grown:
            return r0, r1, c0, c1


Box = tuple[int, int, int, int]  # r0, r1, c0, c1 (exclusive ends)


def _one_block(box: Box, cells: np.ndarray, whole: np.ndarray, core: np.ndarray) -> Box:
    """The box (r0, r1, c0, c1) cut at a line across it that holds none of `cells` (the
    board's firm cells and obstacles), keeping the part that holds most of the core,
    unless the other part has whole twins of the board's cells (`whole`: their borders,
    slots and light too), as a board in two parts split by a row of holes has. What lies
    past such a gap (a row of round counters under the board, whose centres pass for
    tiles) is not the board."""
    r0, r1, c0, c1 = box
    while r1 - r0 > 2 and c1 - c0 > 2:
        here = (r0, r1, c0, c1)
        cut = _cut_at_gap(here, cells, whole, core, 0) or _cut_at_gap(here, cells, whole, core, 1)
        if cut is None:
            break
        r0, r1, c0, c1 = cut
    return r0, r1, c0, c1


def _cut_at_gap(box: Box, cells: np.ndarray, whole: np.ndarray, core: np.ndarray, axis: int) -> Box | None:
    """The box cut at its first gap across `axis` (0: a row, 1: a column) as _one_block
    keeps it, or None when no gap cuts anything off."""
    r0, r1, c0, c1 = box
    lo, hi = (r0, r1) if axis == 0 else (c0, c1)
    sub = cells[r0:r1, c0:c1]
    empty = ~np.asarray(sub.any(axis=1 - axis), bool)
    for g in (np.flatnonzero(empty[1:-1]) + 1).tolist():
        parts = [(lo, lo + g), (lo + g + 1, hi)]
        views = [(slice(a, b), slice(c0, c1)) if axis == 0 else (slice(r0, r1), slice(a, b)) for a, b in parts]
        held = [float(core[v].sum()) + 1e-3 * float(cells[v].sum()) for v in views]
        keep = int(np.argmax(held))
        if int(whole[views[1 - keep]].sum()) >= _MIN_ROW_CELLS:
            continue
        a, b = parts[keep]
        return (a, b, c0, c1) if axis == 0 else (r0, r1, a, b)
    return None


def _trim(board: np.ndarray, pieces: np.ndarray | None = None) -> tuple[int, int, int, int]:
    """The box around the board cells, shrunk until each outer row/column has enough of
    them; `pieces` (one-off pieces, see board_extent) count towards enough beside at
    least one board cell."""
    rows = np.flatnonzero(board.any(axis=1))
    cols = np.flatnonzero(board.any(axis=0))
    if rows.size == 0 or cols.size == 0:
        return 0, 0, 0, 0
    more = np.zeros_like(board) if pieces is None else pieces & ~board
    r0, r1, c0, c1 = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1

    def short(cells: np.ndarray, extra: np.ndarray, need: int) -> bool:
        return bool(cells.sum() == 0 or cells.sum() + extra.sum() < need)

    changed = True
    while changed and r1 > r0 and c1 > c0:
        changed = False
        sub, add = board[r0:r1, c0:c1], more[r0:r1, c0:c1]
        need = min(_MIN_ROW_CELLS, max(1, min(sub.shape) // 3))
        if short(sub[0], add[0], need):
            r0, changed = r0 + 1, True
        elif short(sub[-1], add[-1], need):
            r1, changed = r1 - 1, True
        elif short(sub[:, 0], add[:, 0], need):
            c0, changed = c0 + 1, True
        elif short(sub[:, -1], add[:, -1], need):
            c1, changed = c1 - 1, True
    return int(r0), int(r1), int(c0), int(c1)
