"""Checking on the next still board that a ball move did what the rules predict.

The agent cannot foresee where the new balls land, so the check is exact only where the
rules fix the board: a move that removes a line and leaves balls on the board brings no
new balls, and the result is known cell for cell; otherwise the moved ball must stand at
its destination, no ball may change colour, and at most `spawn_count` balls may appear
(with the line they complete, if they complete one).
"""

from __future__ import annotations

import numpy as np

from agent.games.base import Verdict
from agent.games.lines.board import EMPTY, WILD
from agent.games.lines.config import LinesConfig
from agent.games.lines.linefind import find_lines
from agent.games.lines.rules import Move

# What `check_move` says when the screen showed the move as the rules predict it.
MOVED, CLEARED, NOTHING = "moved", "cleared", "nothing happened"


def predict(board: np.ndarray, move: Move, config: LinesConfig) -> tuple[np.ndarray, np.ndarray]:
    """The board right after `move` and its lines are resolved (before any new balls),
    and the mask of the balls the move removes."""
    after = board.copy()
    after[move.dst], after[move.src] = after[move.src], EMPTY
    gone = find_lines(after, config.line_length)
    after[gone] = EMPTY
    return after, gone


def check_move(before: np.ndarray, move: Move, observed: np.ndarray, config: LinesConfig) -> str:
    """ "moved", "cleared", or why the screen does not show the move."""
    expected, gone = predict(before, move, config)
    if np.array_equal(observed, before):
        return NOTHING
    if gone.any():
        if expected.any():  # the board is not empty, so no new balls: exact
            return CLEARED if np.array_equal(observed, expected) else "line not cleared as predicted"
        return CLEARED if (observed[gone] == EMPTY).all() else "line not cleared as predicted"
    new = (expected == EMPTY) & (observed != EMPTY)
    lost = (expected != EMPTY) & (observed == EMPTY)
    both = (expected != EMPTY) & (observed != EMPTY)
    if (observed[both] != expected[both]).any():
        return "balls changed colour"
    if int(new.sum()) > config.spawn_count:
        return f"{int(new.sum())} new balls, at most {config.spawn_count} expected"
    # Balls may only vanish when new balls completed a line with them; then at least one
    # new ball went with the line, and the balls that went share one colour.
    if lost.any():
        colours = set(np.unique(expected[lost]).tolist()) - {WILD}
        if int(new.sum()) >= config.spawn_count or len(colours) > 1:
            return "ball not at its destination" if lost[move.dst] else "balls vanished"
    return MOVED


def verdict_of(result: str) -> Verdict:
    """`check_move`'s result as the verdict every game shares."""
    if result in (MOVED, CLEARED):
        return "as_predicted"
    if result == NOTHING:
        return "not_applied"
    return "unexpected"
