"""A match-3 board as read, with the cells that hold blockers.

The board notation has no letter for a blocker: a crate matches nothing, which is the
rules' UNKNOWN, and so it is written `?` like any piece the rules cannot match. A goal
of breaking blockers needs to know which of those cells are blockers (a match beside one
hits it), so the board read off a screen carries them beside its cells. It is a Board in
every other way: it prints, parses back and compares as its cells do
(`Board.parse(str(b)) == b`), and the rules and solvers see only the cells.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agent.games.match3.board import UNKNOWN, Board
from agent.vision.classify import Reading
from agent.vision.profile import GameProfile

Cell = tuple[int, int]


@dataclass(frozen=True, eq=False, repr=False)
class ReadBoard(Board):
    """A board read off a screen: its cells, those of them that hold blockers, and those
    that hold colour bombs (a piece that, swapped with a tile, clears its whole colour)."""

    blockers: frozenset[Cell] = frozenset()
    bombs: frozenset[Cell] = frozenset()
    # pieces of a look whose kind is unknown (a special no move has shown yet): cell -> look
    looks: tuple[tuple[Cell, str], ...] = ()
    # unknown cells whose hue names a colour (agent.vision.hue_guess): cell -> colour id;
    # or what works them out, asked only when they are needed (a frame's hues cost far
    # more than its reading, and a board is read many times for each move)
    guesses: tuple[tuple[Cell, int], ...] = ()
    guesser: Callable[[], tuple[tuple[Cell, int], ...]] | None = field(default=None, repr=False)


def blocker_cells(reading: Reading, profile: GameProfile) -> frozenset[Cell]:
    """The cells whose class the profile takes for a blocker."""
    return frozenset((r, c) for r, row in enumerate(reading.labels) for c, lbl in enumerate(row)
                     if lbl not in (".", "?") and profile.role_of(lbl) == "blocker")  # fmt: skip


def bomb_cells(reading: Reading, profile: GameProfile) -> frozenset[Cell]:
    """The cells whose class the profile takes for a colour bomb (role colourless)."""
    return frozenset((r, c) for r, row in enumerate(reading.labels) for c, lbl in enumerate(row)
                     if lbl not in (".", "?") and profile.role_of(lbl) == "colourless")  # fmt: skip


def unknown_looks(reading: Reading, profile: GameProfile) -> tuple[tuple[Cell, str], ...]:
    """The cells of a special whose kind the profile does not know, with its class."""
    return tuple(((r, c), lbl) for r, row in enumerate(reading.labels) for c, lbl in enumerate(row)
                 if lbl not in (".", "?") and profile.role_of(lbl) == "special" and profile.kind_of(lbl) == "?")  # fmt: skip


def with_blockers(board: Board, blockers: frozenset[Cell], bombs: frozenset[Cell] = frozenset(),
                  looks: tuple[tuple[Cell, str], ...] = (),
                  guesser: Callable[[], tuple[tuple[Cell, int], ...]] | None = None) -> Board:  # fmt: skip
    """`board` carrying `blockers`, `bombs`, unknown `looks` and what guesses the colours
    of its unknown pieces (only cells the board holds as unknown: they are no tiles); the
    board itself when there are none."""
    held = [frozenset(rc for rc in cells if board.inside(*rc) and board[rc] == UNKNOWN) for cells in (blockers, bombs)]
    seen = tuple((rc, v) for rc, v in looks if board.inside(*rc) and board[rc] == UNKNOWN)
    if not (any(held) or seen or guesser is not None):
        return board
    return ReadBoard(board.cells, held[0], held[1], seen, guesser=guesser)


def blockers_of(board: Board) -> frozenset[Cell]:
    return board.blockers if isinstance(board, ReadBoard) else frozenset()


def bombs_of(board: Board) -> frozenset[Cell]:
    return board.bombs if isinstance(board, ReadBoard) else frozenset()


def looks_of(board: Board) -> tuple[tuple[Cell, str], ...]:
    return board.looks if isinstance(board, ReadBoard) else ()


def guesses_of(board: Board) -> tuple[tuple[Cell, int], ...]:
    """The colour guesses of the board's unknown pieces that are no blockers nor bombs."""
    if not isinstance(board, ReadBoard):
        return ()
    got = board.guesses or (board.guesser() if board.guesser is not None else ())
    return tuple((rc, k) for rc, k in got if board.inside(*rc) and board[rc] == UNKNOWN
                 and rc not in board.blockers | board.bombs)  # fmt: skip
