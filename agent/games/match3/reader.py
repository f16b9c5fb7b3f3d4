"""Reading a match-3 board off a screenshot with a device profile."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agent.games.match3.board import EMPTY, LETTERS, UNKNOWN, Board
from agent.vision.classify import Reading
from agent.vision.profile import GameProfile


@dataclass(frozen=True)
class BoardRead:
    board: Board  # UNKNOWN where a cell could not be classified
    reading: Reading
    confident: bool  # every cell classified at or above the profile's min_confidence

    @property
    def min_confidence(self) -> float:
        return float(self.reading.confidence.min())


def label_types(profile: GameProfile) -> dict[str, int]:
    """Profile class labels -> tile types. Letters A-H keep their meaning; any other
    names (a calibration's cluster ids) are numbered in sorted order."""
    labels = sorted({e.label for e in profile.exemplars if e.label not in (".", "?")})
    if all(lbl in LETTERS for lbl in labels):
        return {lbl: LETTERS.index(lbl) for lbl in labels}
    return {lbl: i for i, lbl in enumerate(labels)}


def read_board(frame: np.ndarray, profile: GameProfile) -> BoardRead:
    reading = profile.read(frame)
    types = label_types(profile)
    cells = np.full((profile.rows, profile.cols), UNKNOWN, dtype=np.int8)
    for r, row in enumerate(reading.labels):
        for c, lbl in enumerate(row):
            if lbl == ".":
                cells[r, c] = EMPTY
            elif lbl in types:
                cells[r, c] = types[lbl]
    confident = bool((cells != UNKNOWN).all()) and reading.min_confidence >= profile.min_confidence
    return BoardRead(Board(cells), reading, confident)
