"""The Junqi boards as data: the real 12x5 board's stations, links and rail lines, the
drawing parser's checks, and the seed's 13x5 mask as the seed article prints it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent.games.junqi.layouts import SEED_MASK, SEED_MASK_ROWS, STANDARD
from agent.games.junqi.topology import StationKind, Topology, TopologyError

SHARED = Path(__file__).resolve().parents[3] / "shared"
SEED_FILE = next(iter(sorted((SHARED / "seeds").glob("002_*.txt"))), None) if (SHARED / "seeds").is_dir() else None


def stations_of(kind: StationKind) -> set[tuple[int, int]]:
    return {s for s in STANDARD.stations if STANDARD.kind(s) is kind}


def linked(a, b) -> bool:
    return frozenset((a, b)) in STANDARD.links


def test_the_real_board_has_60_stations_10_camps_4_headquarters():
    assert (STANDARD.rows, STANDARD.cols) == (12, 5) and len(STANDARD.stations) == 60
    side_camps = {(2, 1), (2, 3), (3, 2), (4, 1), (4, 3)}
    assert stations_of(StationKind.CAMP) == side_camps | {(11 - r, c) for r, c in side_camps}
    assert stations_of(StationKind.HEADQUARTERS) == {(0, 1), (0, 3), (11, 1), (11, 3)}


def test_rail_lines_are_the_two_long_side_rails_four_rows_and_the_middle_crossing():
    lines = set(STANDARD.rail_lines)
    assert tuple((r, 0) for r in range(1, 11)) in lines
    assert tuple((r, 4) for r in range(1, 11)) in lines
    for r in (1, 5, 6, 10):
        assert tuple((r, c) for c in range(5)) in lines
    assert ((5, 2), (6, 2)) in lines
    assert len(lines) == 7
    assert len(STANDARD.rail_stations) == 32
    assert not any(STANDARD.on_rail(s) for s in stations_of(StationKind.CAMP) | stations_of(StationKind.HEADQUARTERS))


def test_the_front_is_crossed_at_columns_0_2_4_only():
    for c in (0, 2, 4):
        assert frozenset(((5, c), (6, c))) in STANDARD.rail_segments
    for c in (1, 3):  # the mountains: no road, no rail, no diagonal
        assert not any(linked((5, c), (6, x)) for x in range(5))
    assert sum(1 for link in STANDARD.links if {r for r, _ in link} == {5, 6}) == 3


def test_roads_join_orthogonal_neighbours_on_each_side():
    for r in range(12):
        for c in range(5):
            if c + 1 < 5:
                assert linked((r, c), (r, c + 1)), (r, c)
            if r + 1 < 12 and r != 5:
                assert linked((r, c), (r + 1, c)), (r, c)


def test_camps_link_diagonally_to_their_four_diagonal_neighbours_and_nothing_else_does():
    camps = stations_of(StationKind.CAMP)
    diagonals = {link for link in STANDARD.links if len({r for r, _ in link}) == 2 and len({c for _, c in link}) == 2}
    assert diagonals == {
        frozenset(((r, c), (r + dr, c + dc))) for r, c in camps for dr in (-1, 1) for dc in (-1, 1)
    }
    assert len(diagonals) == 32
    assert set(STANDARD.neighbours[(2, 1)]) == {(1, 0), (1, 1), (1, 2), (2, 0), (2, 2), (3, 0), (3, 1), (3, 2)}


def test_neighbours_come_right_down_left_up_then_diagonals():
    assert STANDARD.rail_neighbours[(5, 2)] == ((5, 3), (6, 2), (5, 1))
    assert STANDARD.neighbours[(3, 2)][:4] == ((3, 3), (4, 2), (3, 1), (2, 2))


def test_curves_join_line_ends_only_when_asked():
    assert STANDARD.straight_next((2, 0), (1, 0)) is None
    assert STANDARD.straight_next((2, 0), (1, 0), curved=True) == (1, 1)
    assert STANDARD.straight_next((10, 3), (10, 4), curved=True) == (9, 4)
    assert STANDARD.straight_next((4, 0), (5, 0), curved=True) == (6, 0)  # a T-junction is no curve


def test_a_drawing_error_names_its_line_and_column():
    with pytest.raises(TopologyError, match=r"line 1, column 2: '\+'"):
        Topology.from_drawing("bad", "o+o\n| |\no-o")
    with pytest.raises(TopologyError, match="odd line count"):
        Topology.from_drawing("bad", "o-o\n| |")


def test_a_curve_must_join_two_line_ends():
    with pytest.raises(TopologyError, match="curve"):
        Topology.from_drawing("bad", "o=o=o", curves=[(0, 1)])


def test_the_seed_mask_topology():
    assert (SEED_MASK.rows, SEED_MASK.cols) == (13, 5)
    assert SEED_MASK.rail_stations == {
        (r, c) for r, row in enumerate(SEED_MASK_ROWS) for c, ch in enumerate(row) if ch == "0"
    }
    assert ((5, 2), (6, 2), (7, 2)) in SEED_MASK.rail_lines
    assert SEED_MASK.links == SEED_MASK.rail_segments  # the seed knows rails only


@pytest.mark.skipif(SEED_FILE is None, reason=f"the seed article 002_* is not in {SHARED / 'seeds'}")
def test_the_seed_mask_is_the_one_the_seed_prints():
    text = SEED_FILE.read_text(encoding="utf-8")
    block = text[text.index("noChessBoard"):]
    block = block[: block.index("]]") + 2]
    rows = ["".join(re.findall(r"[01]", row)) for row in re.findall(r"\[(\s*[01](?:\s*,\s*[01])*\s*)\]", block)]
    assert tuple(rows) == SEED_MASK_ROWS
