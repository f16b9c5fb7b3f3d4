"""Junqi moves: the seed's engineer BFS on its 13x5 mask, and the real board's rules
(corners, T-junctions, the front crossings, blocking, attacks, camps, headquarters,
immobile pieces, and the engineer's reach over the whole network)."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from agent.games.junqi.board import Board
from agent.games.junqi.layouts import SEED_MASK, SEED_MASK_ROWS, STANDARD
from agent.games.junqi.moves import (
    MoveError,
    MoveRules,
    destinations,
    engineer_route,
    engineer_routes,
    route,
    why_unreachable,
)
from agent.games.junqi.pieces import Kind, Piece, Side
from agent.games.junqi.topology import Topology

RED, BLUE = Side.RED, Side.BLUE


def red(kind: Kind = Kind.COMPANY) -> Piece:
    return Piece(RED, kind)


def blue(kind: Kind = Kind.COMPANY) -> Piece:
    return Piece(BLUE, kind)


ENGINEER = red(Kind.ENGINEER)


def board(pieces: dict, topology: Topology = STANDARD) -> Board:
    return Board.from_pieces(pieces, topology)


def reach(b: Board, start, rules: MoveRules = MoveRules()) -> set:
    return set(destinations(b, start, rules))


def is_rail_route(path, topology: Topology = STANDARD) -> bool:
    return all(frozenset(p) in topology.rail_segments for p in zip(path, path[1:]))


# -- the seed's BFS on its own mask ---------------------------------------------------


def seed_bfs(start, end, pieces) -> list | None:
    """The seed article's engineerRoute + bfs, transcribed: x is the column, y the row;
    every piece (both lists, the mover included) marks its cell 1; four directions
    right, down, left, up; a cell is marked when queued; the route follows `prev`."""
    roads = [[int(ch) for ch in row] for row in SEED_MASK_ROWS]
    for r, c in pieces:
        roads[r][c] = 1
    dx, dy = (1, 0, -1, 0), (0, 1, 0, -1)
    queue = deque([((start[1], start[0]), None)])
    while queue:
        node = queue.popleft()
        (x, y), _ = node
        if (x, y) == (end[1], end[0]):
            path = []
            while node is not None:
                path.append((node[0][1], node[0][0]))
                node = node[1]
            return path[::-1]
        for i in range(4):
            tx, ty = x + dx[i], y + dy[i]
            if 0 <= tx <= 4 and 0 <= ty <= 12 and roads[ty][tx] == 0:
                queue.append(((tx, ty), node))
                roads[ty][tx] = 1
    return None


def test_seed_routes_on_the_empty_mask_match_the_seed_bfs_for_every_pair():
    rails = sorted(SEED_MASK.rail_stations)
    for start in rails:
        b = board({start: ENGINEER}, SEED_MASK)
        routes = engineer_routes(b, start)
        assert set(routes) == set(rails) - {start}  # the mask's rails are all connected
        for goal in rails:
            if goal != start:
                assert list(routes[goal]) == seed_bfs(start, goal, [start]), (start, goal)


def test_seed_routes_with_pieces_in_the_way_match_the_seed_bfs():
    rng = np.random.default_rng(2)
    rails = sorted(SEED_MASK.rail_stations)
    blocked_somewhere = 0
    for _ in range(60):
        start = rails[rng.integers(len(rails))]
        others = [s for s in rails if s != start and rng.random() < rng.uniform(0.05, 0.3)]
        pieces = {start: ENGINEER} | {s: Piece(RED if rng.random() < 0.5 else BLUE, Kind.HIDDEN) for s in others}
        b = board(pieces, SEED_MASK)
        for goal in rails:
            if goal == start or goal in pieces:
                continue  # the seed marks an occupied goal as a wall; here an enemy there is attacked
            expected = seed_bfs(start, goal, pieces)
            got = engineer_route(b, start, goal)
            assert (list(got) if got else None) == expected, (start, goal, pieces)
            blocked_somewhere += expected is None
    assert blocked_somewhere > 0  # the samples did exercise dead ends


def test_seed_dead_end_returns_nothing():
    # The engineer at 1,0 is walled in by a piece on each of its two rail neighbours.
    b = board({(1, 0): ENGINEER, (1, 1): blue(), (2, 0): red()}, SEED_MASK)
    assert engineer_route(b, (1, 0), (11, 4)) is None
    assert set(engineer_routes(b, (1, 0))) == {(1, 1)}  # only the enemy, attacked


def test_seed_route_is_the_shortest_and_goes_around_a_piece():
    empty = board({(1, 0): ENGINEER}, SEED_MASK)
    assert len(engineer_route(empty, (1, 0), (11, 0))) - 1 == 10  # straight down column 0
    b = board({(1, 0): ENGINEER, (6, 0): red()}, SEED_MASK)
    path = engineer_route(b, (1, 0), (11, 0))
    assert (6, 0) not in path and path[-1] == (11, 0)
    assert len(path) - 1 == 14  # 1,0 -> 5,0 (4), -> 5,2 (2), -> 7,2 (2), -> 7,0 (2), -> 11,0 (4)


# -- the real board -----------------------------------------------------------------


def test_straight_pieces_stop_at_a_right_angle_corner_unless_it_is_curved():
    b = board({(2, 0): red()})
    assert (1, 0) in reach(b, (2, 0)) and (1, 1) not in reach(b, (2, 0))
    curved = reach(b, (2, 0), MoveRules(curved_corners=True))
    assert {(1, 1), (1, 4), (5, 4), (10, 4), (10, 0)} <= curved  # around the outer loop
    assert (5, 1) not in curved  # still no turning at a T-junction
    assert route(b, (2, 0), (1, 2), MoveRules(curved_corners=True)).route == ((2, 0), (1, 0), (1, 1), (1, 2))


def test_the_engineer_turns_corners():
    b = board({(2, 0): ENGINEER})
    assert route(b, (2, 0), (1, 2)).route == ((2, 0), (1, 0), (1, 1), (1, 2))


def test_straight_pieces_pass_t_junctions_without_turning():
    b = board({(3, 0): red()})
    got = reach(b, (3, 0))
    assert {(r, 0) for r in range(1, 11)} - {(3, 0)} <= got  # down column 0, across the front
    assert not got & {(5, 1), (6, 1), (1, 1)}
    assert route(b, (3, 0), (9, 0)).route == tuple((r, 0) for r in range(3, 10))
    b = board({(5, 1): red(Kind.BOMB)})
    assert reach(b, (5, 1)) == {(5, 0), (5, 2), (5, 3), (5, 4), (4, 1)}  # the row, and one step into the camp


def test_the_middle_crossing_is_a_short_line_of_its_own():
    b = board({(5, 2): red()})
    got = reach(b, (5, 2))
    assert (6, 2) in got and route(b, (5, 2), (6, 2)).by == "rail"
    assert not got & {(7, 2), (6, 1), (6, 3)}  # the line ends at 6,2 and nothing turns
    b = board({(5, 2): ENGINEER})
    assert route(b, (5, 2), (6, 0)).route == ((5, 2), (6, 2), (6, 1), (6, 0))


def test_columns_1_and_3_do_not_cross_the_front():
    for c in (1, 3):
        b = board({(5, c): red()})
        assert (6, c) not in reach(b, (5, c))
        b = board({(5, c): ENGINEER})
        path = route(b, (5, c), (6, c)).route
        assert len(path) - 1 == 3 and path[1] in {(5, c - 1), (5, c + 1)}
        # With both neighbours on row 5 taken, the station just across is out of reach.
        walled = board({(5, c): ENGINEER, (5, c - 1): red(), (5, c + 1): red()})
        assert route(walled, (5, c), (6, c)) is None
        assert "blocked" in why_unreachable(walled, (5, c), (6, c))


def test_own_pieces_block_and_the_engineer_goes_around():
    b = board({(1, 0): ENGINEER})
    assert route(b, (1, 0), (10, 0)).steps == 9
    b = board({(1, 0): ENGINEER, (3, 0): red()})
    d = route(b, (1, 0), (10, 0))
    # Around: row 1 (4), down column 4 to row 5 or further, across, and down again: 17.
    assert d.steps == 17 and (3, 0) not in d.route and is_rail_route(d.route)
    assert (3, 0) not in reach(b, (1, 0))


def test_an_enemy_piece_ends_the_move_and_blocks_beyond():
    b = board({(1, 0): ENGINEER, (3, 0): blue()})
    hit = route(b, (1, 0), (3, 0))
    assert hit.route == ((1, 0), (2, 0), (3, 0)) and hit.attack
    beyond = route(b, (1, 0), (4, 0))
    assert beyond is not None and (3, 0) not in beyond.route
    b = board({(1, 0): red(Kind.MARSHAL), (4, 0): blue()})
    column = {s for s in reach(b, (1, 0)) if s[1] == 0 and s[0] > 1}
    assert column == {(2, 0), (3, 0), (4, 0)}
    assert destinations(b, (1, 0))[(4, 0)].attack and not destinations(b, (1, 0))[(3, 0)].attack


def test_camps_are_safe_but_can_be_entered():
    b = board({(1, 0): ENGINEER, (2, 0): red(), (2, 1): blue()})
    assert (2, 1) not in reach(b, (1, 0)) and (2, 1) not in reach(b, (2, 0))
    assert why_unreachable(b, (1, 0), (2, 1)) == "a piece in a camp cannot be attacked"
    b = board({(1, 0): red()})
    assert route(b, (1, 0), (2, 1)).route == ((1, 0), (2, 1))  # the camp diagonal
    b = board({(2, 1): red()})
    assert reach(b, (2, 1)) == {(1, 0), (1, 1), (1, 2), (2, 0), (2, 2), (3, 0), (3, 1), (3, 2)}


def test_a_piece_in_a_camp_on_a_rail_blocks_the_engineer():
    # No camp is on a rail on the real board, so check the rule on a small drawing.
    t = Topology.from_drawing("camp-on-rail", "o=C=o")
    b = Board.from_pieces({(0, 0): ENGINEER, (0, 1): blue()}, t)
    assert engineer_routes(b, (0, 0)) == {}
    b = Board.from_pieces({(0, 0): ENGINEER}, t)
    assert engineer_route(b, (0, 0), (0, 2)) == ((0, 0), (0, 1), (0, 2))


def test_pieces_in_headquarters_do_not_move_but_may_enter_one():
    b = board({(0, 1): red(Kind.MARSHAL), (0, 0): red(), (11, 0): red(), (11, 1): blue(Kind.FLAG)})
    assert destinations(b, (0, 1)) == {}
    assert "headquarters" in why_unreachable(b, (0, 1), (1, 1))
    assert (0, 1) not in reach(b, (0, 0))  # own piece there
    assert (0, 3) not in reach(b, (0, 0))
    assert destinations(b, (11, 0))[(11, 1)].attack  # attacking the flag in its headquarters
    b = board({(0, 2): red()})
    assert {(0, 1), (0, 3)} <= reach(b, (0, 2))


def test_landmines_and_flags_never_move():
    for kind in (Kind.LANDMINE, Kind.FLAG):
        b = board({(1, 2): red(kind)})  # on a rail, out of any headquarters
        assert destinations(b, (1, 2)) == {}
        assert why_unreachable(b, (1, 2), (1, 3)) == f"a {kind.english} never moves"


def test_moving_an_empty_or_face_down_station_is_refused():
    b = board({(1, 0): blue(Kind.HIDDEN)})
    with pytest.raises(MoveError, match="no piece at 2,2"):
        destinations(b, (2, 2))
    with pytest.raises(MoveError, match="face-down"):
        destinations(b, (1, 0))


def test_the_engineer_reaches_every_rail_station_by_the_shortest_route():
    rails = sorted(STANDARD.rail_stations)
    index = {s: i for i, s in enumerate(rails)}
    dist = np.full((len(rails), len(rails)), np.inf)
    np.fill_diagonal(dist, 0)
    for a, b in (tuple(seg) for seg in STANDARD.rail_segments):
        dist[index[a], index[b]] = dist[index[b], index[a]] = 1
    for k in range(len(rails)):  # Floyd-Warshall, independent of the BFS under test
        dist = np.minimum(dist, dist[:, [k]] + dist[[k], :])
    for start in rails:
        found = destinations(board({start: ENGINEER}), start)
        assert set(rails) - {start} <= set(found)
        for goal in rails:
            if goal != start:
                d = found[goal]
                assert is_rail_route(d.route) and d.route[0] == start and d.route[-1] == goal
                assert d.steps == dist[index[start], index[goal]], (start, goal)
    # The farthest pairs are 13 segments apart: opposite corners (9 down, 4 across), or
    # 1,2 to 10,2 (2 across, 9 down, 2 across; the middle crossing does not help).
    assert dist.max() == 13 == dist[index[(1, 0)], index[(10, 4)]] == dist[index[(1, 2)], index[(10, 2)]]
