"""A match-3 board as read, with the cells that hold blockers.

The board notation has no letter for a blocker: a crate matches nothing, which is the
rules' UNKNOWN, and so it is written `?` like any piece the rules cannot match. A goal
of breaking blockers needs to know which of those cells are blockers (a match beside one
hits it), so the board read off a screen carries them beside its cells. It is a Board in
every other way: it prints, parses back and compares as its cells do
(`Board.parse(str(b)) == b`), and the rules and solvers see only the cells.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.games.match3.board import UNKNOWN, Board
from agent.vision.classify import Reading
from agent.vision.profile import GameProfile

Cell = tuple[int, int]


@dataclass(frozen=True, eq=False, repr=False)
class ReadBoard(Board):
    """A board read off a screen: its cells, and those of them that hold blockers."""

    blockers: frozenset[Cell] = frozenset()


def blocker_cells(reading: Reading, profile: GameProfile) -> frozenset[Cell]:
    """The cells whose class the profile takes for a blocker."""
    return frozenset((r, c) for r, row in enumerate(reading.labels) for c, lbl in enumerate(row)
                     if lbl not in (".", "?") and profile.role_of(lbl) == "blocker")  # fmt: skip


def with_blockers(board: Board, blockers: frozenset[Cell]) -> Board:
    """`board` carrying `blockers` (only cells the board holds as unknown: a blocker is
    no tile); the board itself when there are none."""
    cells = frozenset(rc for rc in blockers if board.inside(*rc) and board[rc] == UNKNOWN)
    return ReadBoard(board.cells, cells) if cells else board


def blockers_of(board: Board) -> frozenset[Cell]:
    return board.blockers if isinstance(board, ReadBoard) else frozenset()
