"""A board's cells as calibration sees them: each cell shrunk to a few samples, its
features (agent.vision.features), how much goes on in its centre, and its Lab pixels."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agent.vision.cluster import centre_contrast
from agent.vision.features import DEFAULT_INSET, DEFAULT_PATCH, board_lab, cell_layout, features_from_lab


@dataclass(frozen=True, eq=False)
class CellSamples:
    """One board's cells as calibration sees them, from one shrink of the board."""

    features: np.ndarray  # (n, feature_length) see agent.vision.features
    contrast: np.ndarray  # (n,) centre spread, see centre_contrast
    lab: np.ndarray  # (n, s, s, 3) the sampled cells in Lab
    margin: int  # samples of each cell's border the features leave out


def sample_board(frame: np.ndarray, bbox: tuple[int, int, int, int], rows: int, cols: int,
                 inset: float = DEFAULT_INSET, patch: int = DEFAULT_PATCH) -> CellSamples:
    """Features, centre contrast and Lab samples of every cell."""
    s, margin, _ = cell_layout(float(inset), int(patch))
    lab = board_lab(frame, bbox, rows, cols, s)
    feats = features_from_lab(lab, rows, cols, inset, patch)
    cells = lab.reshape(rows, s, cols, s, 3).transpose(0, 2, 1, 3, 4).reshape(rows * cols, s, s, 3)
    return CellSamples(feats, centre_contrast(cells), cells, margin)


def cell_description(frame: np.ndarray, bbox: tuple[int, int, int, int], rows: int, cols: int,
                     inset: float = DEFAULT_INSET, patch: int = DEFAULT_PATCH) -> tuple[np.ndarray, np.ndarray]:
    """(features, centre contrast) of every cell, from one shrink of the board."""
    cs = sample_board(frame, bbox, rows, cols, inset, patch)
    return cs.features, cs.contrast


__all__ = ["CellSamples", "cell_description", "sample_board"]
