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
    """Profile class labels -> tile types. Every class of one colour kind (a tile, and its
    lit, shaded and special looks) is one type, since it matches as that colour. Kinds
    named A-H keep their meaning; any other names are numbered in sorted order. A class
    whose kind is "." (a hole) has no type."""
    labels = sorted({e.label for e in profile.exemplars if e.label not in (".", "?")})
    kinds = sorted({profile.kind_of(lbl) for lbl in labels} - {".", "?"})
    index = {k: LETTERS.index(k) for k in kinds} if all(k in LETTERS for k in kinds) else {k: i for i, k in enumerate(kinds)}
    return {lbl: index[profile.kind_of(lbl)] for lbl in labels if profile.kind_of(lbl) in index}


def read_board(frame: np.ndarray, profile: GameProfile) -> BoardRead:
    reading = profile.read(frame)
    types = label_types(profile)
    cells = np.full((profile.rows, profile.cols), UNKNOWN, dtype=np.int8)
    for r, row in enumerate(reading.labels):
        for c, lbl in enumerate(row):
            if lbl == "." or profile.kind_of(lbl) == ".":
                cells[r, c] = EMPTY
            elif lbl in types:
                cells[r, c] = types[lbl]
    confident = bool((cells != UNKNOWN).all()) and reading.min_confidence >= profile.min_confidence
    return BoardRead(Board(cells), reading, confident)
