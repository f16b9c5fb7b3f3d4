"""What a watcher of a run (the live view) is told, on the loop's own thread.

Every call must return at once: a watcher keeps references and counts, and does its
own work (drawing, encoding, serving) elsewhere, so watching never slows the play.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np


class Watcher(Protocol):
    def captured(self, frame: np.ndarray, count: int) -> None:
        """Every capture the loop makes, with the loop's count of captures so far."""

    def board(self, bbox: Sequence[int] | None, board_text: str | None) -> None:
        """A frame read at rest: the board's box and the board as read (None: no board)."""

    def about_to(self, gestures: list[list[object]], move: str | None = None, index: int | None = None) -> None:
        """The move about to be made, in the journal's gesture form, with its text and number."""

    def checked(self, verdict: str, detail: str) -> None:
        """What the check of the last move found."""

    def summary(self, summary: dict[str, Any]) -> None:
        """The run's numbers (`PlaySummary.as_dict()`), after each move and at the stop."""
