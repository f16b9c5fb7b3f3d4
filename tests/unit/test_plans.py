"""The match-3 plan library: generation (complete and as the seed printed it), the
committed file, its format, verification and statistics."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.games.match3.plan_library import (
    DEFAULT_LIBRARY,
    Plan,
    PlanLibrary,
    PlanLibraryError,
    PlanStep,
    library_header,
    load_library,
    save_library,
    verify_library,
    verify_plan,
)
from agent.games.match3.plans import (
    BASE_SHAPES,
    COMPLETE,
    FAITHFUL,
    build_plans,
    normalized,
    orientations,
)

runner = CliRunner()

# The four 1-swap plans for 7 tiles the seed prints (target -> final).
SEED_SEVEN_PLANS = [
    ("00100/11011/00100/00100", "00000/11111/00100/00100"),
    ("0010/0010/1101/0010/0010", "0010/0010/1110/0010/0010"),
    ("00100/00100/11011/00100", "00100/00100/11111/00000"),
    ("0100/0100/1011/0100/0100", "0100/0100/0111/0100/0100"),
]


@pytest.fixture(scope="module")
def committed() -> PlanLibrary:
    if not DEFAULT_LIBRARY.exists():
        pytest.fail(f"the committed library {DEFAULT_LIBRARY} is missing: run `agent plans build`")
    return load_library(DEFAULT_LIBRARY)


@pytest.fixture(scope="module")
def rebuilt():
    return build_plans(COMPLETE)


@pytest.fixture(scope="module")
def seed_method():
    return build_plans(FAITHFUL)


@pytest.fixture(scope="module")
def faithful(seed_method) -> PlanLibrary:
    return seed_method[0]


def _cells(pattern: str) -> set[tuple[int, int]]:
    return {(r, c) for r, row in enumerate(pattern.split("/")) for c, ch in enumerate(row) if ch == "1"}


def _runs_of_three(cells: set[tuple[int, int]]) -> bool:
    return any({(r, c + 1), (r, c + 2)} <= cells or {(r + 1, c), (r + 2, c)} <= cells for r, c in cells)


# -- the committed file ---------------------------------------------------------------------


def test_rebuilding_gives_the_committed_file_byte_for_byte(rebuilt, committed):
    library, _ = rebuilt
    assert library.to_json().encode("utf-8") == DEFAULT_LIBRARY.read_bytes()
    assert len(library) == len(committed)


def test_build_command_writes_the_library_atomically(tmp_path, seed_method):
    out = tmp_path / "plans" / "seed.json"
    result = runner.invoke(app, ["plans", "build", "--faithful", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert figures["plans"] == len(seed_method[0]) and figures["variant"] == "faithful"
    assert out.read_bytes() == seed_method[0].to_json().encode("utf-8")
    assert [p.name for p in out.parent.iterdir()] == ["seed.json"]  # no temporary file left


def test_committed_library_verifies_and_its_header_matches(committed):
    assert list(verify_library(committed)) == []
    h = committed.header
    assert h["format"] == 1 and h["variant"] == "complete" and h["generator"]
    assert h["total"] == len(committed) == sum(sum(row.values()) for row in h["counts"].values())
    result = runner.invoke(app, ["plans", "verify"])
    assert result.exit_code == 0 and f"{len(committed)} plans verified" in result.stdout


def test_every_record_is_a_plan_the_window_replay_confirms(committed):
    """Independently of `verify_plan`: replay each plan with sets of cells."""
    for plan in committed:
        tiles = _cells(plan.target)
        assert len(tiles) == plan.count and not _runs_of_three(tiles)
        for i, step in enumerate(plan.steps):
            dr, dc = {"Up": (-1, 0), "Down": (1, 0), "Left": (0, -1), "Right": (0, 1)}[step.direction]
            assert (step.row, step.col) in tiles and (step.row + dr, step.col + dc) not in tiles
            tiles = (tiles - {(step.row, step.col)}) | {(step.row + dr, step.col + dc)}
            if i < len(plan.steps) - 1:
                assert not _runs_of_three(tiles), plan
        assert tiles == _cells(plan.final), plan


# -- what the complete library holds ----------------------------------------------------------


def test_all_eight_symmetries_of_every_shape_are_eliminations(committed):
    finals = {normalized(_cells(p.final)) for p in committed}
    for shape in BASE_SHAPES:
        rows = list(shape.rows)
        variants = set()
        for _ in range(4):
            rows = ["".join(col) for col in zip(*rows[::-1])]  # rotate
            variants.add(normalized(_cells("/".join(rows))))
            variants.add(normalized(_cells("/".join(r[::-1] for r in rows))))  # mirror
        assert variants <= finals, shape.name
    # the 6-shape has no symmetry: 8 orientations, 6 of them in the seed's method
    assert sum(1 for o in orientations(COMPLETE) if o.count == 6) == 8
    seed_sixes = {normalized(o.cells) for o in orientations(FAITHFUL) if o.count == 6}
    assert len(seed_sixes) == 6


def _one_swap_setups():
    """Every position one swap (a tile into an empty neighbour) before an elimination of
    one of the seed's shapes, with no three in a row yet: enumerated directly."""
    shapes = {normalized(o.cells) for o in orientations(COMPLETE)}
    for shape in shapes:
        cells = set(shape)
        for r, c in cells:
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                src = (r + dr, c + dc)
                if src in cells:
                    continue
                before = (cells - {(r, c)}) | {src}
                if _runs_of_three(before):
                    continue
                both = before | cells
                r0 = min(a for a, _ in both)
                c0 = min(b for _, b in both)
                h = max(a for a, _ in both) - r0 + 1
                w = max(b for _, b in both) - c0 + 1

                def pattern(s):
                    return "/".join("".join("1" if (r0 + i, c0 + j) in s else "0" for j in range(w)) for i in range(h))

                yield pattern(before), pattern(cells), len(cells)


def test_every_one_swap_elimination_of_the_seed_shapes_is_a_plan(committed):
    plans = {(p.target, p.final): p for p in committed}
    setups = list(_one_swap_setups())
    for target, final, count in setups:
        plan = plans.get((target, final))
        assert plan is not None, (target, final)
        assert plan.count == count and len(plan.steps) == 1
    assert len({(t, f) for t, f, _ in setups}) == sum(1 for p in committed if len(p.steps) == 1)


def test_true_step_counts_are_kept_and_windows_are_not_framed(committed):
    steps = {len(p.steps) for p in committed}
    assert {1, 2, 3, 4, 5, 6} <= steps  # set up from 1-4 swaps, but often longer without three in a row
    assert max(max(p.height, p.width) for p in committed) > 6  # the seed's 6x6 frame would cut these
    # a target may lead to several eliminations: each is its own plan
    targets = [p.target for p in committed]
    assert len(set(targets)) < len(targets)


# -- the seed's printed method --------------------------------------------------------------


def test_faithful_build_reproduces_the_seeds_printed_plans_and_defects(faithful, committed):
    pairs = {(p.target, p.final): p for p in faithful}
    for target, final in SEED_SEVEN_PLANS:
        assert (target, final) in pairs and len(pairs[(target, final)].steps) == 1
        assert (target, final) in {(p.target, p.final) for p in committed}
    assert faithful.variant == "faithful" and list(verify_library(faithful)) == []
    # one final per target, every window inside the 6x6 frame, fewer plans than complete
    assert len({p.target for p in faithful}) == len(faithful)
    assert max(max(p.height, p.width) for p in faithful) <= 6
    assert len(faithful) < len(committed)
    # its own paths are true shortest paths too: some take 5 or 6 swaps
    assert any(len(p.steps) >= 5 for p in faithful)


def test_blocked_targets_are_a_seed_defect(seed_method, rebuilt):
    _, seed = seed_method
    _, complete = rebuilt
    assert seed.claimed_then_failed > 0 and seed.claimed_then_failed == seed.clipped + seed.no_path
    assert complete.claimed_then_failed == complete.clipped == complete.no_path == complete.abandoned == 0


# -- format, errors, verify, stats -----------------------------------------------------------


def _library(plans: list[Plan]) -> PlanLibrary:
    return PlanLibrary.from_plans(library_header(plans, generator="test", variant="test"), plans)


GOOD = Plan(3, "1101", "1110", (PlanStep(0, 3, "Left"),))


@pytest.mark.parametrize(
    "plan, problem",
    [
        (Plan(3, "1101", "0111", (PlanStep(0, 3, "Left"),)), "does not produce the final"),
        (Plan(3, "1101", "1110", (PlanStep(0, 3, "Right"),)), "leaves the window"),
        (Plan(3, "1101", "1110", (PlanStep(0, 2, "Left"),)), "does not move a tile"),
        (Plan(3, "111/000", "000/111", (PlanStep(0, 0, "Down"),)), "already lines up three"),
        (Plan(4, "11010", "11100", (PlanStep(0, 3, "Left"),)), "count 4"),
        # 2 swaps where the first already lines up three (it would clear too early)
        (Plan(4, "1101/0010", "1111/0000", (PlanStep(0, 3, "Left"), PlanStep(1, 2, "Up"))), "before the last"),
        (Plan(4, "1101/0001", "1110/0001", (PlanStep(0, 3, "Left"),)), "one elimination"),
    ],
)
def test_verify_names_what_is_wrong_with_a_plan(plan, problem):
    assert verify_plan(GOOD) is None
    found = verify_plan(plan)
    assert found is not None and problem in found


def test_round_trip_and_atomic_save(tmp_path):
    lib = _library([GOOD, Plan(5, "0010/1101/0010", "1110/0010/0010", (PlanStep(1, 3, "Up"), PlanStep(0, 3, "Left")))])
    path = tmp_path / "sub" / "lib.json"
    save_library(lib, path)
    again = load_library(path)
    assert list(again) == list(lib) and again.header == lib.header and again.counts() == {"3": {"1": 1}, "5": {"2": 1}}
    assert path.read_text().count("\n") == len(lib) + 2  # header line, one line per plan, closing line


def test_verify_command_fails_with_the_broken_plan(tmp_path):
    broken = Plan(3, "1101", "0111", (PlanStep(0, 3, "Left"),))
    path = tmp_path / "bad.json"
    save_library(_library([GOOD, broken]), path)
    result = runner.invoke(app, ["plans", "verify", "--library", str(path)])
    assert result.exit_code != 0
    assert "plan 2" in result.output and "1101 -> 0111" in result.output
    # a header that disagrees with the plans is caught too
    data = json.loads(path.read_text())
    data["total"] = 7
    path.write_text(json.dumps(data))
    assert any("header says 7" in f.problem for f in verify_library(load_library(path)))


@pytest.mark.parametrize(
    "content, fragment",
    [
        (None, "no plan library"),
        ("{not json", "not valid JSON"),
        ('{"format": 99, "plans": []}', "format 99"),
        ('{"format": 1, "fields": ["a"], "plans": []}', "does not hold plans"),
    ],
)
def test_bad_library_files_are_clear_errors(tmp_path, content, fragment):
    path = tmp_path / "lib.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(PlanLibraryError, match=fragment) as info:
        load_library(path)
    assert "agent plans build" in info.value.hint


def test_cli_reports_a_missing_library_without_a_traceback(tmp_path):
    result = runner.invoke(app, ["plans", "verify", "--library", str(tmp_path / "none.json")])
    assert result.exit_code == 1
    assert isinstance(result.exception, PlanLibraryError)  # main() prints it as error/fix


def test_stats_counts_the_library_and_the_seed_method(committed, faithful):
    result = runner.invoke(app, ["plans", "stats", "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert stats["library"]["total"] == len(committed) and stats["library"]["counts"] == committed.counts()
    assert stats["faithful"]["total"] == len(faithful)
    assert set(stats["library"]["counts"]) == {"3", "4", "5", "6", "7"}
    assert stats["seed_reported"] == 20036
