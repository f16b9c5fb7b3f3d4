"""A Junqi position and its text notation.

One line per row, one character per station: `.` an empty station, a piece letter
(`pieces.LEGEND`; UPPERCASE red, lowercase blue). Twelve rows are the real board
(`layouts.STANDARD`), thirteen the seed's mask (`layouts.SEED_MASK`). Blank lines and
lines starting with `#` are ignored, so a file may carry the legend as comments. The
grid round-trips: `Board.parse(str(b)) == b`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Mapping

from agent.errors import NotationError
from agent.games.junqi.layouts import STANDARD, TOPOLOGIES, topology_for_rows
from agent.games.junqi.pieces import EMPTY_CHAR, LEGEND, Piece
from agent.games.junqi.topology import Station, Topology


class JunqiNotationError(NotationError):
    hint = f"write one line per row and one character per station: {LEGEND}"


@dataclass(frozen=True)
class Board:
    """Pieces on a topology. `cells[r][c]` is the piece at station (r, c) or None."""

    topology: Topology
    cells: tuple[tuple[Piece | None, ...], ...]

    def __post_init__(self) -> None:
        t = self.topology
        if len(self.cells) != t.rows or any(len(row) != t.cols for row in self.cells):
            raise JunqiNotationError(f"a {t.name} board is {t.rows}x{t.cols} stations")

    # -- construction ---------------------------------------------------------
    @classmethod
    def empty(cls, topology: Topology = STANDARD) -> "Board":
        return cls(topology, tuple(tuple(None for _ in range(topology.cols)) for _ in range(topology.rows)))

    @classmethod
    def from_pieces(cls, pieces: Mapping[Station, Piece], topology: Topology = STANDARD) -> "Board":
        return cls.empty(topology).with_pieces(pieces)

    def with_pieces(self, pieces: Mapping[Station, Piece | None]) -> "Board":
        grid = [list(row) for row in self.cells]
        for (r, c), piece in pieces.items():
            if not self.topology.inside((r, c)):
                raise JunqiNotationError(f"station {r},{c} is off the {self.topology.rows}x{self.topology.cols} board")
            grid[r][c] = piece
        return Board(self.topology, tuple(tuple(row) for row in grid))

    # -- notation -------------------------------------------------------------
    @classmethod
    def parse(cls, text: str, topology: Topology | None = None) -> "Board":
        numbered = [
            (n, ln.strip()) for n, ln in enumerate(text.splitlines(), start=1)
            if ln.strip() and not ln.strip().startswith("#")
        ]
        if not numbered:
            raise JunqiNotationError("the board text has no rows")
        if topology is None:
            topology = topology_for_rows(len(numbered))
            if topology is None:
                shapes = " or ".join(f"{t.rows} ({t.name})" for t in TOPOLOGIES.values())
                raise JunqiNotationError(f"a junqi board has {shapes} rows, got {len(numbered)}")
        elif len(numbered) != topology.rows:
            raise JunqiNotationError(f"a {topology.name} board has {topology.rows} rows, got {len(numbered)}")
        grid: list[tuple[Piece | None, ...]] = []
        for r, (line_no, text_row) in enumerate(numbered):
            if len(text_row) != topology.cols:
                raise JunqiNotationError(
                    f"line {line_no} (row {r}) has {len(text_row)} characters: "
                    f"every row needs one per station ({topology.cols})"
                )
            row: list[Piece | None] = []
            for c, ch in enumerate(text_row):
                piece = None if ch == EMPTY_CHAR else Piece.from_char(ch)
                if piece is None and ch != EMPTY_CHAR:
                    raise JunqiNotationError(f"line {line_no} (row {r}, column {c}): {ch!r} is not a piece or '.'")
                row.append(piece)
            grid.append(tuple(row))
        return cls(topology, tuple(grid))

    def __str__(self) -> str:
        return "\n".join("".join(EMPTY_CHAR if p is None else p.char for p in row) for row in self.cells)

    def to_text(self, legend: bool = True) -> str:
        """The notation, with the legend as comment lines when `legend` (still parses)."""
        head = f"# junqi board ({self.topology.name}), rows 0-{self.topology.rows - 1} top to bottom\n# {LEGEND}\n"
        return (head if legend else "") + str(self) + "\n"

    # -- queries --------------------------------------------------------------
    def __getitem__(self, s: Station) -> Piece | None:
        return self.cells[s[0]][s[1]]

    def pieces(self) -> Iterator[tuple[Station, Piece]]:
        for r, row in enumerate(self.cells):
            for c, p in enumerate(row):
                if p is not None:
                    yield (r, c), p
