"""Naming the cells of a Color Lines board seen for the first time.

Given where the board is, cells are grouped by how they look (complete-linkage
clustering on the vision features, so no two cells in a group differ by more than
`threshold`); the flattest group (least colour variation inside the cell) is the empty
cell, the others are ball colours. The labels then make a profile with
`exemplars_from_labels`, as a hand-labelled board would. Which colour is which does not
matter to the rules, only that the groups split the cells as the balls do.
"""

from __future__ import annotations

import numpy as np

from agent.games.lines.board import LETTERS
from agent.vision.classify import EMPTY_LABEL, exemplars_from_labels, pairwise_distances
from agent.vision.features import cell_features
from agent.vision.grid import BBox
from agent.vision.profile import GameProfile

# Lab RMS units (see agent.vision.classify): the same ball in two cells differs by a few
# units, two ball colours or a ball and an empty cell by tens.
DEFAULT_THRESHOLD = 12.0


def cluster(features: np.ndarray, threshold: float) -> np.ndarray:
    """Complete-linkage groups: labels 0..k-1, one per row of `features`."""
    d = pairwise_distances(features, features)
    groups: list[list[int]] = [[i] for i in range(len(features))]
    link = d.copy()
    np.fill_diagonal(link, np.inf)
    while len(groups) > 1:
        i, j = np.unravel_index(int(np.argmin(link)), link.shape)
        if link[i, j] > threshold:
            break
        i, j = min(i, j), max(i, j)
        groups[i].extend(groups[j])
        del groups[j]
        merged = np.maximum(link[i], link[j])
        link[i, :] = merged
        link[:, i] = merged
        link[i, i] = np.inf
        link = np.delete(np.delete(link, j, axis=0), j, axis=1)
    out = np.empty(len(features), dtype=np.int64)
    for k, g in enumerate(groups):
        out[g] = k
    return out


def propose_labels(
    frame: np.ndarray, bbox: BBox, rows: int, cols: int, threshold: float = DEFAULT_THRESHOLD
) -> list[list[str]]:
    """'.' for empty cells and A, B, ... for each look of ball, row by row."""
    feats = cell_features(frame, bbox, rows, cols)
    groups = cluster(feats, threshold)
    k = int(groups.max()) + 1
    # The last three feature components are the per-channel spread inside the cell.
    flatness = [float(feats[groups == g, -3:].mean()) for g in range(k)]
    empty = int(np.argmin(flatness))
    balls = sorted((g for g in range(k) if g != empty), key=lambda g: int(np.flatnonzero(groups == g)[0]))
    if len(balls) > len(LETTERS):
        raise ValueError(f"{len(balls)} kinds of ball found, at most {len(LETTERS)} are supported: raise the threshold")
    names = {empty: EMPTY_LABEL} | {g: LETTERS[i] for i, g in enumerate(balls)}
    return [[names[int(groups[r * cols + c])] for c in range(cols)] for r in range(rows)]


def profile_from_frame(frame: np.ndarray, bbox: BBox, rows: int, cols: int, threshold: float = DEFAULT_THRESHOLD) -> GameProfile:
    labels = propose_labels(frame, bbox, rows, cols, threshold)
    feats = cell_features(frame, bbox, rows, cols)
    h, w = frame.shape[:2]
    return GameProfile.from_bbox("lines", rows, cols, bbox, w, h, exemplars_from_labels(feats, labels))
