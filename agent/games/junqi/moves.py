"""Junqi move rules: where a piece can go, and by which route.

- Any piece moves one step along a link (road, camp diagonal, or rail segment).
- An engineer (工兵) standing on a rail station may also travel any distance along
  connected rails, turning at junctions; its route is a breadth-first search over rail
  stations, so it is the shortest in rail segments traversed (`Destination.steps`), with
  ties broken by trying neighbours right, down, left, up (the seed's order).
- Every other piece on a rail station travels straight along one rail line; with
  `MoveRules(curved_corners=True)` it also follows the topology's arcs.
- Nothing passes through a piece. A move ends on the first enemy piece it reaches (an
  attack); an own piece stops it before.
- Camps are safe: a piece in a camp cannot be attacked, so an enemy in a camp is not a
  destination and, like any piece, it blocks the way (on the real board no camp is on a
  rail, so this only ever refuses a one-step attack).
- A piece in a headquarters does not move; landmines and flags do not move.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from enum import Enum

from agent.errors import AgentError
from agent.games.junqi.board import Board
from agent.games.junqi.pieces import LEGEND, Kind, Side
from agent.games.junqi.topology import Station, StationKind


class MoveError(AgentError, ValueError):
    """Asking for the moves of a station that holds no movable-in-principle piece."""

    hint = "give --from the station of one of your pieces (ROW,COL, 0-based from the top-left)"


@dataclass(frozen=True)
class MoveRules:
    curved_corners: bool = False  # non-engineers may follow the topology's arcs


@dataclass(frozen=True)
class Destination:
    """A legal move's end, the route to it (start and end included) and how it travels."""

    station: Station
    route: tuple[Station, ...]
    by: str  # "rail" when every step is a rail segment, else "road"
    attack: bool  # the move ends on an enemy piece

    @property
    def steps(self) -> int:
        return len(self.route) - 1


class _Stop(Enum):
    PASS = "pass"  # empty: a destination, and the way goes on
    ATTACK = "attack"  # an enemy that may be attacked: a destination, the way ends
    BLOCKED = "blocked"  # own piece, or an enemy in a camp: neither


def _stop(board: Board, side: Side, s: Station) -> _Stop:
    piece = board[s]
    if piece is None:
        return _Stop.PASS
    if piece.side is side or board.topology.kind(s) is StationKind.CAMP:
        return _Stop.BLOCKED
    return _Stop.ATTACK


def _mover_side(board: Board, start: Station) -> Side:
    if not board.topology.inside(start):
        raise MoveError(f"station {start[0]},{start[1]} is off the {board.topology.rows}x{board.topology.cols} board")
    piece = board[start]
    if piece is None:
        raise MoveError(f"there is no piece at {start[0]},{start[1]}")
    return piece.side


def immobile_reason(board: Board, start: Station) -> str | None:
    """Why the piece at `start` cannot move at all, or None if the rules let it move."""
    piece = board[start]
    if piece is None:
        return None
    if not piece.kind.moves:
        return f"a {piece.kind.english} never moves"
    if board.topology.kind(start) is StationKind.HEADQUARTERS:
        return "a piece in a headquarters never moves"
    return None


def engineer_routes(board: Board, start: Station, side: Side | None = None) -> dict[Station, tuple[Station, ...]]:
    """Shortest rail routes from `start` to every station an engineer there can reach
    by rail (empty, or an enemy it may attack). Empty when `start` is not on a rail."""
    side = side or _mover_side(board, start)
    t = board.topology
    if not t.on_rail(start):
        return {}
    parent: dict[Station, Station] = {}
    seen = {start}
    queue = deque([start])
    reached: list[Station] = []
    while queue:
        s = queue.popleft()
        for n in t.rail_neighbours[s]:
            if n in seen:
                continue
            seen.add(n)
            stop = _stop(board, side, n)
            if stop is _Stop.BLOCKED:
                continue
            parent[n] = s
            reached.append(n)
            if stop is _Stop.PASS:
                queue.append(n)
    routes: dict[Station, tuple[Station, ...]] = {}
    for goal in reached:
        path = [goal]
        while path[-1] != start:
            path.append(parent[path[-1]])
        routes[goal] = tuple(reversed(path))
    return routes


def engineer_route(board: Board, start: Station, goal: Station, side: Side | None = None) -> tuple[Station, ...] | None:
    """The seed's question: the shortest rail route from `start` to `goal`, or None."""
    return engineer_routes(board, start, side).get(goal)


def straight_routes(board: Board, start: Station, rules: MoveRules = MoveRules(), side: Side | None = None) -> dict[Station, tuple[Station, ...]]:
    """Routes of a non-engineer travelling straight along each rail line through `start`."""
    side = side or _mover_side(board, start)
    t = board.topology
    routes: dict[Station, tuple[Station, ...]] = {}
    for first in t.rail_neighbours[start]:
        walk = [start]
        prev: Station = start
        cur: Station | None = first
        while cur is not None and cur != start:
            stop = _stop(board, side, cur)
            if stop is _Stop.BLOCKED:
                break
            walk.append(cur)
            if cur not in routes or len(walk) < len(routes[cur]):
                routes[cur] = tuple(walk)
            if stop is _Stop.ATTACK:
                break
            prev, cur = cur, t.straight_next(prev, cur, rules.curved_corners)
    return routes


def destinations(board: Board, start: Station, rules: MoveRules = MoveRules()) -> dict[Station, Destination]:
    """Every legal destination of the piece at `start`, keyed and sorted by station."""
    side = _mover_side(board, start)
    piece = board[start]
    assert piece is not None
    if piece.kind is Kind.HIDDEN:
        raise MoveError(
            f"the piece at {start[0]},{start[1]} is face-down (X): its moves depend on its rank",
            hint=f"write the piece's letter instead of X: {LEGEND}",
        )
    if immobile_reason(board, start) is not None:
        return {}
    t = board.topology
    found: dict[Station, Destination] = {}

    def offer(route: tuple[Station, ...], attack: bool) -> None:
        goal = route[-1]
        if goal in found and found[goal].steps <= len(route) - 1:
            return
        by = "rail" if all(frozenset(p) in t.rail_segments for p in zip(route, route[1:])) else "road"
        found[goal] = Destination(goal, route, by, attack)

    for n in t.neighbours[start]:
        stop = _stop(board, side, n)
        if stop is not _Stop.BLOCKED:
            offer((start, n), stop is _Stop.ATTACK)
    far = engineer_routes(board, start, side) if piece.kind is Kind.ENGINEER else straight_routes(board, start, rules, side)
    for goal, route in far.items():
        offer(route, board[goal] is not None)
    return dict(sorted(found.items()))


def route(board: Board, start: Station, goal: Station, rules: MoveRules = MoveRules()) -> Destination | None:
    """The legal move of the piece at `start` that ends at `goal` (shortest route), or None."""
    return destinations(board, start, rules).get(goal)


def why_unreachable(board: Board, start: Station, goal: Station, rules: MoveRules = MoveRules()) -> str | None:
    """In words, why no legal move of the piece at `start` ends at `goal` (None if one does)."""
    if route(board, start, goal, rules) is not None:
        return None
    reason = immobile_reason(board, start)
    if reason is not None:
        return reason
    piece, there = board[start], board[goal]
    assert piece is not None
    if there is not None and there.side is piece.side:
        return f"a {there.side.value} piece of its own side stands there"
    if there is not None and board.topology.kind(goal) is StationKind.CAMP:
        return "a piece in a camp cannot be attacked"
    t = board.topology
    if not (t.on_rail(start) and t.on_rail(goal)):
        return "it is not one step away, and only rail moves go further"
    if piece.kind is Kind.ENGINEER:
        return "every rail route there is blocked by a piece"
    return "it is not one step away, nor straight along a clear rail line (only engineers turn)"
