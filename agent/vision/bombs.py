"""A colour bomb told by what the game did with it.

Games have a piece that, swapped with a tile, clears every tile of that tile's colour
(a colour bomb, a hypercube). Its look is no help: a chocolate ball with sprinkles is
mostly dark, a rainbow cube many hues; calibration and the class grower take it for a
special of unknown kind, which the player only swaps when nothing else matches (a trial).
What the game does when it is swapped tells: every tile of the partner's colour goes at
once, wherever it stood.

From a move (the board at rest before it and after it, as classes, and the two cells
swiped): the partner's colour K had tiles in several columns; in each of them the lowest
K tile was cleared (something of another colour now stands there; a tile falling into
that cell comes from above, where no K is left). A match of K, even with cascades, leaves
the lowest K tiles of the columns it never reached where they were.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agent.vision.classify import EMPTY_LABEL, UNKNOWN_LABEL

# Columns holding the colour before the move, at least; and the share of them whose lowest
# tile of it went (a tile of it may drop into one from the refill).
BOMB_COLUMNS = 4
BOMB_SHARE = 0.8

Labels = Sequence[Sequence[str]]


def fired_bomb(before: Labels, after: Labels, swiped: Sequence[tuple[int, int]],
               kind_of: Callable[[str], str]) -> str | None:  # fmt: skip
    """The class of the swiped piece that cleared every tile of its partner's colour, or
    None. `kind_of` gives a class's colour kind ("?" for a look of unknown kind)."""
    if len(swiped) != 2 or not before or [len(r) for r in before] != [len(r) for r in after]:
        return None
    a, b = swiped
    rows, cols = len(before), len(before[0])
    if not all(0 <= r < rows and 0 <= c < cols for r, c in (a, b)):
        return None
    for piece, partner in ((a, b), (b, a)):
        look, tile = before[piece[0]][piece[1]], before[partner[0]][partner[1]]
        if look in (EMPTY_LABEL, UNKNOWN_LABEL) or tile in (EMPTY_LABEL, UNKNOWN_LABEL) or kind_of(look) != "?":
            continue
        colour = kind_of(tile)
        if colour in ("?", EMPTY_LABEL, "#"):
            continue
        # the board before the swap, as it was when the bomb went off: the tile where the bomb was
        lowest: dict[int, int] = {}
        for r in range(rows):
            for c in range(cols):
                at = partner if (r, c) == piece else piece if (r, c) == partner else (r, c)
                v = before[at[0]][at[1]]
                if v not in (EMPTY_LABEL, UNKNOWN_LABEL) and kind_of(v) == colour:
                    lowest[c] = r
        if len(lowest) < BOMB_COLUMNS:
            continue
        gone = sum(1 for c, r in lowest.items() if after[r][c] not in (EMPTY_LABEL, UNKNOWN_LABEL)
                   and kind_of(after[r][c]) != colour)  # fmt: skip
        if gone >= BOMB_SHARE * len(lowest):
            return look
    return None


__all__ = ["BOMB_COLUMNS", "BOMB_SHARE", "fired_bomb"]
