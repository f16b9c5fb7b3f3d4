"""Cell values and the text notation of a Color Lines position.

A board is a rows x cols int8 array: 0 is an empty cell, 1..9 a colour, `WILD` the
rainbow ball and `UNKNOWN` a cell a screen reader could not classify. In text, one line
per row: `.` empty, `A`..`I` colours, `*` the rainbow ball, `?` unknown. A position may
add a `next: ABC` line (the previewed colours) and a `score: N` line; both round-trip.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agent.errors import NotationError

EMPTY = 0
WILD = 10
UNKNOWN = -1
LETTERS = "ABCDEFGHI"


class LinesNotationError(NotationError):
    hint = "one line per row: '.' empty, A-I colours, '*' rainbow ball; optional 'next: ABC' and 'score: N' lines"


def char_of(v: int) -> str:
    if v == EMPTY:
        return "."
    if v == WILD:
        return "*"
    if v == UNKNOWN:
        return "?"
    return LETTERS[v - 1]


def value_of(ch: str) -> int:
    if ch == ".":
        return EMPTY
    if ch == "*":
        return WILD
    if ch == "?":
        return UNKNOWN
    up = ch.upper()
    if len(up) == 1 and up in LETTERS:
        return LETTERS.index(up) + 1
    raise LinesNotationError(f"{ch!r} is not a cell ('.', A-I or '*')")


def format_board(board: np.ndarray) -> str:
    return "\n".join("".join(char_of(int(v)) for v in row) for row in np.asarray(board).tolist())


def parse_board(text: str) -> np.ndarray:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        raise LinesNotationError("empty board text")
    widths = {len(ln) for ln in lines}
    if len(widths) != 1:
        raise LinesNotationError(f"rows have different lengths {sorted(widths)}: every row needs one character per cell")
    grid = []
    for r, ln in enumerate(lines):
        row = []
        for c, ch in enumerate(ln):
            try:
                row.append(value_of(ch))
            except LinesNotationError:
                raise LinesNotationError(f"row {r + 1}, column {c + 1}: {ch!r} is not a cell ('.', A-I or '*')") from None
        grid.append(row)
    return np.array(grid, dtype=np.int8)


@dataclass(frozen=True, eq=False)
class Position:
    """What a player sees: the board, the previewed colours (empty if none) and the score."""

    board: np.ndarray
    next_balls: tuple[int, ...] = ()
    score: int = 0

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Position)
            and np.array_equal(self.board, other.board)
            and self.next_balls == other.next_balls
            and self.score == other.score
        )

    def __str__(self) -> str:
        text = format_board(self.board)
        if self.next_balls:
            text += "\nnext: " + "".join(char_of(v) for v in self.next_balls)
        if self.score:
            text += f"\nscore: {self.score}"
        return text

    @classmethod
    def parse(cls, text: str) -> "Position":
        rows: list[str] = []
        nxt: tuple[int, ...] = ()
        score = 0
        for ln in text.strip().splitlines():
            s = ln.strip()
            if not s:
                continue
            key, _, rest = s.partition(":")
            if _ and key.strip().lower() == "next":
                nxt = tuple(value_of(ch) for ch in rest.strip())
            elif _ and key.strip().lower() == "score":
                try:
                    score = int(rest.strip())
                except ValueError:
                    raise LinesNotationError(f"score {rest.strip()!r} is not a whole number") from None
            else:
                rows.append(s)
        return cls(parse_board("\n".join(rows)), nxt, score)
