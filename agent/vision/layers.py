"""One tile type on different background layers is one class.

Many games put layers under the tiles that are not the tile: Candy Crush's glass and
jelly, a highlighted or checkered slot. Whole-cell features see the layer as much as the
tile, so clustering splits one candy colour by the layer beneath it, and those splits
can be wider than the gap between two genuinely different tiles of one colour (cracked
and plain blockers). No single cut of the dendrogram gets both; the difference is where
it lies, and that is what this module looks at.

Each cell's background is what lies along its border (a ring of samples just inside the
cell): the border's main colours, the ones near its median, so a piece that reaches the
border in a few places does not count as background. Pixels near one of those colours
are background; the rest is the piece on top (the "object"). Two clusters are one tile
type on different layers when their representative cells have objects of the same shape
(mask IoU) that cover a real part of the cell and match in colour (object pixels only,
up to a one-sample shift: resampled screenshots place a tile at slightly different
sub-pixel phases). A tile that fills its cell (a blocker, a plain square) is all border
colour, so it has no object, and two such tiles are never merged by this: their fill is
all there is to tell them apart.

Distances here are per-pixel Lab distances (delta E), not the per-component RMS of the
feature vectors.
"""

from __future__ import annotations

from typing import Sequence, cast

import cv2
import numpy as np
from scipy.sparse.csgraph import connected_components

RING = 1  # samples in from the cell edge: the edge sample itself often holds the grid's gap
RING_INLIER = 25.0  # border samples this near the border's median are its background colours
BACKGROUND = 12.0  # a pixel this near a background colour is background
# The worst 3 x 3 neighbourhood of two objects differs by less than this (mean delta E)
# for one piece on two layers. Measured on the real screenshots under JPEG and rescaling:
# one piece at most 28, two different pieces whose outlines match at least 43.
SAME_OBJECT = 34.0
MIN_IOU = 0.7  # the two objects' masks overlap at least this much
MIN_COVER = 0.2  # and, shrunk by their outline, cover at least this share of the compared area
SHIFT = 1  # samples the object may be displaced by
_CROSS = cv2.getStructuringElement(cv2.MORPH_CROSS, (3, 3))


def object_mask(cell: np.ndarray) -> np.ndarray:
    """(s, s, 3) Lab samples of one cell -> (s, s) bool: True where the piece on top is."""
    s = cell.shape[0]
    a, b = RING, s - 1 - RING
    ring = np.concatenate([cell[a, a : b + 1], cell[b, a : b + 1], cell[a + 1 : b, a], cell[a + 1 : b, b]])
    med = np.median(ring, axis=0)
    background = ring[np.linalg.norm(ring - med, axis=1) < RING_INLIER]
    flat = cell.reshape(-1, 1, 3)
    near = np.sqrt(((flat - background[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
    return cast(np.ndarray, (near >= BACKGROUND).reshape(s, s))


def same_piece(a: np.ndarray, b: np.ndarray, margin: int) -> bool:
    """Whether two cells' sampled Lab images (s, s, 3) show the same piece, whatever lies
    under it. `margin` samples on each side are left out (the cell's own border)."""
    return piece_difference(a, b, margin) < SAME_OBJECT


def piece_difference(
    a: np.ndarray, b: np.ndarray, margin: int, masks: tuple[np.ndarray, np.ndarray] | None = None
) -> float:
    """How much the pieces on top of two cells differ (delta E, see same_piece); inf when
    their objects do not have the same outline or are too small to compare.

    The colours are compared inside the union of the two objects shrunk by one sample:
    an object's outline is blended with whatever is under it (anti-aliasing, JPEG's
    colour smear), so it differs between layers even for one piece. What counts is the
    worst 3 x 3 neighbourhood: two different pieces differ strongly somewhere (an icon,
    a badge), one piece on two layers only by noise spread all over."""
    s = a.shape[0]
    m = max(margin, SHIFT)
    ma, mb = masks if masks is not None else (object_mask(a), object_mask(b))
    ia, oa = a[m : s - m, m : s - m], ma[m : s - m, m : s - m]
    best = np.inf
    for dy in range(-SHIFT, SHIFT + 1):
        for dx in range(-SHIFT, SHIFT + 1):
            ib = b[m + dy : s - m + dy, m + dx : s - m + dx]
            ob = mb[m + dy : s - m + dy, m + dx : s - m + dx]
            union = oa | ob
            if (oa & ob).sum() < MIN_IOU * union.sum():
                continue
            inside = cv2.erode(union.astype(np.uint8), _CROSS).astype(bool)
            if inside.mean() < MIN_COVER:
                continue
            diff = np.where(inside, np.sqrt(((ia - ib) ** 2).sum(axis=2)), 0.0).astype(np.float32)
            weight = cv2.blur(inside.astype(np.float32), (3, 3))
            local = cv2.blur(diff, (3, 3)) / np.maximum(weight, 1e-6)
            best = min(best, float(local[inside].max()))
    return best


def merge_layer_splits(
    groups: np.ndarray, dist: np.ndarray, views: Sequence[np.ndarray], margin: int, candidates: Sequence[int]
) -> np.ndarray:
    """Join clusters that hold the same piece on different layers.

    `groups` (n,) cluster ids (-1 for holes), `dist` the distances the clustering used,
    `views` one or more (n, s, s, 3) Lab sample sets of the cells (the frame read in each
    channel order: a merge must hold in all, so it does not depend on the order),
    `candidates` the cluster ids that hold tiles (not empties). Each cluster is
    represented by its medoid. Returns new ids (clusters merged take the smallest id).
    """
    ids = [int(g) for g in candidates]
    if len(ids) < 2 or not views:
        return groups
    medoids = []
    for g in ids:
        members = np.flatnonzero(groups == g)
        medoids.append(int(members[dist[np.ix_(members, members)].sum(axis=1).argmin()]))
    k = len(ids)
    masks = [[object_mask(v[i]) for i in medoids] for v in views]
    join = np.eye(k, dtype=bool)
    for i in range(k):
        for j in range(i + 1, k):
            join[i, j] = join[j, i] = all(
                piece_difference(v[medoids[i]], v[medoids[j]], margin, (m[i], m[j])) < SAME_OBJECT
                for v, m in zip(views, masks)
            )
    n_comp, comp = connected_components(join, directed=False)
    if n_comp == k:
        return groups
    out = groups.copy()
    for c in range(n_comp):
        joined = [ids[i] for i in np.flatnonzero(comp == c)]
        out[np.isin(groups, joined)] = min(joined)
    return out
