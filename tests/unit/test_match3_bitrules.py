"""The bit-plane rules (one board, and many packed together) against the rules engine,
and the candidate generators the plan solver builds on them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.games.match3 import bitrules as br
from agent.games.match3.bitbatch import PackedBoards
from agent.games.match3.board import EMPTY, UNKNOWN, Board, Move, adjacent_swaps
from agent.games.match3.candidates import Evaluator, other_paths, scan_swaps, score_batch, setups
from agent.games.match3.rules import GameState, Match3Config, apply_move, find_groups, has_match, random_board


@st.composite
def boards(draw, kinds: int = 4, holes: bool = True) -> Board:
    """Small boards dense in matches; some cells empty or unreadable."""
    rows = draw(st.integers(3, 8))
    cols = draw(st.integers(3, 8))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    a = rng.integers(0, kinds, size=(rows, cols)).astype(np.int8)
    if holes:
        for _ in range(draw(st.integers(0, 3))):
            a[rng.integers(rows), rng.integers(cols)] = rng.choice([EMPTY, UNKNOWN])
    return Board(a)


def truth(config: Match3Config, board: Board, move: Move):
    out = apply_move(config, GameState(board=board, steps_left=1), move, rng=None)
    final = out.phases[-1].refilled if out.phases else out.swapped
    return (out.tiles_cleared, out.steps_gained, out.points), final


LEVELS = (0, 1, 0, 2)


@settings(max_examples=300, deadline=None)
@given(boards())
def test_bit_planes_play_every_swap_as_the_rules_engine_does(board):
    config = Match3Config(rows=board.rows, cols=board.cols, n_types=4, levels=LEVELS)
    lay = br.layout(board.rows, board.cols)
    planes = br.encode(board)
    assert br.decode(planes, board.rows, board.cols) == board
    assert br.has_match(planes, lay.stride) == has_match(board)
    for move in adjacent_swaps(board.rows, board.cols):
        (r1, c1), (r2, c2) = move.cells()
        if board[r1, c1] < 0 or board[r2, c2] < 0:
            continue
        after = br.swap(planes, lay.bit(r1, c1), lay.bit(r2, c2))
        swapped = board.swapped(move)
        assert br.decode(after, board.rows, board.cols) == swapped
        assert br.has_match(after, lay.stride) == has_match(swapped)
        if has_match(swapped):
            totals, final = truth(config, board, move)
            got = br.settle(after, lay, LEVELS)
            assert (got.tiles_cleared, got.steps_gained, got.points) == totals
            assert br.decode(got.planes, board.rows, board.cols) == final
            first = {c for g in find_groups(swapped) for c in g.cells}
            assert {lay.cell(b) for b in range(lay.stride * lay.cols) if got.first_cleared >> b & 1} == first


@settings(max_examples=60, deadline=None)
@given(st.lists(boards(), min_size=1, max_size=1), st.integers(0, 2**32 - 1))
def test_packed_boards_settle_each_board_as_the_rules_engine_does(one, seed):
    """Many boards at once, of one size: those that clear nothing keep their holes (they
    must not fall with the others), and groups are counted as the rules merge them."""
    rows, cols = one[0].rows, one[0].cols
    rng = np.random.default_rng(seed)
    config = Match3Config(rows=rows, cols=cols, n_types=4, levels=LEVELS)
    batch, want = [], []
    for _ in range(40):
        a = rng.integers(0, 4, size=(rows, cols)).astype(np.int8)
        if rng.random() < 0.4:
            a[rng.integers(rows), rng.integers(cols)] = rng.choice([EMPTY, UNKNOWN])
        board = Board(a)
        moves = [m for m in adjacent_swaps(rows, cols) if board[m.cells()[0]] >= 0 and board[m.other] >= 0]
        move = moves[int(rng.integers(len(moves)))]
        swapped = board.swapped(move)
        batch.append(swapped.cells)
        want.append(truth(config, board, move)[0] if has_match(swapped) else (0, 0, 0))
    got = PackedBoards(np.array(batch)).settle(LEVELS)
    for n, (t, g, p) in enumerate(zip(got.tiles.tolist(), got.gained.tolist(), got.points.tolist())):
        # counted groups are exact but where runs may close a loop, which is flagged
        assert (t, g, p) == want[n] or got.loops[n]
        assert t == want[n][0]


def test_a_loop_of_runs_is_flagged_and_scored_exactly():
    ring = Board.parse("AAA\nABA\nAAA")  # eight As round a B: one group of four runs
    got = PackedBoards(ring.cells[None]).settle(())
    assert got.loops[0] and got.tiles[0] == 8
    board = Board.parse("AAAD\nABAD\nAACA\nDDBC")  # swapping (2,2) right closes the ring
    config = Match3Config(rows=4, cols=4, n_types=4)
    want, _ = truth(config, board, Move(2, 2, "R"))
    scores = score_batch(config, "gain", board, np.array([[-1, -1]]), np.array([[10, 11]]))
    assert scores.valid[0] and (scores.tiles[0], scores.points[0]) == (want[0], want[2])
    assert want[0] >= 8


def test_completions_are_the_cells_that_complete_a_run():
    rng = np.random.default_rng(3)
    for _ in range(40):
        a = rng.integers(0, 3, size=(7, 6)).astype(np.int8)
        planes, lay = br.encode(Board(a)), br.layout(7, 6)
        masks = br.kind_masks(planes, 3)
        for kind in range(3):
            wanted = br.completions(masks[kind], lay.stride)
            for (r, c), _ in np.ndenumerate(a):
                b = a.copy()
                b[r, c] = kind
                runs = [_run(b, r, c, dr, dc) for dr, dc in ((0, 1), (1, 0))]
                assert bool(wanted >> lay.bit(r, c) & 1) == (max(runs) >= 3), (kind, r, c)


def _run(a: np.ndarray, r: int, c: int, dr: int, dc: int) -> int:
    n = 1
    for sign in (1, -1):
        rr, cc = r + sign * dr, c + sign * dc
        while 0 <= rr < a.shape[0] and 0 <= cc < a.shape[1] and a[rr, cc] == a[r, c]:
            n += 1
            rr, cc = rr + sign * dr, cc + sign * dc
    return n


def test_batch_scores_match_replaying_each_sequence():
    from agent.games.match3.plan_solver import replay

    config = Match3Config(levels=(0, 2))
    rng = np.random.default_rng(4)
    for _ in range(5):
        board = random_board(config, rng)
        moves = [m for m in adjacent_swaps(8, 8)]
        seqs = [(moves[i],) for i in rng.integers(0, len(moves), 30)]
        seqs += [(moves[i], moves[j]) for i, j in rng.integers(0, len(moves), (120, 2))]
        flat = lambda m: [r * 8 + c for r, c in m.cells()]  # noqa: E731
        firsts = np.array([flat(s[0]) if len(s) == 2 else [-1, -1] for s in seqs])
        lasts = np.array([flat(s[-1]) for s in seqs])
        for objective in ("gain", "seed", "points"):
            got = score_batch(config, objective, board, firsts, lasts)
            for n, seq in enumerate(seqs):
                out = replay(config, board, seq)
                assert bool(got.valid[n]) == (out is not None), seq
                if out is not None:
                    assert (got.score[n], got.tiles[n], got.points[n]) == (
                        out.score(objective), out.tiles_cleared, out.points)


def test_a_first_swap_that_setups_leaves_out_changes_nothing():
    """Whatever cascades after a clearing swap, a quiet first swap that `setups` leaves
    out leads to exactly the same outcome; every one it proposes is worth trying (most
    change the outcome)."""
    config = Match3Config(levels=(0, 1))
    rng = np.random.default_rng(9)
    same = changed = 0
    for _ in range(8):
        board = random_board(config, rng)
        ev = Evaluator(config, "gain", board)
        scan = scan_swaps(ev)
        for fin in scan.clearing:
            pred = br.settle(br.swap(ev.base, fin.i, fin.j), ev.lay, ev.levels)
            alone = apply_move(config, GameState(board=board, steps_left=1), fin.move, None)
            chosen = set(setups(ev, scan, fin, pred))
            for n, first in enumerate(scan.quiet):
                out = apply_move(config, GameState(board=board.swapped(first.move), steps_left=1), fin.move, None)
                result = (out.tiles_cleared, out.steps_gained, out.points, out.phases[-1].refilled if out.phases else None)
                before = (alone.tiles_cleared, alone.steps_gained, alone.points)
                if n not in chosen:
                    assert result[:3] == before
                    same += 1
                else:
                    changed += result[:3] != before
    assert same > 500 and changed > 50


@pytest.mark.parametrize(
    "board, plan, others",
    [
        # one tile round a corner: the plan walks it right then up; the other way, up then right
        ("BCB\nCBC\nADC", (Move(2, 0, "R"), Move(2, 1, "U")), {(Move(2, 0, "U"), Move(1, 0, "R"))}),
        # the other corner holds the type: push that tile on first, then follow it
        ("BCB\nABC\nADC", (Move(2, 0, "R"), Move(2, 1, "U")), {(Move(1, 0, "R"), Move(2, 0, "U"))}),
        # two tiles one cell each: in the other order too
        ("ABCD\nCDBC\nDBCA", (Move(0, 0, "R"), Move(2, 3, "L")), {(Move(2, 3, "L"), Move(0, 0, "R"))}),
    ],
)
def test_other_paths_reach_the_same_elimination(board, plan, others):
    b = Board.parse(board)
    kind = 0

    def after(moves):
        x = b
        for m in moves:
            x = x.swapped(m)
        return x.cells == kind

    got = other_paths(plan, lambda rc: b[rc] == kind)
    assert {tuple(m.canonical() for m in p) for p in got} == {tuple(m.canonical() for m in p) for p in others}
    for path in got:
        assert (after(path) == after(plan)).all()
