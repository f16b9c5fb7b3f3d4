"""Reading a match-3 board off a screenshot with a device profile."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agent.games.match3.board import EMPTY, LETTERS, MAX_TYPES, UNKNOWN, Board
from agent.vision.classify import Reading
from agent.vision.profile import GameProfile


@dataclass(frozen=True)
class BoardRead:
    board: Board  # UNKNOWN where a cell could not be classified
    reading: Reading
    confident: bool  # every cell classified at or above the profile's min_confidence
    usable: bool = False  # enough known to act on: the known cells sure, few cells unknown

    @property
    def min_confidence(self) -> float:
        return float(self.reading.confidence.min())


# Roles the match-3 board has no cell value for yet: a blocker (immovable) and a
# colourless special (it matches nothing by colour) are both pieces that never match,
# which the rules' UNKNOWN is; they are read with confidence all the same.
_NO_COLOUR = ("blocker", "colourless")


def colour_kinds(profile: GameProfile) -> list[str]:
    """The profile's colour kinds, sorted: those of its classes that are neither holes nor
    pieces without a colour (see _NO_COLOUR)."""
    labels = [lbl for lbl in profile.class_labels if profile.role_of(lbl) not in _NO_COLOUR]
    return sorted({profile.kind_of(lbl) for lbl in labels} - {".", "?"})


def label_types(profile: GameProfile) -> dict[str, int]:
    """Profile class labels -> colour ids of the rules. Every class of one colour kind (a
    tile, and its lit, shaded and special looks) is one colour, since it matches as that
    colour; kinds named A-H keep their letter's colour (a hand-written profile's "B" is
    the board notation's B), any other names are numbered in sorted order. Holes and bare layers have no colour, nor do blockers and colourless
    specials (see _NO_COLOUR)."""
    labels = [lbl for lbl in profile.class_labels if profile.role_of(lbl) not in _NO_COLOUR]
    kinds = colour_kinds(profile)
    index = {k: LETTERS.index(k) for k in kinds} if all(k in LETTERS for k in kinds) else {k: i for i, k in enumerate(kinds)}
    # The rules know MAX_TYPES colours: a kind past them (a profile that took obstacles
    # for colours) reads unknown, and the board with few of them is played without them
    # rather than not read at all.
    return {lbl: index[profile.kind_of(lbl)] for lbl in labels
            if profile.kind_of(lbl) in index and index[profile.kind_of(lbl)] < MAX_TYPES}  # fmt: skip


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
    read_all = reading.unknown_count == 0
    confident = read_all and reading.min_confidence >= profile.min_confidence
    return BoardRead(Board(cells), reading, confident, confident or _usable(reading, cells, profile))


# A board with a few cells unknown (a special never seen, a sparkle over a tile) is played
# without them: the rules neither swap nor match an unknown cell. A fifth unknown is a
# board partly hidden (a banner, a dialog, a fade), not one to act on.
MAX_UNKNOWN_SHARE = 0.2


def _usable(reading: Reading, cells: np.ndarray, profile: GameProfile) -> bool:
    unknown = np.array([[v == "?" for v in row] for row in reading.labels], dtype=bool)
    playable = int((cells != EMPTY).sum())
    if playable == 0 or unknown.sum() > MAX_UNKNOWN_SHARE * playable:
        return False
    known = ~unknown
    return bool(known.any()) and float(reading.confidence[known].min()) >= profile.min_confidence
