"""The plan solver: matching the library on a board, whole-board verification with the
rules engine, objectives and ties, the seed's worked example, multi-swap plans in the
play loop, and `agent solve --game match3`."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.device.clock import ManualClock
from agent.games.match3.sim import SimPhone
from agent.games.match3.board import Board, Move
from agent.games.match3.plan_library import PlanLibrary, load_library
from agent.games.match3.plan_solver import ORIGINS, PlanIndex, PlanSolver, replay
from agent.games.match3.plans import FAITHFUL, build_plans
from agent.games.match3.rules import GameState, Match3Config, apply_move, has_match, is_legal_swap, random_board
from agent.games.match3.game import GAME, Match3Player, Match3Sim
from agent.games.match3.sim_profile import sim_game_profile
from agent.games.match3.solver import Choice, GreedySolver, evaluate
from agent.play.journal import Journal, read_journal
from agent.play.loop import PlayLoop, PlayOptions

runner = CliRunner()

# The seed's worked example: its type as 1, everything else 0.
XXL = ["000000", "000100", "011011", "000100", "000100", "000000"]


def typed(binary: list[str]) -> Board:
    """A real board for a 0/1 grid: 1 is A, 0s are B-H spread so no other type is near three."""
    return Board.parse("\n".join(
        "".join("A" if ch == "1" else "BCDEFGH"[(3 * r + c) % 7] for c, ch in enumerate(row))
        for r, row in enumerate(binary)
    ))


def step_config(board: Board, **kw) -> Match3Config:
    return Match3Config(rows=board.rows, cols=board.cols, n_types=8, **kw)


@pytest.fixture(scope="module")
def library() -> PlanLibrary:
    return load_library()


@pytest.fixture(scope="module")
def solver(library) -> PlanSolver:
    return PlanSolver(library=library)


def seed_view(index: PlanIndex, library: PlanLibrary, board: Board, kind: int, right_bound_exclusive: bool):
    """What the seed's matcher sees for one type: (plan, row, col); with its exclusive
    column bound, windows touching the right edge are never tried."""
    found = index.matches(board)
    out = []
    for pid, k, r, c in zip(found.plan.tolist(), found.kind.tolist(), found.row.tolist(), found.col.tolist()):
        plan = library.plan(pid)
        if k == kind and not (right_bound_exclusive and c + plan.width >= board.cols):
            out.append((plan, r, c))
    return out


# -- the seed's worked example --------------------------------------------------------------


def test_xxl_holds_a_one_swap_cross_that_the_seeds_matcher_misses(solver, library):
    board = typed(XXL)
    best = solver.rank(step_config(board), board, top=1)[0]
    # swap row 1 col 3 down: 5 across row 2 and 3 down column 3, one group of 7
    assert best.moves == (Move(1, 3, "D"),) or [m.canonical() for m in best.moves] == [Move(1, 3, "D")]
    assert best.outcome.tiles_cleared == 7 and best.plan.count == 7 and best.kind == 0
    assert (best.row, best.col, best.col + best.plan.width) == (1, 1, board.cols)  # its window touches the right edge

    def seed_score(plan):
        return plan.count - 3 - len(plan.steps)

    index = solver.index
    inclusive = seed_view(index, library, board, 0, right_bound_exclusive=False)
    exclusive = seed_view(index, library, board, 0, right_bound_exclusive=True)
    assert max(seed_score(p) for p, _, _ in inclusive) == 3
    # the seed's matcher: no cross, and its best is the 1-swap 6 it printed (score 2)
    assert not any(p.count == 7 for p, _, _ in exclusive)
    top = [(p, r, c) for p, r, c in exclusive if seed_score(p) == 2]
    assert top and all(p.count == 6 and len(p.steps) == 1 for p, _, _ in top)
    assert ("0010/1101/0010/0010", 1, 1) in {(p.target, r, c) for p, r, c in top}
    # with the seed objective the verified outcome gives the same ranking as the seed's score
    seed_best = PlanSolver(library=library, objective="seed").rank(step_config(board), board, top=1)[0]
    assert seed_best.score == 3 and seed_best.moves == best.moves


def test_the_seeds_own_library_also_holds_the_cross_its_matcher_misses():
    faithful, _ = build_plans(FAITHFUL)
    index = PlanIndex.build(faithful)
    board = typed(XXL)
    crosses = [(p, r, c) for p, r, c in seed_view(index, faithful, board, 0, False) if p.count == 7]
    assert crosses and {(p.target, r, c) for p, r, c in crosses} == {("00100/11011/00100/00100", 1, 1)}
    assert not any(p.count == 7 for p, _, _ in seed_view(index, faithful, board, 0, True))


# -- matching ---------------------------------------------------------------------------------


def test_lookup_matching_equals_a_direct_window_comparison(library):
    rng = np.random.default_rng(3)
    chosen = sorted(rng.choice(len(library), size=400, replace=False).tolist())
    small = PlanLibrary(library.header, [library.records[i] for i in chosen])
    index = PlanIndex.build(small)
    for trial in range(12):
        rows, cols = int(rng.integers(3, 10)), int(rng.integers(3, 10))
        cells = rng.integers(-1, 3, size=(rows, cols))  # few types (and empties): many matches
        board = Board(cells)
        found = index.matches(board)
        got = sorted(zip(found.plan.tolist(), found.kind.tolist(), found.row.tolist(), found.col.tolist()))
        expected = []
        for pid, plan in enumerate(small):
            pattern = np.array([[ch == "1" for ch in row] for row in plan.rows])
            h, w = pattern.shape
            for kind in range(3):
                is_kind = cells == kind
                for r in range(rows - h + 1):
                    for c in range(cols - w + 1):
                        if np.array_equal(is_kind[r : r + h, c : c + w], pattern):
                            expected.append((pid, kind, r, c))
        assert got == sorted(expected), trial


# -- whole-board verification --------------------------------------------------------------------

# A walks two cells right into "A A" (plan 10011 -> 00111); its first swap moves the tile at
# (0,1) to (0,0), which lines up three Bs in column 0 when that tile is a B.
WALK = [Move(0, 0, "R"), Move(0, 1, "R")]
WALK_BLOCKED = Board.parse("ABCAA\nBDEFD\nBEFDE\nCFDEF\nDCEFC")
WALK_FREE = Board.parse("AECAA\nBDEFD\nBEFDE\nCFDEF\nDCEFC")


def test_a_plan_whose_early_swap_would_clear_elsewhere_is_rejected(solver):
    for board, ok in ((WALK_BLOCKED, False), (WALK_FREE, True)):
        config = step_config(board)
        assert not has_match(board)
        assert has_match(board.swapped(WALK[0])) is not ok  # the first swap clears Bs, or nothing
        out = replay(config, board, WALK, must_clear=[(0, 2), (0, 3), (0, 4)])
        assert (out is not None) is ok
        sequences = [tuple(m.canonical() for m in pc.moves) for pc in solver.rank(config, board, prune=False)]
        assert (tuple(m.canonical() for m in WALK) in sequences) is ok


def test_the_last_swap_must_clear_what_the_plan_predicts():
    board = WALK_FREE
    config = step_config(board)
    assert replay(config, board, WALK, must_clear=[(0, 2), (0, 3), (0, 4)]) is not None
    assert replay(config, board, WALK, must_clear=[(0, 1), (0, 2), (0, 3)]) is None  # not the cells it clears
    assert replay(config, board, WALK[:1], must_clear=[]) is None  # a last swap that clears nothing
    assert replay(config, board, [Move(0, 0, "L")], must_clear=[]) is None  # off the board


# Clearing A A A in row 2 drops column 0's Bs onto the B below: a cascade of 3 more.
CASCADE = Board.parse("BCDE\nBDEC\nAAED\nBCAE")


def test_cascades_before_refill_count_in_the_verified_outcome(solver):
    config = step_config(CASCADE)
    ranked = solver.rank(config, CASCADE, prune=False)
    swap = next(pc for pc in ranked if [m.canonical() for m in pc.moves] == [Move(2, 2, "D")])
    truth = apply_move(config, GameState(board=CASCADE, steps_left=5), Move(2, 2, "D"), rng=None)
    assert len(truth.phases) == 2
    assert swap.plan.count == 3 and swap.outcome.tiles_cleared == truth.tiles_cleared == 6
    assert swap.outcome.points == truth.points and swap.outcome.predicted == truth.phases[-1].refilled


def test_every_choice_replays_on_the_whole_board(solver):
    """The chosen plan, swap by swap with the rules engine: each swap legal, none but the
    last clears anything, the last clears what was predicted, and the chain of boards the
    play loop checks is exactly what happens."""
    rng = np.random.default_rng(7)
    config = Match3Config()
    multi = 0
    origins: set[str] = set()
    for _ in range(60):
        board = random_board(config, rng)
        best = solver.rank(config, board, top=1)[0]
        choice = best.choice()
        state = GameState(board=board, steps_left=50)
        for i, move in enumerate(best.moves):
            assert choice is not None and choice.move == move and is_legal_swap(state.board, move)
            out = apply_move(config, state, move, rng=None)
            last = i == len(best.moves) - 1
            assert (out.tiles_cleared > 0) is last
            after = out.phases[-1].refilled if out.phases else out.swapped
            assert after == choice.predicted
            state = GameState(board=after, steps_left=50)
            choice = choice.next_on(after)
        assert choice is None
        assert out.tiles_cleared == best.outcome.tiles_cleared and out.steps_gained == best.outcome.steps_gained
        cells = {c for g in out.phases[0].groups for c in g.cells}
        if best.plan is not None:
            plan_cells = {(best.row + r, best.col + c) for r, row in enumerate(best.plan.final.split("/"))
                          for c, ch in enumerate(row) if ch == "1"}
            assert plan_cells <= cells
        else:
            assert best.origin in ORIGINS and cells
        multi += len(best.moves) > 1
        origins.add(best.origin)
    assert multi > 0  # the solver does pick multi-swap plans on random boards
    assert {"plan", "setup"} <= origins  # and set-ups of cascades, which no plan sees


def test_pruning_only_skips_plans_that_cannot_be_chosen_among_short_ones(solver):
    rng = np.random.default_rng(11)
    config = Match3Config()
    for _ in range(10):
        board = random_board(config, rng)
        pruned = solver.rank(config, board)
        full = solver.rank(config, board, prune=False)
        assert full[0].outcome.key("gain") <= pruned[0].outcome.key("gain")
        # every 1-swap plan is always verified
        assert {pc.moves for pc in full if len(pc.moves) == 1} == {pc.moves for pc in pruned if len(pc.moves) == 1}


# -- objectives and ties ---------------------------------------------------------------------

# One swap up lines up four As in row 0, one swap up lines up four Bs in row 3.
FOURS = Board.parse("AACADE\nFGAHCF\nDEFGHD\nBBCBEG\nHCBDFH")
A_UP, B_UP = Move(0, 2, "D"), Move(3, 2, "D")


@pytest.mark.parametrize(
    "objective, levels, winner",
    [
        ("gain", (), A_UP),  # 0 steps net each: the tie goes to reading order
        ("seed", (), A_UP),
        ("gain", (0, 1), B_UP),  # Bs are worth 3^1 steps per extra tile
        ("gain", (1, 0), A_UP),
        ("seed", (0, 1), A_UP),  # the seed's objective ignores levels
    ],
)
def test_objectives_and_levels_pick_the_plan(library, objective, levels, winner):
    config = step_config(FOURS, levels=levels)
    best = PlanSolver(library=library, objective=objective).rank(config, FOURS, prune=False)[0]
    assert [m.canonical() for m in best.moves] == [winner]
    g = next(g for g in apply_move(config, GameState(board=FOURS, steps_left=5), winner, None).phases[0].groups)
    expected = {"gain": (g.size - 3) * 3 ** config.level(g.kind) - 1, "seed": g.size - 3 - 1}[objective]
    assert best.score == expected


def test_classic_points_use_single_swaps_only(solver, library):
    rng = np.random.default_rng(5)
    classic = Match3Config(variant="classic")
    for _ in range(10):
        board = random_board(classic, rng)
        ranked = solver.rank(classic, board, prune=False)
        assert ranked and all(len(pc.moves) == 1 for pc in ranked)
        assert ranked[0].objective == "points"
        # the best plan is as good as the best single swap found by trying every swap
        greedy = GreedySolver().choose(classic, board)
        assert ranked[0].outcome.points == greedy.points


def test_ties_do_not_depend_on_the_order_of_the_library(library):
    rng = np.random.default_rng(2)
    order = rng.permutation(len(library)).tolist()
    shuffled = PlanLibrary(library.header, [library.records[i] for i in order])
    a, b = PlanSolver(library=library), PlanSolver(library=shuffled)
    config = Match3Config()
    boards = [FOURS] + [random_board(config, rng) for _ in range(8)]
    for board in boards:
        cfg = step_config(board) if board is FOURS else config
        ra, rb = a.rank(cfg, board, prune=False), b.rank(cfg, board, prune=False)
        assert [pc.moves for pc in ra] == [pc.moves for pc in rb]
        assert [pc.score for pc in ra] == sorted((pc.score for pc in ra), reverse=True)


def test_no_applicable_plan_falls_back_to_a_single_swap(library):
    board = Board.parse("ABC\nDEF\nGHA")  # nine tiles, no type three times
    config = step_config(board)
    solver = PlanSolver(library=library)
    assert solver.rank(config, board) == []
    choice = solver.choose(config, board)
    assert choice is not None and choice.then is None and choice.tiles_cleared == 0


# -- the play loop runs multi-swap plans -----------------------------------------------------


def test_play_loop_follows_verified_plans_swap_by_swap(tmp_path, library):
    phone = SimPhone(Match3Config(start_steps=100), seed=11, clock=ManualClock())
    with Journal(tmp_path / "j.jsonl") as journal:
        loop = PlayLoop(
            phone, GAME, sim_game_profile(phone), Match3Player(phone.config, PlanSolver(library=library)), phone.clock,
            options=PlayOptions(moves=30), journal=journal, status_reader=Match3Sim().status_reader(phone),
        )
        summary = loop.run()
    assert summary.moves == 30 and sum(summary.checks.values()) == 30  # every swipe checked
    assert summary.checks["unexpected"] == summary.checks["not_applied"] == 0
    decisions = [r for r in read_journal(tmp_path / "j.jsonl") if r["type"] == "decision"]
    followed = [d for d in decisions if d["plan_step"]]
    assert followed  # swaps taken from a plan under way, without asking the solver again
    for prev, d in zip(decisions, decisions[1:]):
        if d["plan_step"]:
            assert prev["plan_swaps_left"] == d["plan_swaps_left"] + 1 and prev["predicted_cleared"] == 0
    assert all(o.applied for o in phone.outcomes)


class _WrongPrediction:
    """A plan whose first swap is predicted wrongly: the loop must drop the rest of it."""

    name = "wrong"

    def __init__(self) -> None:
        self.calls = 0

    def choose(self, config: Match3Config, board: Board) -> Choice | None:
        self.calls += 1
        greedy = GreedySolver().choose(config, board)
        if self.calls > 1:
            return greedy
        move = next(m for m in (Move(r, c, d) for r in range(board.rows) for c in range(board.cols) for d in "RD")
                    if is_legal_swap(board, m) and board[m.cells()[0]] != board[m.other]
                    and not has_match(board.swapped(m)))
        then = evaluate(config, board.swapped(move), greedy.move)
        return Choice(move, 0, 0, 1, 0, (0,), predicted=board, then=then)  # wrong: the board will change


def test_play_loop_drops_a_plan_when_a_swap_surprises_it():
    phone = SimPhone(Match3Config(start_steps=20), seed=3, clock=ManualClock())
    solver = _WrongPrediction()
    loop = PlayLoop(phone, GAME, sim_game_profile(phone), Match3Player(phone.config, solver), phone.clock,
                    options=PlayOptions(moves=2), status_reader=Match3Sim().status_reader(phone))
    summary = loop.run()
    assert summary.moves == 2 and summary.checks["unexpected"] >= 1
    assert solver.calls == 2  # the second swipe came from a fresh decision, not the stale plan


# -- agent solve --game match3 ------------------------------------------------------------------


def test_solve_prints_the_chosen_plan_and_the_next_best(tmp_path):
    path = tmp_path / "xxl.txt"
    path.write_text(str(typed(XXL)) + "\n")
    result = runner.invoke(app, ["solve", "--game", "match3", "--board", str(path), "--objective", "seed", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    first, second = out["plans"][:2]
    assert first["swaps"] == ["1,3,D"] and first["tiles_cleared"] == 7 and first["score"] == 3
    assert first["kind"] == "A" and first["plan"]["count"] == 7 and first["steps_gained"] == 4
    assert second["score"] <= first["score"]
    text = runner.invoke(app, ["solve", "--game", "match3", "--board", str(path), "--top", "1"])
    assert text.exit_code == 0 and "1,3,D" in text.stdout


def test_solve_reads_several_boards_and_levels_in_one_call(tmp_path):
    boards = f"{FOURS}\n\n# levels B=1\n{FOURS}\n\n{CASCADE}\n"
    result = runner.invoke(app, ["solve", "--game", "match3", "--board", "-", "--json", "--top", "1"], input=boards)
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [d["board"] for d in lines] == [1, 2, 3]
    assert lines[0]["plans"][0]["kind"] == "A" and lines[1]["plans"][0]["kind"] == "B"
    assert lines[2]["rows"] == 4 and lines[2]["plans"][0]["tiles_cleared"] >= 3


def test_solve_draws_the_plan(tmp_path):
    import cv2

    path = tmp_path / "b.txt"
    path.write_text(str(typed(XXL)))
    out = tmp_path / "plan.png"
    result = runner.invoke(app, ["solve", "--game", "match3", "--board", str(path), "--png", str(out)])
    assert result.exit_code == 0, result.output
    img = cv2.imread(str(out))
    assert img is not None and img.shape[:2] == (6 * 64, 6 * 64)


@pytest.mark.parametrize(
    "args, stdin, fragment",
    [
        (["--rows", "3"], None, "match3 does not use --rows"),
        (["--from", "1,1"], None, "match3 does not use --from"),
        (["--objective", "fun"], None, "'fun' is not one of seed, gain, points"),
    ],
)
def test_solve_refuses_options_it_does_not_use(tmp_path, args, stdin, fragment):
    path = tmp_path / "b.txt"
    path.write_text(str(FOURS))
    result = runner.invoke(app, ["solve", "--game", "match3", "--board", str(path), *args], input=stdin)
    assert result.exit_code == 2 and fragment in result.output


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("AB?\nABC\nCAB", "unreadable cells"),
        ("ABC\nAB\nABC", "different lengths"),
        ("# levels A=x\nABC\nBCA\nCAB", "not a level"),
        ("\n\n", "no board"),
    ],
)
def test_solve_rejects_bad_boards_clearly(text, fragment):
    from agent.errors import NotationError

    result = runner.invoke(app, ["solve", "--game", "match3", "--board", "-"], input=text)
    assert result.exit_code != 0 and isinstance(result.exception, NotationError)
    assert fragment in str(result.exception)


def test_solve_with_a_missing_board_file(tmp_path):
    from agent.errors import AgentError

    result = runner.invoke(app, ["solve", "--game", "match3", "--board", str(tmp_path / "none.txt")])
    assert isinstance(result.exception, AgentError) and "no board file" in str(result.exception)


# -- benchmarks run (their figures are reported, not asserted) ---------------------------------


def test_bench_commands_report_their_figures():
    result = runner.invoke(app, ["bench", "solve", "--boards", "2", "--no-build", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    for key in ("load_ms", "median_plan_ms", "median_exhaustive_ms", "speedup", "at_least_as_good_pct",
                "median_exhaustive_bits_ms", "speedup_vs_bits"):
        assert key in figures
    assert figures["bits_disagree"] == 0  # the bit-plane search finds what the rules engine finds
    result = runner.invoke(app, ["bench", "play", "--games", "1", "--moves", "8", "--solvers", "greedy,plan", "--json"])
    assert result.exit_code == 0, result.output
    table = json.loads(result.stdout)["solvers"]
    assert set(table) == {"greedy", "plan"} and all(row["games"] == 1 for row in table.values())
    assert 1 <= table["plan"]["mean_moves"] <= 8


# The best two swaps here are a set-up: the first moves other tiles so that the tiles
# falling after the second line up in a group of six; no plan of the library sees it.
SETUP = Board.parse("AFFAEEBE\nFEEBDEEB\nCCECCDDA\nFCAADEBF\nBACEBEAF\nAFACBFDE\nCDDEDFBC\nBFAEFBBE")


def test_a_set_up_of_a_cascade_beats_every_plan(solver):
    config = Match3Config()
    ranked = solver.rank(config, SETUP)
    best = ranked[0]
    assert best.origin == "setup" and best.plan is None and len(best.moves) == 2
    assert max(pc.score for pc in ranked if pc.origin == "plan") < best.score
    # what the rules engine says the two swaps do
    first, last = best.moves
    out = apply_move(config, GameState(board=SETUP.swapped(first), steps_left=5), last, rng=None)
    assert not has_match(SETUP.swapped(first)) and len(out.phases) > 1
    assert out.tiles_cleared == best.outcome.tiles_cleared
    alone = apply_move(config, GameState(board=SETUP, steps_left=5), last, rng=None)
    assert alone.tiles_cleared < out.tiles_cleared  # without the set-up, less cascades


def test_solve_names_what_is_not_a_plan(tmp_path):
    path = tmp_path / "setup.txt"
    path.write_text(str(SETUP))
    result = runner.invoke(app, ["solve", "--game", "match3", "--board", str(path), "--json", "--top", "1"])
    assert result.exit_code == 0, result.output
    (best,) = json.loads(result.stdout)["plans"]
    assert best["origin"] == "setup" and best["plan"] is None and len(best["swaps"]) == 2
    text = runner.invoke(app, ["solve", "--game", "match3", "--board", str(path), "--top", "1",
                               "--png", str(tmp_path / "s.png")])
    assert text.exit_code == 0 and "setup:" in text.stdout and (tmp_path / "s.png").exists()


def test_an_installed_package_finds_the_library_it_ships(tmp_path, monkeypatch):
    """`pip install .` puts plans/match3.json under sys.prefix/share (pyproject data-files);
    away from the repository, that copy is the default."""
    from agent.games.match3 import plan_library

    shipped = tmp_path / "share" / "match3.json"
    shipped.parent.mkdir()
    shipped.write_text("{}")
    monkeypatch.delenv(plan_library.LIBRARY_ENV, raising=False)
    monkeypatch.setattr(plan_library, "INSTALLED_LIBRARY", shipped)
    assert plan_library.library_path() == plan_library.DEFAULT_LIBRARY  # in the repository
    monkeypatch.setattr(plan_library, "DEFAULT_LIBRARY", tmp_path / "no" / "match3.json")
    assert plan_library.library_path() == shipped
