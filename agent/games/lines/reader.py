"""Reading a Color Lines board off a screenshot with a device profile.

Profile labels: `.` an empty cell, `A`..`I` colours and `*` the rainbow ball. A profile
from calibration may name its classes otherwise (cluster ids or colour names): they are
numbered as colours in sorted order, except names that say rainbow/wild/`*`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agent.games.lines.board import EMPTY, LETTERS, UNKNOWN, WILD
from agent.vision.classify import EMPTY_LABEL, Reading
from agent.vision.profile import GameProfile

WILD_NAMES = ("*", "rainbow", "wild", "wildcard")


@dataclass(frozen=True)
class LinesRead:
    board: np.ndarray  # UNKNOWN where a cell could not be classified
    reading: Reading
    confident: bool

    @property
    def min_confidence(self) -> float:
        return float(self.reading.confidence.min())


def label_values(profile: GameProfile) -> dict[str, int]:
    labels = sorted({e.label for e in profile.exemplars} - {EMPTY_LABEL, "?"})
    out: dict[str, int] = {}
    colours = [lbl for lbl in labels if lbl.lower() not in WILD_NAMES]
    for lbl in labels:
        if lbl.lower() in WILD_NAMES:
            out[lbl] = WILD
    if all(lbl in LETTERS for lbl in colours):
        out.update({lbl: LETTERS.index(lbl) + 1 for lbl in colours})
    else:
        out.update({lbl: i + 1 for i, lbl in enumerate(colours)})
    return out


def read_board(frame: np.ndarray, profile: GameProfile) -> LinesRead:
    reading = profile.read(frame)
    values = label_values(profile)
    cells = np.full((profile.rows, profile.cols), UNKNOWN, dtype=np.int8)
    for r, row in enumerate(reading.labels):
        for c, lbl in enumerate(row):
            if lbl == EMPTY_LABEL:
                cells[r, c] = EMPTY
            elif lbl in values:
                cells[r, c] = values[lbl]
    confident = bool((cells != UNKNOWN).all()) and reading.min_confidence >= profile.min_confidence
    return LinesRead(cells, reading, confident)
