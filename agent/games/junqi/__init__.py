"""Junqi (军棋 / 陆战棋, land battle chess): the board's rail network and piece moves.

`layouts` holds the boards as data (the real 12x5 board, the seed's 13x5 rail mask),
`topology` what is derived from them, `pieces` and `board` the position and its text
notation, `moves` the legal destinations and shortest routes (engineer BFS over rails),
`render` a PNG of a position with a route, `solve` the solver behind `agent solve --game junqi`, `game` the game in the registry.
"""

from agent.games.junqi.board import Board, JunqiNotationError
from agent.games.junqi.layouts import SEED_MASK, STANDARD, TOPOLOGIES
from agent.games.junqi.moves import (
    Destination,
    MoveError,
    MoveRules,
    destinations,
    engineer_route,
    engineer_routes,
    route,
    why_unreachable,
)
from agent.games.junqi.pieces import LEGEND, Kind, Piece, Side
from agent.games.junqi.topology import Station, StationKind, Topology

__all__ = [
    "Board", "Destination", "JunqiNotationError", "Kind", "LEGEND", "MoveError", "MoveRules", "Piece",
    "SEED_MASK", "STANDARD", "Side", "Station", "StationKind", "TOPOLOGIES", "Topology", "destinations",
    "engineer_route", "engineer_routes", "route", "why_unreachable",
]
