"""The GF(2) toggle-puzzle solver: algebra, built-in puzzles, exhaustive and brute-force checks.

Brute force here never goes through the solver: the effect of every press set is built
by XOR-ing the puzzle's actions directly (`effects`), so agreement is evidence.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.games.lightsout.batch import TooLarge, batch_solver, lookup_table
from agent.games.lightsout.gf2 import bits, eliminate, parity, span, transpose
from agent.games.lightsout.packed import ByteTableMap, pack_ints, popcount, unpack_ints
from agent.games.lightsout.puzzle import Puzzle, lights_out, stencil_puzzle, torus, turtle
from agent.games.lightsout import solver as solver_mod
from agent.games.lightsout.solver import Solver, solver_for

# OEIS A159257: dimension of the kernel of the n x n Lights Out matrix, n = 1..20
A159257 = [0, 0, 0, 4, 2, 0, 0, 0, 8, 0, 6, 0, 0, 4, 0, 8, 2, 0, 16, 0]


def effects(puzzle: Puzzle) -> np.ndarray:
    """effects[x] = the lights toggled by pressing button set x, for every x (brute force)."""
    eff = np.zeros(1, dtype=np.uint64)
    for a in puzzle.actions:
        eff = np.concatenate([eff, eff ^ np.uint64(a)])
    return eff


def brute_solutions(puzzle: Puzzle, diff: int, eff: np.ndarray) -> np.ndarray:
    return np.flatnonzero(eff == np.uint64(diff)).astype(np.uint64)


@st.composite
def puzzles(draw, max_buttons: int = 10, max_lights: int = 10) -> Puzzle:
    nl = draw(st.integers(1, max_lights))
    nb = draw(st.integers(1, max_buttons))
    actions = draw(st.lists(st.integers(0, (1 << nl) - 1), min_size=nb, max_size=nb))
    goal = draw(st.integers(0, (1 << nl) - 1))
    return Puzzle("random", nl, tuple(actions), goal=goal)


# -- the turtle (seed 004) ----------------------------------------------------------------


def seed_closed_form(d: list[int], b1: int) -> int:
    """The seed's GameState4.generatePath, transcribed: the press set for light difference
    d (d[i] = start[i] ^ goal[i]) with button 1 chosen as b1."""
    p = [0] * 9
    p[1] = b1
    p[2] = d[0] ^ d[2] ^ d[3] ^ d[6] ^ d[7]
    p[0] = d[0] ^ d[2] ^ d[4] ^ d[5] ^ d[6]
    p[4] = p[0] ^ p[1] ^ p[2] ^ d[1]
    p[3] = p[0] ^ p[1] ^ d[0]
    p[5] = p[1] ^ p[2] ^ d[2]
    p[6] = p[0] ^ p[3] ^ p[4] ^ d[3]
    p[7] = p[2] ^ p[4] ^ d[4] ^ d[7]
    p[8] = p[5] ^ p[7] ^ d[7]
    return sum(v << i for i, v in enumerate(p))


def test_turtle_has_exactly_two_solutions_for_every_difference():
    t = turtle()
    s = solver_for(t)
    eff = effects(t)
    assert (s.rank, s.nullity) == (8, 1)
    for diff in range(256):
        mine = sorted(s.all(diff, 0))
        assert len(mine) == 2 and mine[0] != mine[1]
        assert mine == sorted(int(x) for x in brute_solutions(t, diff, eff))  # the same two, by brute force
        d = [(diff >> i) & 1 for i in range(8)]
        assert mine == sorted(seed_closed_form(d, b) for b in (0, 1))  # and the seed's own formula


def test_turtle_seed_start_and_goal():
    t = turtle()
    assert t.start == 0b11111111 and t.goal == 0b00000010  # all limbs out; only the head out
    r = solver_for(t).solve()
    assert r.solvable and r.solutions == 2 and r.exact
    assert r.presses == [0, 2, 7] and r.min_presses == 3
    assert t.apply(t.start, r.solution) == t.goal
    assert sorted(solver_for(t).all(t.start)) == sorted([0b10000101, 0b00111111])


def test_turtle_lookup_table_holds_both_solutions_lightest_first():
    t = turtle()
    table = lookup_table(t)
    assert table.solutions.shape == (256, 2) and table.solutions.dtype == np.uint16
    assert table.solvable.all()
    s = solver_for(t)
    for diff in range(256):
        row = [int(v) for v in table.solutions[diff]]
        assert sorted(row) == sorted(s.all(diff, 0))
        assert row[0].bit_count() <= row[1].bit_count() and table.presses[diff] == row[0].bit_count()
    diffs = np.random.default_rng(0).integers(0, 256, 1000, dtype=np.uint8)
    got = table.lookup(diffs)
    assert got.shape == (1000, 2)
    assert (got == table.solutions[diffs]).all()


# -- Lights Out ------------------------------------------------------------------------------


def test_nullity_of_n_by_n_lights_out_is_oeis_a159257():
    assert [solver_for(lights_out(n)).nullity for n in range(1, 21)] == A159257


def test_5x5_every_one_of_the_2_pow_23_solvable_states_has_4_solutions_exhaustively():
    """Brute force over all 2^25 press sets: the state each makes, counted per state.
    Then every one of the 2^25 states is put to the batch solver, which must call
    exactly the hit states solvable and solve each of them."""
    p = lights_out(5)
    low_buttons = 13
    lo = effects(Puzzle("lo", 25, p.actions[:low_buttons]))  # 8192 effects of the first 13 buttons
    hi = effects(Puzzle("hi", 25, p.actions[low_buttons:]))  # 4096 of the other 12
    # the first 13 buttons are independent, so each row below hits distinct states and a
    # fancy-index increment counts them all (no lost duplicate increments)
    assert len(np.unique(lo)) == len(lo)
    counts = np.zeros(1 << 25, dtype=np.uint8)
    lo_idx = lo.astype(np.int64)
    for h in hi.astype(np.int64):
        counts[lo_idx ^ h] += 1
    assert int(counts.sum()) == 1 << 25
    assert set(np.unique(counts).tolist()) == {0, 4}
    assert int((counts == 4).sum()) == 1 << 23

    bs = batch_solver(p)
    chunk = 1 << 22
    for start in range(0, 1 << 25, chunk):
        d = np.arange(start, start + chunk, dtype=np.uint64)
        ok = bs.solvable(d)
        assert (ok == (counts[start : start + chunk] == 4)).all()
        solved = d[ok]
        assert (bs.press(bs.one(solved))[:, 0] == solved).all()
    assert solver_for(p).nullity == 2  # so the solver says 2^2 = 4 solutions each, as counted


def test_5x5_random_sample_has_4_solutions_by_enumeration():
    p = lights_out(5)
    s = solver_for(p)
    rng = np.random.default_rng(5)
    for _ in range(40):
        presses = int(rng.integers(0, 1 << 25))
        state = p.apply(0, presses)
        sols = list(s.all(state, 0))
        assert len(set(sols)) == 4 and presses in sols
        assert all(p.apply(state, x) == 0 for x in sols)
        r = s.solve(state, 0)
        assert r.solutions == 4 and r.min_presses == min(x.bit_count() for x in sols)


@pytest.mark.parametrize("shape", [(2, 2), (3, 3), (4, 4), (3, 5), (1, 6)])
def test_torus_rank_and_nullity_match_brute_force(shape):
    p = torus(*shape)
    eff = effects(p)
    s = solver_for(p)
    image = np.unique(eff)
    assert len(image) == 1 << s.rank
    assert (1 << p.n_buttons) // len(image) == 1 << s.nullity


# -- every answer is an answer ------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(puzzles(), st.data())
def test_random_puzzles_agree_with_brute_force(puzzle, data):
    s = Solver(puzzle)
    eff = effects(puzzle)
    start = data.draw(st.integers(0, puzzle.full()))
    diff = start ^ puzzle.goal
    brute = brute_solutions(puzzle, diff, eff)
    r = s.solve(start)
    assert r.solvable == (len(brute) > 0)
    assert s.rank + s.nullity == puzzle.n_buttons
    if not r.solvable:
        assert r.solution is None and r.solutions == 0
        # the explanation is a true parity check: every button toggles an even number of
        # those lights, and the difference has an odd number of them
        check = sum(1 << i for i in r.unreachable)
        assert all(parity(a & check) == 0 for a in puzzle.actions)
        assert parity(check & diff) == 1
        assert r.reason
        return
    assert puzzle.apply(start, r.solution) == puzzle.goal
    assert r.solutions == len(brute)
    assert sorted(s.all(start)) == sorted(int(x) for x in brute)
    assert r.exact and r.min_presses == int(np.bitwise_count(brute).min())
    assert r.min_count == int((np.bitwise_count(brute) == r.min_presses).sum())


@pytest.mark.parametrize(
    "puzzle",
    [lights_out(3), lights_out(4), lights_out(3, 5), lights_out(2, 7), torus(4), torus(3, 5), turtle(),
     stencil_puzzle("knight", 4, 4, [(0, 0), (1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)])],
    ids=lambda p: p.name,
)
def test_min_presses_is_minimal_against_brute_force_for_every_state(puzzle):
    eff = effects(puzzle)
    weight = np.bitwise_count(np.arange(len(eff), dtype=np.uint64))
    # fewest presses per reachable difference, by brute force: sort by weight, first hit wins
    order = np.argsort(weight, kind="stable")
    states, first = np.unique(eff[order], return_index=True)
    brute_min = dict(zip(states.tolist(), weight[order][first].tolist()))
    s = solver_for(puzzle)
    bs = batch_solver(puzzle)
    diffs = np.arange(1 << puzzle.n_lights, dtype=np.uint64)
    ok, best, count = bs.fewest(diffs)
    # the batch solver on every difference, vectorised
    want = np.array([brute_min.get(d, -1) for d in range(1 << puzzle.n_lights)])
    assert (count == want).all() and (ok == (want >= 0)).all()
    assert (bs.press(best[ok])[:, 0] == diffs[ok]).all()
    # the one-at-a-time solver on (a spread of up to 4096 of) them
    for d in range(0, 1 << puzzle.n_lights, max(1, (1 << puzzle.n_lights) // 4096)):
        r = s.solve(d ^ puzzle.goal, puzzle.goal)
        assert r.solvable == (want[d] >= 0)
        if r.solvable:
            assert r.min_presses == want[d]
            assert puzzle.apply(d ^ puzzle.goal, r.solution) == puzzle.goal


def test_local_search_beyond_the_enumeration_limit_is_flagged_and_still_solves(monkeypatch):
    p = lights_out(4)  # nullity 4: 16 solutions, brute-forceable
    exact = {st: solver_for(p).solve(st, 0) for st in (0b1011_0110_0000_1001, p.apply(0, 0b1111_0000_1010_0101))}
    monkeypatch.setattr(solver_mod, "ENUMERATE_MAX_NULLITY", 2)
    s = Solver(p)
    for state, want in exact.items():
        r = s.solve(state, 0)
        assert r.solvable == want.solvable
        if r.solvable:
            assert not r.exact and r.min_count is None and "not proven minimal" in r.note
            assert p.apply(state, r.solution) == 0
            assert r.min_presses >= want.min_presses


@pytest.mark.parametrize("block", [0, 1, 3])
def test_blockwise_enumeration_gives_the_same_minimum(monkeypatch, block):
    p = lights_out(4)  # nullity 4, so blocks of 2^0, 2^1, 2^3 leave 4, 3, 1 basis vectors to the outer loop
    eff = effects(p)
    weight = np.bitwise_count(np.arange(len(eff), dtype=np.uint64))
    monkeypatch.setattr(solver_mod, "ENUMERATE_BLOCK", block)
    s = Solver(p)
    for presses in (0, 0b1001_0110_0000_1111, 0b0111_1110_1000_0001, (1 << 16) - 1):
        state = p.apply(0, presses)
        hits = eff == np.uint64(state)
        r = s.solve(state, 0)
        assert r.exact and r.min_presses == int(weight[hits].min())
        assert r.min_count == int((weight[hits] == r.min_presses).sum())
        assert p.apply(state, r.solution) == 0


def test_large_boards_solve_and_explain():
    p = lights_out(20)  # nullity 0: every state has exactly one solution
    s = solver_for(p)
    rng = np.random.default_rng(1)
    state = int(rng.integers(0, 2**62)) << 300 | int(rng.integers(0, 2**62))
    r = s.solve(state, 0)
    assert r.solvable and r.solutions == 1 and r.exact
    assert p.apply(state, r.solution) == 0
    p32 = lights_out(32)  # nullity 20 over 16-word vectors: enumerated block by block, exactly
    state32 = p32.apply(0, (1 << 1024) // 3)
    r = solver_for(p32).solve(state32, 0)
    assert r.exact and r.solutions == 1 << 20 and p32.apply(state32, r.solution) == 0
    assert r.min_presses <= Solver(p32).one(state32, 0).bit_count()
    p19 = lights_out(19)  # nullity 16: 65536 solutions, still enumerated exactly
    r = solver_for(p19).solve(p19.apply(0, (1 << 361) - 1), 0)
    assert r.solvable and r.solutions == 1 << 16 and r.exact and r.min_presses <= 361
    assert p19.apply(p19.apply(0, (1 << 361) - 1), r.solution) == 0


def test_unsolvable_explanations_name_lights_no_button_reaches():
    # light 2 is toggled by no button: the smallest failing check is that light alone
    p = Puzzle("lonely", 3, (0b011, 0b001))
    r = solver_for(p).solve(0b100, 0)
    assert not r.solvable and r.unreachable == (2,)
    assert "light 2" in r.reason and "no button" in r.reason
    r5 = solver_for(lights_out(5)).solve(1, 0)  # one corner on: the famous unsolvable 5x5 board
    assert not r5.solvable and r5.solutions == 0 and 0 in r5.unreachable
    assert "(0, 0)" in r5.reason


# -- the algebra ------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.data())
def test_elimination_bases(n_rows, n_cols, data):
    rows = data.draw(st.lists(st.integers(0, (1 << n_cols) - 1), min_size=n_rows, max_size=n_rows))
    e = eliminate(rows, n_cols)
    cols = transpose(rows, n_cols)  # A by columns: A x = XOR of the columns x picks
    apply = lambda x: sum(1 << r for r in range(n_rows) if parity(rows[r] & x))  # noqa: E731
    assert e.rank + e.nullity == n_cols and e.rank + len(e.left_null) == n_rows
    null = e.null_basis()
    assert all(apply(v) == 0 for v in null)
    assert len(set(span(null))) == 1 << len(null)  # independent
    for y in e.left_null:  # y^T A = 0
        assert all(parity(y & c) == 0 for c in cols)
    assert len(set(span(e.left_null))) == 1 << len(e.left_null)
    images = {apply(x) for x in range(1 << n_cols)}
    assert len(images) == 1 << e.rank
    for b in list(images)[:20]:
        assert e.consistent(b) and apply(e.particular(b)) == b
    pm = e.particular_map()
    for b in list(images)[:20]:
        x = 0
        for j in bits(b):
            x ^= pm[j]
        assert x == e.particular(b)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 150), st.integers(1, 150), st.data())
def test_byte_table_map_matches_python_ints(n_in, n_out, data):
    cols = data.draw(st.lists(st.integers(0, (1 << n_out) - 1), min_size=n_in, max_size=n_in))
    xs = data.draw(st.lists(st.integers(0, (1 << n_in) - 1), min_size=1, max_size=20))
    m = ByteTableMap.from_columns(cols, n_out)
    got = unpack_ints(m(pack_ints(xs, n_in)))
    want = []
    for x in xs:
        y = 0
        for j in bits(x):
            y ^= cols[j]
        want.append(y)
    assert got == want
    assert popcount(pack_ints(xs, n_in)).tolist() == [x.bit_count() for x in xs]


def test_batch_solver_refuses_cosets_too_large_to_enumerate():
    with pytest.raises(TooLarge, match="2\\^16"):
        batch_solver(lights_out(19)).fewest(np.zeros((1, 6), dtype=np.uint64))
    with pytest.raises(TooLarge):
        lookup_table(lights_out(5))  # 2^25 differences: no table


def test_batch_matches_one_at_a_time_on_wide_boards():
    p = lights_out(9)  # 81 lights: two words; nullity 8
    bs = batch_solver(p)
    s = solver_for(p)
    rng = np.random.default_rng(2)
    states = [int(rng.integers(0, 2**62)) << 19 ^ int(rng.integers(0, 2**62)) for _ in range(30)]
    states += [p.apply(0, int(rng.integers(0, 2**62)) << 19 | 7) for _ in range(30)]
    ok, best, count = bs.fewest(pack_ints(states, 81))
    for st_, o, x, c in zip(states, ok, unpack_ints(best), count):
        r = s.solve(st_, 0)
        assert bool(o) == r.solvable
        if r.solvable:
            assert int(c) == r.min_presses and p.apply(st_, x) == 0
        else:
            assert c == -1
    assert ok[30:].all()  # made by pressing buttons, so solvable


# -- puzzle files that are no puzzle ----------------------------------------------------------

from agent.games.lightsout.puzzle import MAX_STENCIL, PuzzleError, load_puzzle  # noqa: E402


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("buttons = " + "[" * 5000 + "]" * 5000, "nested too deeply"),
        ("meta = " + "{a = " * 3000 + "1" + "}" * 3000, "nested too deeply"),
        (b'name = "\xff"\n', r"not UTF-8 text \(byte 8\)"),
        ("rows = 3\ncols = 3\nstencil = [" + ", ".join(["[0, 0]"] * (MAX_STENCIL + 1)) + "]", "at most 1024 offsets"),
        ("lights = 1" + "0" * 400 + "\nbuttons = [[0]]", "lights must be an integer in 1..1024"),
        ("lights = 2\nbuttons = [[0, 7]]", r"buttons\[0\] must list light indexes in 0..1"),
        ("rows = 3\ncols = 3\nstencil = [[0, 0]]\ngoal = 7", "goal must be a string"),
        ("not = = toml", "not a TOML puzzle file"),
    ],
    ids=["deep arrays", "deep tables", "non-UTF-8", "long stencil", "huge lights", "light out of range",
         "goal a number", "not TOML"],
)  # fmt: skip
def test_a_broken_puzzle_file_is_a_puzzle_error_naming_it(tmp_path, content, fragment):
    path = tmp_path / "p.toml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(PuzzleError, match=fragment) as info:
        load_puzzle(path)
    assert str(path) in str(info.value)


def test_a_folder_or_a_huge_file_is_no_puzzle(tmp_path):
    (tmp_path / "d.toml").mkdir()
    with pytest.raises(PuzzleError, match="is a folder"):
        load_puzzle(tmp_path / "d.toml")
    with open(tmp_path / "big.toml", "wb") as f:
        f.truncate(5 * 1024 * 1024)
    with pytest.raises(PuzzleError, match="is not a puzzle file"):
        load_puzzle(tmp_path / "big.toml")


def test_a_board_of_more_lights_than_any_puzzle_is_refused():
    from agent.games.lightsout.game import Lights

    assert Lights.parse("1" * 32 + "/" + "0" * 32).rows == 2
    with pytest.raises(PuzzleError, match="at most 1024"):
        Lights.parse("/".join(["1" * 100] * 100))
