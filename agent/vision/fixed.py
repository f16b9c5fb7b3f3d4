"""Blockers told in play: a look the game never moves is no piece.

Calibration tells blockers by where they lie on a still board (agent.vision.roles); a
crate or two placed anywhere, or a block of crates cut by a cracked one, lies where a
tile could, and comes out a colour. In play the game shows what moves. From each move
(the board at rest before it and after it, read as classes, and what the game did with
the swipe):

- gravity, in a game whose pieces fall (`RoleHints.falls`): a cell that shows the same
  look after the move while cells above it and below it in its column changed kept its
  place as pieces went past it, which no piece does (it falls with its column into what
  a match cleared below it). A tile shows this too when the piece that fell into its
  cell looks like it (about one time in six on a board of five or six colours, measured
  on the saga family), so a look is taken for fixed only when it stayed so on
  STAY_MOVES moves at least, and stayed at least STAY_RATIO times as often as it changed
  under the same conditions;
- swipes: a swipe the game ignored (the screen never moved) is refused by a cell that
  does not move; where the other swiped cell is a look the game has moved, the look of
  the refusing cell does not move. REFUSED_MOVES such moves;
- a look the game has moved (a swipe of it the game took, or undid after showing the
  swap) is a piece, whatever else was seen: never a blocker. The agent matches every
  colour in its first moves, so a real colour has this proof long before the rest could
  mislead it.

- lines at rest: the board after the move, read the same twice once the move's time
  is over, still shows a look n in a line (`Move.lines`, the game's match length): the
  game would have cleared a colour's line, so that look matches nothing, as calibration
  decides on a still board (agent.vision.roles).

One move of each of the first two kinds counts as well. Only pieces' looks are judged
(tiles, specials, colourless); a look that is a blocker already, a hole or a layer has
nothing to learn here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agent.vision.classify import EMPTY_LABEL, UNKNOWN_LABEL
from agent.vision.roles import in_runs

Cell = tuple[int, int]
PIECE_ROLES = ("tile", "special", "colourless")
STAY_MOVES = 3  # moves on which a look kept its place while its column fell
STAY_RATIO = 2.0  # ... at least this many times as often as it changed so
REFUSED_MOVES = 2  # moves whose ignored swipe a look refused


@dataclass
class _Tally:
    stays: int = 0
    changes: int = 0
    stay_moves: set[int] = field(default_factory=set)
    refused_moves: set[int] = field(default_factory=set)
    lined: int = 0  # cells in a line of it on a board at rest

    def fixed(self) -> bool:
        if self.lined:
            return True
        stayed = len(self.stay_moves) >= STAY_MOVES and self.stays >= STAY_RATIO * self.changes
        refused = len(self.refused_moves) >= REFUSED_MOVES
        both = bool(self.stay_moves) and bool(self.refused_moves) and self.stays >= STAY_RATIO * self.changes
        return stayed or refused or both


@dataclass(frozen=True)
class Move:
    """One move as the screen showed it: the classes of the board at rest before and after
    (same shape), the cells the swipe went from and to, and what the game did with it:
    `moved` (it showed the swap: took it, or undid it after showing it) or `ignored`
    (the screen never moved). `lines`: the game's match length, when `after` was read at
    rest all the same with a look in such a line."""

    before: Sequence[Sequence[str]]
    after: Sequence[Sequence[str]]
    swiped: tuple[Cell, ...]
    moved: bool
    ignored: bool
    lines: int | None = None  # `after` is at rest, though a look lies this many in a line on it


class FixedLooks:
    """Watches moves for looks that never move (see the module docstring). `roles` gives
    a class's role now (a profile's `role_of`)."""

    def __init__(self, falls: bool = True) -> None:
        self.falls = falls
        self._moves = 0
        self._tally: dict[str, _Tally] = {}
        self.movable: set[str] = set()  # looks the game has moved
        self.evidence: dict[str, str] = {}  # look -> what showed it fixed, once it is

    def observe(self, move: Move, role_of: dict[str, str]) -> list[str]:
        """Feed one move; the looks now known to be fixed (each once), in letter order."""
        self._moves += 1
        n = self._moves

        def piece(v: str) -> bool:
            return v not in (EMPTY_LABEL, UNKNOWN_LABEL) and role_of.get(v, "tile") in PIECE_ROLES

        cells = [move.before[r][c] for r, c in move.swiped if _inside(move.before, r, c)]
        if move.moved:
            self.movable.update(v for v in cells if piece(v))
        elif move.ignored and len(cells) == 2:
            for v, other in ((cells[0], cells[1]), (cells[1], cells[0])):
                if piece(v) and v not in self.movable and other in self.movable:
                    self._tally.setdefault(v, _Tally()).refused_moves.add(n)
        if self.falls and not move.ignored and len(move.after) == len(move.before):
            self._gravity(move, piece, role_of, n)
        if move.lines is not None:
            where: dict[str, set[Cell]] = {}
            for r, row in enumerate(move.after):
                for c, v in enumerate(row):
                    if piece(v):
                        where.setdefault(v, set()).add((r, c))
            for v, cells_of in where.items():
                lined = len(in_runs(cells_of, move.lines))
                if lined:
                    self._tally.setdefault(v, _Tally()).lined += lined
        out = []
        for v in sorted(self._tally):
            t = self._tally[v]
            if v not in self.evidence and v not in self.movable and piece(v) and t.fixed():
                self.evidence[v] = (f"lay in a line on a board at rest ({t.lined} cells), kept its place "
                                    f"while its column fell on {len(t.stay_moves)} moves ({t.stays} cells, "
                                    f"{t.changes} changed so), refused {len(t.refused_moves)} swipes the "
                                    "game ignored")  # fmt: skip
                out.append(v)
        return out

    def _gravity(self, move: Move, piece: Callable[[str], bool], role_of: dict[str, str], n: int) -> None:
        before, after = move.before, move.after
        rows, cols = len(before), len(before[0]) if before else 0
        if any(len(row) != cols for row in after):
            return
        known = (EMPTY_LABEL, UNKNOWN_LABEL)
        for c in range(cols):
            changed = [before[r][c] != after[r][c] and before[r][c] not in known and after[r][c] not in known
                       for r in range(rows)]  # fmt: skip
            for r in range(1, rows - 1):
                v = before[r][c]
                if not piece(v) or not any(changed[:r]) or not any(changed[r + 1 :]):
                    continue
                if after[r][c] == v:
                    t = self._tally.setdefault(v, _Tally())
                    t.stays += 1
                    t.stay_moves.add(n)
                elif changed[r] and role_of.get(after[r][c]) != "blocker":  # (a crate cracking is no fall)
                    self._tally.setdefault(v, _Tally()).changes += 1


def _inside(labels: Sequence[Sequence[str]], r: int, c: int) -> bool:
    return 0 <= r < len(labels) and 0 <= c < len(labels[r])


__all__ = ["FixedLooks", "Move", "REFUSED_MOVES", "STAY_MOVES", "STAY_RATIO"]
