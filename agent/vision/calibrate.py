"""Calibration: from one screenshot of a grid game to a profile that reads the next ones.

find the board (`locate`) -> describe every cell (`features`) -> group the cells into
classes (`cluster`) -> keep a few exemplars per class -> read the screenshot back with
them, which gives every cell a confidence and checks that the profile works.

Frames are BGR (OpenCV's order) everywhere in this project: devices decode PNG and raw
frames with OpenCV into BGR, and image files are read with `agent.vision.images`.
Calibration itself does not depend on the order: board finding works on contrast, and
the clustering of one image groups the same cells whichever way its channels are
ordered. A profile does depend on it (its exemplars are colours): a frame with red and
blue swapped reads as unknown cells, never as wrong ones, and the reader says so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import cv2
import numpy as np

from agent.vision.classify import EMPTY_LABEL, UNKNOWN_LABEL, Reading, classify, exemplars_from_labels
from agent.vision.cluster import Clustering, cluster_cells, symmetric_distances
from agent.vision.features import stat_weight
from agent.vision.kinds import KindMap, kinds_of, split_mixed_colours
from agent.vision.locate import BoardFind, NoBoardError, find_boards
from agent.vision.cover import check_not_covered, unsettled_cells, unsettled_mask
from agent.vision.profile import GameProfile
from agent.vision.samples import CellSamples, cell_description, sample_board
from agent.vision.roles import ClassInfo, RoleHints, hex_colour
from agent.vision.settle import SettleSettings

EXEMPLARS_PER_CLASS = 4
# Holes show the background behind the board, which differs from hole to hole (see
# exemplars_from_labels): enough exemplars that every hole of the calibration frame has
# one near it, so the holes read back as holes.
EXEMPLARS_PER_EMPTY = 32
CALIBRATED = "calibrated"  # GameProfile.source of calibrated profiles
LOW_CONFIDENCE = 0.5  # cells below this are marked on the overlay and in reports

# A person swipes a piece over one cell in about a tenth of a second; a slower swipe is
# time the game does nothing. The play loop lengthens it for a game that ignores swipes.
SWIPE_MS = 120


@dataclass(frozen=True, eq=False)
class Calibration:
    """What calibration found on one frame, and the profile made from it."""

    board: BoardFind
    clustering: Clustering
    reading: Reading  # the frame read back with the learned profile
    profile: GameProfile
    seconds: float
    counts: dict[str, int] = field(default_factory=dict)
    kinds: KindMap = field(default_factory=lambda: KindMap({}))  # class -> colour kind, see agent.vision.kinds
    # cells read "?" because they move or are covered (cell -> reason), see agent.vision.cover
    unsettled: dict[tuple[int, int], str] = field(default_factory=dict)

    @property
    def labels(self) -> list[list[str]]:
        return self.clustering.labels

    @property
    def low_confidence(self) -> list[tuple[int, int]]:
        conf = self.reading.confidence
        return [(int(r), int(c)) for r, c in np.argwhere(conf < LOW_CONFIDENCE)]


@dataclass(frozen=True, eq=False)
class FoundBoard:
    """The board calibration settled on in a frame: its grid, the cells sampled in both
    channel orders, the cells caught moving, and the cells grouped by look."""

    board: BoardFind
    cells: CellSamples
    swapped: CellSamples
    unsettled: dict[tuple[int, int], str]
    clustering: Clustering


def find_board_cells(frame: np.ndarray) -> FoundBoard:
    """The best grid on the frame whose cells make sense as tiles. Raises NoBoardError
    when there is none, or only an empty one (nothing to learn tiles from), and
    CoveredBoardError when a dialog covers it."""
    problems = []
    for board in find_boards(frame):  # best first; a grid whose cells make no sense as tiles is passed over
        cells = sample_board(frame, board.bbox, board.rows, board.cols)
        swapped = sample_board(frame[..., ::-1], board.bbox, board.rows, board.cols)
        check_not_covered(frame, board)  # a dialog over the board: refused, never learned from
        unsettled = unsettled_cells(cells, board.rows, board.cols, board.holes)
        dist = symmetric_distances(cells.features, swapped.features)
        try:
            clustering = cluster_cells(
                dist, board.rows, board.cols, cells.contrast, holes=board.holes,
                views=(cells.lab, swapped.lab), margin=cells.margin,
                unknown=unsettled_mask(unsettled, board.rows, board.cols),
            )  # fmt: skip
        except ValueError as exc:
            problems.append(f"the grid at {list(board.bbox)} is not a game board: {exc}")
            continue
        if not clustering.classes:
            # the best grid on screen is an empty board: a weaker grid elsewhere is not it
            raise NoBoardError(
                f"the {board.rows}x{board.cols} grid at {list(board.bbox)} holds no tiles (every cell is empty)",
                hint="calibrate on a screen where the board shows its tiles",
            )
        return FoundBoard(board, cells, swapped, unsettled, clustering)
    raise NoBoardError(
        "; ".join(problems) if problems else "no game board found",
        hint="calibrate on a screen where the board shows its tiles, with no dialog over it",
    )


def calibrate_frame(
    frame: np.ndarray,
    game: str = "match3",
    *,
    swipe_ms: int = SWIPE_MS,
    settle: SettleSettings | None = None,
    min_confidence: float = 0.5,
    hints: RoleHints | None = None,
) -> Calibration:
    """Calibrate `game` from one full-screen BGR frame. Raises NoBoardError when there is
    no board, or only an empty one (nothing to learn tiles from). `hints`, the game's
    (see agent.vision.roles), let blockers be told by where they lie."""
    start = time.perf_counter()
    found = find_board_cells(frame)
    return learn(frame, game, found.board, found.clustering, found.cells, found.swapped, found.cells.features,
                 found.unsettled, start, swipe_ms=swipe_ms, settle=settle, min_confidence=min_confidence,
                 hints=hints)  # fmt: skip


def learn(
    frame: np.ndarray, game: str, board: BoardFind, clustering: Clustering, cells: CellSamples, swapped: CellSamples,
    first: np.ndarray, unsettled: dict[tuple[int, int], str], start: float, *, swipe_ms: int,
    settle: SettleSettings | None, min_confidence: float, hints: RoleHints | None,
) -> Calibration:  # fmt: skip
    """The profile learned from clustered cells (one frame's, or several frames' stacked:
    `cells`, `swapped` and the clustering's labels cover them all) and the first frame
    (`first`: its features) read back with it; unsettled cells read "?" there too."""
    labels = split_mixed_colours(clustering.labels, (cells.lab, swapped.lab), cells.margin)
    if labels != clustering.labels:
        clustering = Clustering(labels, clustering.groups, clustering.threshold)
    kinds = kinds_of(labels, (cells.lab, swapped.lab), cells.margin, hints)
    exemplars = exemplars_from_labels(cells.features, labels, per_label=EXEMPLARS_PER_CLASS,
                                      per_empty=EXEMPLARS_PER_EMPTY)  # fmt: skip
    h, w = frame.shape[:2]
    profile = GameProfile.from_bbox(
        game, board.rows, board.cols, board.bbox, w, h, exemplars,
        swipe_ms=swipe_ms, settle=settle or SettleSettings(), min_confidence=min_confidence, source=CALIBRATED,
        kinds=kinds.of_class, roles=kinds.roles, names=kinds.names,
    )  # fmt: skip
    reading = classify(first, board.rows, board.cols, profile.exemplars, profile.min_confidence, profile.max_distance)
    for r, c in unsettled:  # a piece caught moving is not read as whatever it looks like
        reading.labels[r][c] = UNKNOWN_LABEL
        reading.confidence[r, c] = 0.0
    own = clustering
    if len(labels) > board.rows:  # several frames: the calibration shows the first
        own = Clustering(labels[: board.rows], clustering.groups[: board.rows], clustering.threshold)
    counts: dict[str, int] = {}
    for row in own.labels:
        for v in row:
            counts[v] = counts.get(v, 0) + 1
    return Calibration(board, own, reading, profile, time.perf_counter() - start, dict(sorted(counts.items())),
                       kinds, unsettled=unsettled)  # fmt: skip


def kind_labels(calibration: Calibration, labels: Sequence[Sequence[str]] | None = None) -> list[list[str]]:
    """The calibration frame read back as colour kinds: the same letter for a tile and
    every lit, shaded or special variant of its colour, "#" blocker, "." empty or hole,
    "?" unknown. `labels` are the class labels to map (default: the frame as its profile
    reads it back, `calibration.reading.labels`; `calibration.labels` gives the
    clustering's)."""
    return calibration.profile.kind_grid(calibration.reading.labels if labels is None else labels)


def class_colours(profile: GameProfile) -> dict[str, str]:
    """A colour per tile class, as "#rrggbb", for legends: the mean colour of its first
    exemplar (calibration puts the class's most typical cell first), slot and all."""
    p = profile.patch
    at = 3 * p * p  # the mean Lab block, see agent.vision.features
    out: dict[str, str] = {}
    for e in profile.exemplars:
        if e.label in out or e.label == EMPTY_LABEL:
            continue
        lab = np.asarray(e.features[at : at + 3], np.float32) / np.float32(stat_weight(p))
        b, g, r = (cv2.cvtColor(lab.reshape(1, 1, 3), cv2.COLOR_Lab2BGR).reshape(3) * 255.0).clip(0, 255).round()
        out[e.label] = hex_colour((int(b), int(g), int(r)))
    return out


def class_infos(profile: GameProfile, labels: Sequence[Sequence[str]] | None = None) -> list[ClassInfo]:
    """The legend of a profile's classes: letter, role, kind, name, colour, and (with
    `labels`, a board read with it) how many cells each took."""
    counts: dict[str, int] = {}
    for row in labels or ():
        for v in row:
            counts[v] = counts.get(v, 0) + 1
    colours = class_colours(profile)
    return [
        ClassInfo(label, profile.role_of(label), profile.kind_of(label), profile.names.get(label, ""),
                  colours.get(label, ""), counts.get(label, 0))  # fmt: skip
        for label in profile.class_labels
    ]


def reading_json(
    reading: Reading, bbox: tuple[int, int, int, int], profile: GameProfile | None = None
) -> dict[str, Any]:
    """The JSON shape `agent calibrate --json` and `agent read --json` print. With the
    profile that read it, also `kinds` (the cells as colour kinds, see agent.vision.kinds:
    "#" blocker, "." hole, "?" unknown) and `classes` (each class's letter, name, role,
    kind, colour and cells on this board)."""
    out: dict[str, Any] = {
        "rows": reading.rows,
        "cols": reading.cols,
        "board_bbox": [int(v) for v in bbox],
        "cells": [list(row) for row in reading.labels],
        "confidence": [[round(float(v), 3) for v in row] for row in reading.confidence],
    }
    if profile is not None:
        out["kinds"] = profile.kind_grid(reading.labels)
        out["classes"] = [c.as_dict() for c in class_infos(profile, reading.labels)]
    return out


__all__ = [
    "Calibration",
    "CellSamples",
    "EMPTY_LABEL",
    "FoundBoard",
    "LOW_CONFIDENCE",
    "calibrate_frame",
    "cell_description",
    "class_colours",
    "class_infos",
    "find_board_cells",
    "kind_labels",
    "learn",
    "reading_json",
    "sample_board",
]
