"""Checking on the next still board that a swipe did what the rules predicted.

The agent cannot know the tiles the phone will drop in, so it checks the part of the
outcome that involves no refill: the swap, its clears, the fall, and the cascades among
known tiles. New tiles can start further cascades that change known cells too; such a
board is accepted as `cascade` when it changed and is stable (no 3 in a row left), and
anything else is `unexpected`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from agent.games.match3.board import EMPTY, UNKNOWN, Board
from agent.games.match3.rules import has_match
from agent.games.match3.solver import Choice

Verdict = Literal["as_predicted", "cascade", "not_applied", "unexpected"]


@dataclass(frozen=True)
class Check:
    verdict: Verdict
    known_cells: int  # cells the prediction fixes
    agreeing: int  # of those, how many the screen shows as predicted
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.verdict in ("as_predicted", "cascade")


def at_rest(before: Board, after: Board) -> bool:
    """Whether `after` can be the board at rest after a move made on `before`.

    Screens pause between animation phases (new tiles still above the board, a beat
    between clear and fall), so a few identical frames do not prove the move is over;
    a board that still shows 3 in a row, or holes where tiles stood, is mid-move.
    """
    if after.shape != before.shape or has_match(after):
        return False
    return not bool(((after.cells == EMPTY) & (before.cells != EMPTY)).any())


def check_outcome(before: Board, choice: Choice, after: Board) -> Check:
    """The verdict on `after`; cells unknown in the prediction or on screen are left out
    (an unknown piece is neither swapped nor matched, but it falls with the rest)."""
    predicted = choice.predicted
    known = (predicted.cells != EMPTY) & (predicted.cells != UNKNOWN) & (after.cells != UNKNOWN)
    agree = known & (predicted.cells == after.cells)
    n_known, n_agree = int(known.sum()), int(agree.sum())
    if after == before and predicted != before:
        return Check("not_applied", n_known, n_agree, "the board did not change: the swipe was not taken")
    if n_agree == n_known:
        return Check("as_predicted", n_known, n_agree)
    # (a cell read unknown on one side only, a hint glowing on it or a sparkle, is no change)
    both = (before.cells != UNKNOWN) & (after.cells != UNKNOWN)
    if before.cells.shape == after.cells.shape and np.array_equal(before.cells[both], after.cells[both]) \
            and predicted != before:  # fmt: skip
        return Check("not_applied", n_known, n_agree, "nothing known changed: the swipe was not taken")
    if choice.tiles_cleared == 0:
        return Check("unexpected", n_known, n_agree, "a swap that clears nothing should show exactly the swapped board")
    if has_match(after):
        return Check("unexpected", n_known, n_agree, "the board still shows 3 in a row after settling")
    wrong = np.argwhere(known & ~agree)
    where = ", ".join(f"({r},{c})" for r, c in wrong[:6].tolist())
    return Check("cascade", n_known, n_agree, f"new tiles cascaded; changed beyond the prediction at {where}")
