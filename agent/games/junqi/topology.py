"""A Junqi board's shape as data: stations, one-step links and railway lines.

A `Topology` is built from a drawing (`from_drawing`, the real board in `layouts`) or
from a 0/1 rail mask (`from_rail_mask`, the seed's simplified 13x5 grid). Everything the
move rules need is derived from it once: each station's neighbours, the rail stations,
and the "straight on" continuation that non-engineers follow along a rail line.

Drawing format: station rows alternate with link rows. In a station row, column 2c holds
station c (`o` ordinary station, `C` camp, `H` headquarters) and column 2c+1 the link to
its right (`-` road, `=` railway, space none). In a link row, column 2c holds the link
down to the next row (`|` road, `#` railway, space none) and column 2c+1 the diagonal
links of that square (`\\` down-right, `/` down-left, `X` both, space none). Every rail
segment is also a one-step link. Railway lines are the maximal straight runs of rail
segments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property, partial
from typing import Callable, Iterable, Sequence

Station = tuple[int, int]

# Neighbours are tried in this order, so ties between equally short routes break the way
# the seed's BFS breaks them (right, down, left, up); diagonals (camp links) come last.
DIRECTION_ORDER: tuple[tuple[int, int], ...] = (
    (0, 1), (1, 0), (0, -1), (-1, 0), (1, 1), (1, -1), (-1, -1), (-1, 1),
)


class StationKind(Enum):
    STATION = "station"  # 兵站
    CAMP = "camp"  # 行营: a piece standing here cannot be attacked
    HEADQUARTERS = "headquarters"  # 大本营: a piece standing here never moves again


_STATION_CHARS = {"o": StationKind.STATION, "C": StationKind.CAMP, "H": StationKind.HEADQUARTERS}


class TopologyError(ValueError):
    """Topology data that does not describe a board (a programming error in the data)."""


def _direction_rank(a: Station, b: Station) -> int:
    step = ((b[0] > a[0]) - (b[0] < a[0]), (b[1] > a[1]) - (b[1] < a[1]))
    return DIRECTION_ORDER.index(step)


@dataclass(frozen=True)
class Topology:
    """The stations of a rows x cols board and how they connect.

    `links` are the one-step moves (roads, camp diagonals, and every rail segment);
    `rail_lines` are straight station sequences; `curves` are stations where two rail
    lines end and join as an arc (followed by every piece only when the rules ask for it);
    `front_after_row` is where the drawing leaves the gap between the two sides.
    """

    name: str
    rows: int
    cols: int
    kinds: tuple[tuple[StationKind, ...], ...]
    links: frozenset[frozenset[Station]]
    rail_lines: tuple[tuple[Station, ...], ...]
    curves: tuple[Station, ...] = ()
    front_after_row: int | None = None
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if len(self.kinds) != self.rows or any(len(row) != self.cols for row in self.kinds):
            raise TopologyError(f"{self.name}: kinds must be {self.rows}x{self.cols}")
        for link in self.links:
            if len(link) != 2 or not all(self.inside(s) for s in link):
                raise TopologyError(f"{self.name}: link {sorted(link)} must join two stations on the board")
            a, b = sorted(link)
            if max(abs(a[0] - b[0]), abs(a[1] - b[1])) != 1:
                raise TopologyError(f"{self.name}: link {a}-{b} joins stations that are not neighbours")
        for line in self.rail_lines:
            if len(line) < 2:
                raise TopologyError(f"{self.name}: rail line {line} needs two stations or more")
            for a, b in zip(line, line[1:]):
                if frozenset((a, b)) not in self.links:
                    raise TopologyError(f"{self.name}: rail segment {a}-{b} is not a link")
        for s in self.curves:
            ends = [line for line in self.rail_lines if s in (line[0], line[-1])]
            if len(ends) != 2:
                raise TopologyError(f"{self.name}: curve {s} must be the end of exactly two rail lines")

    # -- queries --------------------------------------------------------------
    def inside(self, s: Station) -> bool:
        return 0 <= s[0] < self.rows and 0 <= s[1] < self.cols

    def kind(self, s: Station) -> StationKind:
        return self.kinds[s[0]][s[1]]

    @cached_property
    def stations(self) -> tuple[Station, ...]:
        return tuple((r, c) for r in range(self.rows) for c in range(self.cols))

    @cached_property
    def neighbours(self) -> dict[Station, tuple[Station, ...]]:
        """One-step destinations of each station, in `DIRECTION_ORDER`."""
        return self._ordered(self.links)

    @cached_property
    def rail_neighbours(self) -> dict[Station, tuple[Station, ...]]:
        """Adjacent stations along a rail line, in `DIRECTION_ORDER`."""
        return self._ordered(self.rail_segments)

    @cached_property
    def rail_segments(self) -> frozenset[frozenset[Station]]:
        return frozenset(frozenset(p) for line in self.rail_lines for p in zip(line, line[1:]))

    @cached_property
    def rail_stations(self) -> frozenset[Station]:
        return frozenset(s for line in self.rail_lines for s in line)

    def on_rail(self, s: Station) -> bool:
        return s in self.rail_stations

    def straight_next(self, prev: Station, cur: Station, curved: bool = False) -> Station | None:
        """The station after `cur` when travelling prev -> cur straight along a rail line
        (through an arc at a curve station when `curved`), or None where the line ends."""
        nxt = self._straight.get((prev, cur))
        if nxt is None and curved:
            nxt = self._arcs.get((prev, cur))
        return nxt

    # -- derived tables -------------------------------------------------------
    def _ordered(self, links: Iterable[frozenset[Station]]) -> dict[Station, tuple[Station, ...]]:
        out: dict[Station, list[Station]] = {s: [] for s in self.stations}
        for link in links:
            a, b = tuple(link)
            out[a].append(b)
            out[b].append(a)
        return {s: tuple(sorted(ns, key=partial(_direction_rank, s))) for s, ns in out.items()}

    @cached_property
    def _straight(self) -> dict[tuple[Station, Station], Station]:
        table: dict[tuple[Station, Station], Station] = {}
        for line in self.rail_lines:
            for a, b, c in zip(line, line[1:], line[2:]):
                table[(a, b)] = c
                table[(c, b)] = a
        return table

    @cached_property
    def _arcs(self) -> dict[tuple[Station, Station], Station]:
        table: dict[tuple[Station, Station], Station] = {}
        for s in self.curves:
            a, b = (line[1] if line[0] == s else line[-2] for line in self.rail_lines if s in (line[0], line[-1]))
            table[(a, s)] = b
            table[(b, s)] = a
        return table

    # -- constructors ---------------------------------------------------------
    @classmethod
    def from_drawing(
        cls,
        name: str,
        drawing: str,
        *,
        curves: Sequence[Station] = (),
        front_after_row: int | None = None,
        description: str = "",
    ) -> "Topology":
        lines = drawing.strip("\n").splitlines()
        if len(lines) % 2 == 0:
            raise TopologyError(f"{name}: a drawing has station rows with link rows between them (odd line count)")
        width = max(len(ln) for ln in lines)
        if width % 2 == 0:
            raise TopologyError(f"{name}: station rows are 2*cols-1 characters wide")
        lines = [ln.ljust(width) for ln in lines]
        rows, cols = (len(lines) + 1) // 2, (width + 1) // 2
        kinds: list[list[StationKind]] = []
        links: set[frozenset[Station]] = set()
        rail: set[frozenset[Station]] = set()

        def bad(t: int, x: int, what: str) -> TopologyError:
            return TopologyError(f"{name}: drawing line {t + 1}, column {x + 1}: {lines[t][x]!r} is not {what}")

        for t, text in enumerate(lines):
            r = t // 2
            for x, ch in enumerate(text):
                c = x // 2
                if t % 2 == 0 and x % 2 == 0:
                    if ch not in _STATION_CHARS:
                        raise bad(t, x, "a station (o, C or H)")
                    if c == 0:
                        kinds.append([])
                    kinds[r].append(_STATION_CHARS[ch])
                elif t % 2 == 0:
                    if ch not in "-= ":
                        raise bad(t, x, "a horizontal link (-, = or space)")
                    if ch != " ":
                        links.add(frozenset(((r, c), (r, c + 1))))
                        if ch == "=":
                            rail.add(frozenset(((r, c), (r, c + 1))))
                elif x % 2 == 0:
                    if ch not in "|# ":
                        raise bad(t, x, "a vertical link (|, # or space)")
                    if ch != " ":
                        links.add(frozenset(((r, c), (r + 1, c))))
                        if ch == "#":
                            rail.add(frozenset(((r, c), (r + 1, c))))
                else:
                    if ch not in "\\/X ":
                        raise bad(t, x, "a diagonal link (\\, /, X or space)")
                    if ch in "\\X":
                        links.add(frozenset(((r, c), (r + 1, c + 1))))
                    if ch in "/X":
                        links.add(frozenset(((r, c + 1), (r + 1, c))))
        return cls(
            name=name, rows=rows, cols=cols, kinds=tuple(tuple(k) for k in kinds), links=frozenset(links),
            rail_lines=_straight_runs(rows, cols, rail), curves=tuple(curves), front_after_row=front_after_row,
            description=description,
        )

    @classmethod
    def from_rail_mask(cls, name: str, mask: Sequence[str], *, description: str = "") -> "Topology":
        """Every cell is a station; `0` cells are railway, joined to their orthogonal `0`
        neighbours; there are no other links (the seed's grid knows only rails)."""
        rows, cols = len(mask), len(mask[0])
        if any(len(row) != cols or set(row) - {"0", "1"} for row in mask):
            raise TopologyError(f"{name}: a rail mask is rows of equal length, made of 0 (rail) and 1")
        rail_cells = {(r, c) for r in range(rows) for c in range(cols) if mask[r][c] == "0"}
        rail = {
            frozenset(((r, c), (r + dr, c + dc)))
            for (r, c) in rail_cells
            for dr, dc in ((0, 1), (1, 0))
            if (r + dr, c + dc) in rail_cells
        }
        kinds = tuple(tuple(StationKind.STATION for _ in range(cols)) for _ in range(rows))
        return cls(
            name=name, rows=rows, cols=cols, kinds=kinds, links=frozenset(rail),
            rail_lines=_straight_runs(rows, cols, rail), description=description,
        )


def _straight_runs(rows: int, cols: int, rail: set[frozenset[Station]]) -> tuple[tuple[Station, ...], ...]:
    """Maximal horizontal, then vertical, runs of consecutive rail segments."""
    runs: list[tuple[Station, ...]] = []
    orders: tuple[tuple[int, int, Callable[[int, int], Station]], ...] = (
        (rows, cols, lambda i, j: (i, j)), (cols, rows, lambda i, j: (j, i)),
    )
    for outer, inner, at in orders:
        for i in range(outer):
            run: list[Station] = []
            for j in range(inner - 1):
                if frozenset((at(i, j), at(i, j + 1))) in rail:
                    run = run or [at(i, j)]
                    run.append(at(i, j + 1))
                elif run:
                    runs.append(tuple(run))
                    run = []
            if run:
                runs.append(tuple(run))
    return tuple(runs)
