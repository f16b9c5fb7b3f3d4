"""Grouping a board's cells into tile classes without knowing the game.

Cells of one tile type look alike and different types look different, so the cells are
clustered by their feature vectors (`agent.vision.features`) with average-linkage
agglomerative clustering (scipy). Average linkage, unlike k-means, needs no k up front
and keeps one-off tiles (a single special gem, the few balls on a Color Lines board) as
clusters of their own instead of folding them into a big one.

The number of classes is read off the dendrogram: the cut goes into the widest gap
between successive merge heights, measured as a ratio (merges inside a class happen at
noise level, merges between classes far above it; the ratio makes the test independent
of how different a game's tiles are). Of gaps about as wide as the widest, the lowest. Merge heights below NOISE_FLOOR count as the
floor: differences that small are screenshot noise, never two classes.

The cut is made on whole cells, so one tile type standing on different background
layers (glass, jelly, a lit slot) may come out as several clusters; those whose pieces on
top match are joined again afterwards (`agent.vision.layers`).

Empty cells are not a class of their own choosing: a cluster whose cells have nothing
in the middle (a flat centre of a neutral colour, the board's bare slot) is empty, and so is a hole of an
irregular board (found by `agent.vision.locate`). Both are labelled ".".

Classes get letters A, B, C, ... (then a, b, c ...) in reading order of their first cell (row by row, left
to right), so the same board always gets the same letters.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Sequence, cast

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage

from agent.vision.classify import EMPTY_LABEL, UNKNOWN_LABEL, pairwise_distances
from agent.vision.layers import merge_layer_splits

NOISE_FLOOR = 2.5  # Lab RMS units: merges below this are screenshot noise
MIN_GAP = 1.6  # the widest gap must be at least this ratio to split at all
_NEAR_WIDEST = 0.8
EMPTY_CONTRAST = 4.0  # Lab units: a cell centre flatter than this holds no tile ...
# ... unless it is of a vivid colour: boards show their empty slots in neutral colours
# (grey, dark, translucent), and a flat cell of a vivid colour is a plain tile that fills
# its cell. Measured (mean Lab chroma of the centre): empty slots 0-14 (Color Lines,
# the simulated boards, Lights Out's unlit buttons), flat tiles 24-42 (the unseen-screen
# bench's flat squares), tiles with a piece on top far above.
EMPTY_CHROMA = 20.0
# A live frame of a seven-colour game shows each colour in several looks (plain, lit,
# special, mid-spin): 15 to 26 classes were measured on Bejeweled Blitz frames, so the
# letters go on in lower case rather than refuse a board for having many looks.
CLASS_NAMES = string.ascii_uppercase + string.ascii_lowercase


@dataclass(frozen=True, eq=False)
class Clustering:
    """Labels per cell ("." empty or hole), the cluster of each cell (-1 for holes) and the cut."""

    labels: list[list[str]]
    groups: np.ndarray
    threshold: float

    @property
    def classes(self) -> list[str]:
        return sorted({v for row in self.labels for v in row} - {EMPTY_LABEL, UNKNOWN_LABEL})


def cut_height(dist: np.ndarray) -> tuple[np.ndarray, float]:
    """Average-linkage clustering from a square distance matrix: (cluster ids from 0, cut height)."""
    n = len(dist)
    if n == 1:
        return np.zeros(1, dtype=np.int64), 0.0
    z = linkage(dist[np.triu_indices(n, 1)], method="average")
    h = np.maximum(z[:, 2], NOISE_FLOOR)
    ratios = h[1:] / h[:-1]
    if ratios.size == 0 or ratios.max() < MIN_GAP:
        # no clear gap: one class if every merge is small, else nothing merges at all
        t = float(h[-1]) + 1.0 if h[-1] <= MIN_GAP * NOISE_FLOOR else NOISE_FLOOR
    else:
        # the lowest of the near-widest gaps: where two gaps are about as wide, the lower
        # one is the step from noise to the closest pair of classes and the upper one a
        # step between classes (merging two similar tile types is the error to avoid)
        i = int(np.flatnonzero(ratios >= max(MIN_GAP, _NEAR_WIDEST * ratios.max()))[0])
        t = float(np.sqrt(h[i] * h[i + 1]))
    ids = fcluster(z, t, criterion="distance") - 1
    return ids.astype(np.int64), t


def centre_contrast(lab_cells: np.ndarray, inset: float = 0.2) -> np.ndarray:
    """Lab spread inside the middle of each sampled cell (n, s, s, 3) -> (n,)."""
    s = lab_cells.shape[1]
    a = int(round(inset * s))
    inner = lab_cells[:, a : s - a, a : s - a].reshape(len(lab_cells), -1, 3)
    return cast(np.ndarray, np.sqrt(inner.var(axis=1).sum(axis=1)))


def centre_chroma(lab_cells: np.ndarray, inset: float = 0.2) -> np.ndarray:
    """Mean Lab chroma inside the middle of each sampled cell (n, s, s, 3) -> (n,)."""
    s = lab_cells.shape[1]
    a = int(round(inset * s))
    inner = lab_cells[:, a : s - a, a : s - a].reshape(len(lab_cells), -1, 3)
    return cast(np.ndarray, np.hypot(inner[..., 1], inner[..., 2]).mean(axis=1))


def _scene_beside_holes(groups: np.ndarray, keep: np.ndarray, empty: set[int], dist: np.ndarray,
                        contrast: np.ndarray, holes: np.ndarray, rows: int, cols: int) -> set[int]:
    """Flat groups that are the scene behind the board, seen past its outline: every cell
    of the group touches a hole and is nearer to a hole beside it than to any piece of
    the board. (A cut corner of an irregular board shows the sky: where a patch of it is
    vivid, the chroma test above takes it for a flat tile, and calibration made a
    "special" of two cells of purple nebula, swiped and refused.)"""
    if not holes.any():
        return set()
    hole_at = holes.reshape(rows, cols)
    out: set[int] = set()
    for g in (int(g) for g in np.unique(groups[keep])):
        if g in empty:
            continue
        members = np.flatnonzero(groups == g)
        if float(np.median(contrast[members])) >= EMPTY_CONTRAST:
            continue
        pieces = np.flatnonzero((groups >= 0) & (groups != g) & ~np.isin(groups, list(empty)))
        if not pieces.size:
            continue
        scene = True
        for i in members:
            r, c = divmod(int(i), cols)
            beside = [rr * cols + cc for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
                      if 0 <= rr < rows and 0 <= cc < cols and hole_at[rr, cc]]  # fmt: skip
            if not beside or float(dist[i, beside].min()) >= float(dist[i, pieces].min()):
                scene = False
                break
        if scene:
            out.add(g)
    return out


def symmetric_distances(features: np.ndarray, swapped: np.ndarray) -> np.ndarray:
    """Distances between cells that do not depend on the frame's channel order.

    `swapped` holds the same cells' features computed with red and blue exchanged. The
    root mean square of the two distance matrices is the same whichever order the frame
    came in, so calibration groups a BGR and an RGB copy of a screen identically."""
    a = pairwise_distances(features, features)
    b = pairwise_distances(swapped, swapped)
    return cast(np.ndarray, np.sqrt(0.5 * (a * a + b * b)))


def cluster_cells(
    dist: np.ndarray,
    rows: int,
    cols: int,
    contrast: np.ndarray,
    holes: np.ndarray | None = None,
    views: Sequence[np.ndarray] = (),
    margin: int = 0,
    unknown: np.ndarray | None = None,
) -> Clustering:
    """Cluster the cells of a rows x cols board and name the classes.

    `dist` is the (rows*cols, rows*cols) distance matrix between cells (see
    symmetric_distances); `contrast` each cell's centre spread (see centre_contrast);
    `holes` (rows, cols) marks cells known to be outside an irregular board. `views`, the
    cells' sampled Lab images (n, s, s, 3) in each channel order, with `margin` samples
    of border, let clusters that differ only in the layer under the tile be joined
    (see agent.vision.layers); without them no cluster is joined. `unknown` (rows, cols)
    marks cells that cannot be read (moving or covered): they are labelled "?".
    """
    n = rows * cols
    holes_flat = np.zeros(n, bool) if holes is None else np.asarray(holes, bool).ravel()
    # cells known to be unreadable (moving, covered: see agent.vision.cover) are left out
    # of the cut, which they would distort, and labelled "?"
    unknown_flat = np.zeros(n, bool) if unknown is None else np.asarray(unknown, bool).ravel()
    keep = np.flatnonzero(~holes_flat & ~unknown_flat)
    groups = np.full(n, -1, dtype=np.int64)
    t = 0.0
    if keep.size:
        ids, t = cut_height(dist[np.ix_(keep, keep)])
        groups[keep] = ids
    # (the lower over the channel orders: the same decision whichever order came first)
    chroma = np.min([centre_chroma(v) for v in views], axis=0) if views else np.zeros(n)
    empty = {
        int(g) for g in np.unique(groups[keep])
        if float(np.median(contrast[groups == g])) < EMPTY_CONTRAST and float(np.median(chroma[groups == g])) < EMPTY_CHROMA
    }  # fmt: skip
    empty |= _scene_beside_holes(groups, keep, empty, dist, contrast, holes_flat, rows, cols)
    tiles = [int(g) for g in np.unique(groups[keep]) if int(g) not in empty]
    groups = merge_layer_splits(groups, dist, views, margin, tiles)
    names = np.full(n, EMPTY_LABEL, dtype=object)
    letter = 0
    seen: dict[int, str] = {}
    for i in range(n):  # reading order
        g = int(groups[i])
        if g < 0 or g in seen:
            continue
        if g in empty:
            seen[g] = EMPTY_LABEL
            continue
        if letter >= len(CLASS_NAMES):
            raise ValueError(f"more than {len(CLASS_NAMES)} tile classes: this does not look like a game board")
        seen[g] = CLASS_NAMES[letter]
        letter += 1
    for i in range(n):
        if groups[i] >= 0:
            names[i] = seen[int(groups[i])]
        elif unknown_flat[i] and not holes_flat[i]:
            names[i] = UNKNOWN_LABEL
    labels = names.reshape(rows, cols).tolist()
    return Clustering(labels=labels, groups=groups.reshape(rows, cols), threshold=t)
