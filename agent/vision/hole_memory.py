"""The holes of the board in play, remembered while its shape holds.

An irregular board shows the scene behind it through its holes. Calibration (or the
board found again) keeps exemplars of what the holes showed then, but a scene that moves
(drifting clouds, sparkles, a sky that changes colour) shows something else a minute
later, and a hole that looks like none of its exemplars reads "?". A board with a fifth
of its cells unknown is no board to act on, so the run stops on a board it could play,
or learns the moving sky as pieces (a look that keeps coming back).

A hole does not move and no piece falls into it while the level lasts: a cell that read
as a hole on this board (on `SEEN_TIMES` boards a move was chosen on, and as no piece
since) is a hole still when it reads "?" now. (A cell a match emptied is refilled before
the next move; a board at rest for an instant mid-clear is no board moves are chosen on.) `lend` gives the profile, for this one frame, an
exemplar of what each such cell shows now, so the cell reads as the hole it is. Nothing
is learned into the profile that is kept: the next frame's scene lends its own.

A cell that reads as a piece leaves the memory (another level of the same shape, with a
piece where this one had a hole); a new shape or place of the board forgets all of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol, TypeVar

import numpy as np

from agent.vision.classify import EMPTY_LABEL, UNKNOWN_LABEL, Exemplar, Reading
from agent.vision.grid import BBox
from agent.vision.profile import GameProfile

# Boards moves were chosen on, with the cell read as a hole, before it counts as one: a
# cell emptied by a clear and read in the instant before the refill is no hole.
SEEN_TIMES = 2


class _Read(Protocol):
    @property
    def reading(self) -> Reading: ...


R = TypeVar("R", bound=_Read)


@dataclass
class HoleMemory:
    """The cells that showed a hole on the board in play (see the module docstring)."""

    _board: tuple[int, int, BBox] | None = None
    _seen: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int32))

    @classmethod
    def for_game(cls, falls: bool) -> "HoleMemory | None":
        """A memory for a game whose pieces fall into every cleared cell (a cell empty at
        rest is a hole); None for another (an empty square a piece may come to)."""
        return cls() if falls else None

    def read(self, read: Callable[[np.ndarray, GameProfile], R], frame: np.ndarray, profile: GameProfile) -> R:
        """`read(frame, profile)`, read again with the holes' looks lent when a remembered
        hole read "?" (see `lend`)."""
        out = read(frame, profile)
        lent = self.lend(profile, frame, out.reading)
        return out if lent is None else read(frame, lent)

    def saw(self, profile: GameProfile, reading: Reading) -> None:
        """A reading of the board that `profile` places, one a move is chosen on: its holes
        are counted, a cell read as a piece is no hole."""
        if (reading.rows, reading.cols) != (profile.rows, profile.cols):
            return
        self._follow(profile)
        for r, row in enumerate(reading.labels):
            for c, label in enumerate(row):
                if _is_hole(profile, label):
                    self._seen[r, c] += 1
                elif label != UNKNOWN_LABEL:
                    self._seen[r, c] = 0

    def holes(self, profile: GameProfile) -> frozenset[tuple[int, int]]:
        """The cells remembered as holes of the board `profile` places (none for another board)."""
        if self._board != _board_of(profile):
            return frozenset()
        return frozenset((int(r), int(c)) for r, c in zip(*np.nonzero(self._seen >= SEEN_TIMES)))

    def lend(self, profile: GameProfile, frame: np.ndarray, reading: Reading) -> GameProfile | None:
        """`profile` with, for this frame only, an exemplar of the hole for each cell
        remembered as a hole that reads "?" in `reading`; None when there is none."""
        holes = self.holes(profile)
        cells = [rc for rc in reading.unknown_cells() if rc in holes]
        if not cells:
            return None
        features = profile.features(frame)
        lent = [Exemplar(EMPTY_LABEL, features[r * profile.cols + c]) for r, c in cells]
        return replace(profile, exemplars=[*profile.exemplars, *lent])

    def _follow(self, profile: GameProfile) -> None:
        board = _board_of(profile)
        if board != self._board:
            self._board, self._seen = board, np.zeros((profile.rows, profile.cols), dtype=np.int32)


def _board_of(profile: GameProfile) -> tuple[int, int, BBox]:
    return (profile.rows, profile.cols, profile.board_bbox)


def _is_hole(profile: GameProfile, label: str) -> bool:
    return label == EMPTY_LABEL or (label != UNKNOWN_LABEL and profile.role_of(label) == "hole")


__all__ = ["HoleMemory", "SEEN_TIMES"]
