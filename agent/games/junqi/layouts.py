"""The two boards as data: the real 12x5 Junqi (陆战棋) board and the seed's 13x5 mask.

The standard board follows these references (checked before encoding it):
- the 2012 Chinese Computer Games Championship Junqi protocol (2012中国计算机博弈大赛
  军棋博弈项目协议, copy at shuangxunian.github.io/2022/09/30/militaryChessAgreementInCGV1):
  12 rows x 5 columns, 60 stations; flags and landmines never move, a piece in a
  headquarters never moves; one step along roads; engineers go any distance along rails
  and turn, other pieces go straight; pieces in camps cannot be attacked.
- samuelyuan/online-junqi, src/lib/BoardConstants.ts: camps (bunkers) at b3 d3 c4 b5 d5 and
  mirrored, headquarters b1 d1 / b12 d12, rails on rows 2, 6, 7, 11 and on columns a and e
  from row 2 to row 11 (1-based); that board omits the middle crossing.
- JimZhouZZY/JunQi, src/logic/isLegalAction.js: the same stations 0-based, camp diagonals,
  the middle crossing 5,2-6,2 on the railway, and no link at all between 5,1-6,1 and
  5,3-6,3 (the mountains).

Coordinates are (row, col), 0-based, row 0 at the top. Rows 0-5 are one side (its
headquarters on row 0), rows 6-11 the other (headquarters on row 11).
"""

from __future__ import annotations

from agent.games.junqi.topology import Topology

# o station, C camp (行营), H headquarters (大本营); - | road, = # railway, \ / camp diagonals.
# Between rows 5 and 6 only columns 0, 2 and 4 cross the front (rails); 1 and 3 are mountains.
STANDARD_DRAWING = r"""
o-H-o-H-o
| | | | |
o=o=o=o=o
#\|/|\|/#
o-C-o-C-o
#/|\|/|\#
o-o-C-o-o
#\|/|\|/#
o-C-o-C-o
#/|\|/|\#
o=o=o=o=o
#   #   #
o=o=o=o=o
#\|/|\|/#
o-C-o-C-o
#/|\|/|\#
o-o-C-o-o
#\|/|\|/#
o-C-o-C-o
#/|\|/|\#
o=o=o=o=o
| | | | |
o-H-o-H-o
"""

# The references draw right-angle corners on the two-player board. Some boards (and the
# four-player board) draw the outer corners of the rail loop as arcs that every piece may
# follow; `MoveRules(curved_corners=True)` turns these four into such arcs.
STANDARD_CURVES = ((1, 0), (1, 4), (10, 0), (10, 4))

STANDARD = Topology.from_drawing(
    "standard",
    STANDARD_DRAWING,
    curves=STANDARD_CURVES,
    front_after_row=5,
    description="the real 12x5 board: 60 stations, 10 camps, 4 headquarters, 32 rail stations",
)

# The seed's `noChessBoard` (seed 002): 0 is railway, 1 is not. Its row 6 is the gap between
# the two fronts (rails at columns 0, 2, 4; mountains at 1 and 3), so it has 13 rows.
SEED_MASK_ROWS = (
    "11111",
    "00000",
    "01110",
    "01110",
    "01110",
    "00000",
    "01010",
    "00000",
    "01110",
    "01110",
    "01110",
    "00000",
    "11111",
)

SEED_MASK = Topology.from_rail_mask(
    "seed13x5",
    SEED_MASK_ROWS,
    description="the seed's simplified 13x5 rail mask: every cell a station, 0 cells railway, no roads",
)

TOPOLOGIES: dict[str, Topology] = {t.name: t for t in (STANDARD, SEED_MASK)}


def topology_for_rows(rows: int) -> Topology | None:
    """The topology whose boards have this many rows (they all differ), if any."""
    return next((t for t in TOPOLOGIES.values() if t.rows == rows), None)
